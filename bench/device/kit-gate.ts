// The device kit's gate check: a high-priority PyTorch inference service beside a best-effort PyTorch
// training loop, under each way gpushare can share one GPU between them.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LaunchGate } from '../../electron/engine/gate/launch-gate.js';
import { checksDir, KitEngine, needsTorch, r1, run, scratch, startPython, waitForFile, type KitCheck } from './kit-rig.js';

/** A high-priority inference loop beside a best-effort training loop: time-slicing, the learned gate (as slots, and
 * through the engine's `gpushare run --priority`), MPS clients with the best-effort one at client priority 1, and
 * MPS clients that the gate also orders. */
export const gate: KitCheck = {
  name: 'gate',
  title: 'High-priority p99 and best-effort throughput: time-slicing, the learned gate, MPS clients',
  boundSeconds: 240,
  async run(context) {
    const torch = needsTorch(context);
    if (torch) return torch;
    const dir = scratch('gate');
    const figures: Record<string, unknown> = {};
    const lines: string[] = [];
    const SECONDS = 8;
    const python = context.machine.python!;
    let serial = 0;
    type Launch = (program: string, args: string[]) => Promise<{ going: () => boolean; log: () => string }>;
    const plain = (env: NodeJS.ProcessEnv): Launch => async (program, args) => {
      const child = startPython(context, program, args, env);
      return { going: () => child.exitCode === null, log: child.log };
    };
    const throughEngine = (engine: KitEngine, priority: 'high' | 'best-effort', mode: 'shared' | 'mps' = 'shared'): Launch => async (program, args) => {
      const ran = await engine.cli(['run', '--priority', priority, '--mode', mode, ...(mode === 'mps' ? ['--mps-share', '100'] : []), '--wait', '1', '--', python, join(checksDir, program), ...args]);
      const said = (ran.stdout + ran.stderr).trim();
      if (!/running|queued/.test(said)) throw new Error(`gpushare run --priority ${priority} --mode ${mode}: ${said}`);
      return { going: () => true, log: () => said };
    };
    const pair = async (label: string, infer: { rate: string; launch: Launch } | null, train: Launch | null): Promise<{ infer?: Record<string, number>; train?: Record<string, number> }> => {
      const n = serial++;
      const go = join(dir, `go-${n}`);
      const started = [];
      if (infer) started.push({ kind: 'infer', ready: join(dir, `ir-${n}`), out: join(dir, `io-${n}`), proc: await infer.launch('infer.py', [infer.rate, '0.5', String(SECONDS), join(dir, `ir-${n}`), go, join(dir, `io-${n}`)]) });
      if (train) started.push({ kind: 'train', ready: join(dir, `tr-${n}`), out: join(dir, `to-${n}`), proc: await train('train.py', [String(SECONDS), join(dir, `tr-${n}`), go, join(dir, `to-${n}`)]) });
      for (const s of started) {
        if (!(await waitForFile(s.ready, 90_000, s.proc.going))) throw new Error(`${label}: ${s.kind} did not start: ${s.proc.log().slice(-800)}`);
      }
      writeFileSync(go, `${Date.now() / 1000 + 0.3}\n`);
      const result: { infer?: Record<string, number>; train?: Record<string, number> } = {};
      for (const s of started) {
        const text = await waitForFile(s.out, (SECONDS + 60) * 1000, s.proc.going);
        if (!text) throw new Error(`${label}: ${s.kind} wrote no result: ${s.proc.log().slice(-800)}`);
        result[s.kind as 'infer' | 'train'] = JSON.parse(text);
      }
      return result;
    };
    try {
      const alone = await pair('inference alone', { rate: 'calibrate', launch: plain({}) }, null);
      const rate = String(alone.infer!.rate);
      const trainAlone = await pair('training alone', null, plain({}));
      figures.alone = { infer: alone.infer, train: trainAlone.train };
      const baseP99 = alone.infer!.p99Ms;
      const baseSteps = trainAlone.train!.steps;
      lines.push(`alone: inference p99 ${r1(baseP99)} ms (service ${alone.infer!.serviceMs.toFixed(2)} ms, ${Number(rate).toFixed(0)} req/s = load 0.5); training ${baseSteps} steps in ${SECONDS} s`);
      const row = (label: string, got: { infer?: Record<string, number>; train?: Record<string, number> }): Record<string, number> => {
        const p99Ratio = got.infer!.p99Ms / baseP99;
        const kept = got.train!.steps / baseSteps / 0.5; // of what a load of 0.5 leaves
        lines.push(`${label.padEnd(30)} p99 ${r1(got.infer!.p99Ms)} ms (${p99Ratio.toFixed(2)}× alone), best-effort kept ${(kept * 100).toFixed(0)} % of 1 − load`);
        return { p99Ms: got.infer!.p99Ms, p99Ratio, p50Ms: got.infer!.p50Ms, bestEffortSteps: got.train!.steps, keptOfIdle: kept };
      };
      figures.timeSlicing = row('time-slicing', await pair('time-slicing', { rate, launch: plain({}) }, plain({})));

      const launchGate = LaunchGate.create({ dir, name: 'kit-gate', windowPolicy: 'learned', activeWindowMs: 5, heartbeatIntervalMs: 200 });
      try {
        const high = launchGate.allocateSlot({ gpu: 0, priority: 'high' }).env;
        const low = launchGate.allocateSlot({ gpu: 0, priority: 'best-effort' }).env;
        figures.learnedGate = row('learned gate (slots)', await pair('learned gate', { rate, launch: plain(high) }, plain(low)));
        const mps = await startMps(dir);
        if (typeof mps === 'string') figures.mps = `not run: ${mps}`;
        else {
          try {
            figures.mps = row('MPS, best-effort priority 1', await pair('MPS', { rate, launch: plain(mps.env) }, plain({ ...mps.env, CUDA_MPS_CLIENT_PRIORITY: '1' })));
            // slots that do not name the MPS daemon: the gate orders the clients as it orders contexts
            figures.mpsAndGate = row('MPS clients + learned gate', await pair('MPS and gate', { rate, launch: plain({ ...high, ...mps.env }) }, plain({ ...low, ...mps.env, CUDA_MPS_CLIENT_PRIORITY: '1' })));
          } finally {
            figures.mpsStop = await mps.stop();
          }
        }
      } finally {
        launchGate.close();
      }

      const engine = new KitEngine(context);
      try {
        await engine.start();
        figures.engineGate = row('gpushare run --priority', await pair('through the engine', { rate, launch: throughEngine(engine, 'high') }, throughEngine(engine, 'best-effort')));
        // the engine's own MPS daemon (nvidia-cuda-mps-control, started by the first --mode mps job), as users run it
        figures.engineMps = row('gpushare run --mode mps', await pair('MPS through the engine', { rate, launch: throughEngine(engine, 'high', 'mps') }, throughEngine(engine, 'best-effort', 'mps')));
        const status = await engine.cli(['mps', 'status']);
        figures.engineMpsStatus = (status.stdout + status.stderr).trim();
      } finally {
        await engine.stop();
        figures.engineMpsDaemonsQuit = engine.quitMpsDaemons; // its daemon outlives the engine for its jobs; the kit leaves none
      }
      return { status: 'passed', lines, figures };
    } catch (error) {
      return { status: 'failed', reason: (error as Error).message, lines, figures };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** An MPS control daemon of the kit's own (pipe and log folders of its own); the compute mode is left as it is. */
async function startMps(dir: string): Promise<string | { env: NodeJS.ProcessEnv; stop: () => Promise<string> }> {
  const env = { ...process.env, CUDA_MPS_PIPE_DIRECTORY: join(dir, 'mps-pipe'), CUDA_MPS_LOG_DIRECTORY: join(dir, 'mps-log') };
  const mode = await run('nvidia-smi', ['--query-gpu=compute_mode', '--format=csv,noheader'], { timeoutMs: 20_000 });
  if (!/Default/i.test(mode.stdout)) return `the compute mode is ${mode.stdout.trim() || 'unknown'}; the kit does not change it`;
  mkdirSync(env.CUDA_MPS_PIPE_DIRECTORY, { recursive: true });
  mkdirSync(env.CUDA_MPS_LOG_DIRECTORY, { recursive: true });
  const started = await run('nvidia-cuda-mps-control', ['-d'], { env, timeoutMs: 20_000 });
  if (started.code !== 0) return `nvidia-cuda-mps-control -d: ${(started.stderr || started.stdout).trim() || `exit ${started.code}`}`;
  return {
    env: { CUDA_MPS_PIPE_DIRECTORY: env.CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY: env.CUDA_MPS_LOG_DIRECTORY },
    stop: () =>
      new Promise<string>((resolve) => {
        const control = spawn('nvidia-cuda-mps-control', [], { env, stdio: ['pipe', 'ignore', 'ignore'] });
        control.stdin.end('quit\n');
        control.on('exit', (code) => resolve(`quit: exit ${code}`));
      }),
  };
}

