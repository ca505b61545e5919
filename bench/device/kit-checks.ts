// The device kit's checks, each a whole story that a real GPU either confirms or refutes. A check that
// needs what the machine lacks (PyTorch with CUDA, nvidia-smi) says "skipped: why"; every figure it
// measured goes into its result, with what it was compared against.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openGpuBackend, type GpuBackend } from '../../electron/engine/gpu/open-backend.js';
import { openCudaCheckpoint } from '../../electron/engine/gpu/cuda-checkpoint.js';
import { LaunchGate, preloadLibraryPath } from '../../electron/engine/gate/launch-gate.js';
import { checksDir, KitEngine, nativeBuild, needsTorch, r1, run, scratch, sleep, smiProcesses, startPython, verdict, waitForFile, type KitCheck, type KitContext } from './kit-rig.js';
import { gate } from './kit-gate.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const signed = (v: number): string => `${v >= 0 ? '+' : '−'}${r1(Math.abs(v))}`;


async function openBackend(context: KitContext, dir: string): Promise<GpuBackend> {
  return openGpuBackend(context.simulate ? { simulate: 'a100-40gb', simulatedState: { dir } } : {});
}

/** Per GPU: what the addon reads against nvidia-smi at the same moment; then a PyTorch process holding 3 GiB. */
const seeing: KitCheck = {
  name: 'seeing',
  title: 'The NVML addon against nvidia-smi: GPUs, a PyTorch process, its SM %, GPM',
  boundSeconds: 75,
  async run(context) {
    const dir = scratch('seeing');
    const backend = await openBackend(context, dir);
    const lines: string[] = [];
    const problems: string[] = [];
    const figures: Record<string, unknown> = {};
    try {
      const system = backend.nvml.system();
      const devices = Array.from({ length: backend.nvml.deviceCount() }, (_, i) => backend.nvml.describeDevice(i));
      figures.system = system;
      figures.devices = devices.map((d) => ({ index: d.index, name: d.name, memoryTotal: d.memoryTotal, smCount: d.smCount, migMode: d.migMode, errors: d.errors }));
      lines.push(`addon: ${devices.length} GPU(s): ${devices.map((d) => `${d.name}, ${(d.memoryTotal / GiB).toFixed(1)} GiB, ${d.smCount ?? '?'} SMs`).join('; ')}`);
      if (context.machine.smiProblem) {
        const samples = backend.nvml.sampleAll();
        figures.addonSample = samples.map((s) => ({ index: s.index, memory: s.memory, utilization: s.utilization, temperatureC: s.temperatureC, powerMilliwatts: s.powerMilliwatts, processes: s.processes.length }));
        return { status: 'skipped', reason: `${context.machine.smiProblem} (the addon opened and sampled ${samples.length} GPU(s))`, lines, figures };
      }
      figures.idle = await compareWithSmi(backend, problems);
      const torch = needsTorch(context);
      if (torch) return { status: problems.length ? 'failed' : 'skipped', reason: problems.join('; ') || `GPUs agree; the process part ${torch.reason}`, lines, figures };

      const ready = join(dir, 'hold-ready.json');
      const hold = startPython(context, 'hold.py', ['3', '20', ready]);
      const held = await waitForFile(ready, 60_000, () => hold.exitCode === null);
      if (!held) return { status: 'failed', reason: `the PyTorch process holding 3 GiB did not start: ${hold.log().slice(-600)}`, lines, figures };
      const { pid } = JSON.parse(held) as { pid: number };
      await sleep(1500); // let NVML gather utilization samples while it computes
      const looks: Array<{ addonMiB: number | null; smiMiB: number | null; smUtil: number | null }> = [];
      for (let i = 0; i < 4; i++) {
        const [samples, smi] = [backend.nvml.sampleAll(), await smiProcesses()];
        const listed = samples.flatMap((s) => s.processes).find((p) => p.pid === pid);
        const util = samples.flatMap((s) => s.processUtilization).filter((u) => u.pid === pid);
        looks.push({
          addonMiB: listed?.usedMemory != null ? listed.usedMemory / MiB : null,
          smiMiB: smi.get(pid) ?? null,
          smUtil: util.length ? Math.max(...util.map((u) => u.smUtil)) : null,
        });
        await sleep(800);
      }
      figures.process = { pid, looks };
      const last = looks[looks.length - 1];
      if (last.addonMiB === null) problems.push(`the addon did not list pid ${pid} (nvidia-smi: ${last.smiMiB ?? 'not listed either'} MiB)`);
      else if (last.smiMiB === null) problems.push(`nvidia-smi did not list pid ${pid}; the addon saw ${r1(last.addonMiB)} MiB`);
      else if (Math.abs(last.addonMiB - last.smiMiB) > 1) problems.push(`pid ${pid}: addon ${r1(last.addonMiB)} MiB, nvidia-smi ${last.smiMiB} MiB`);
      const busiest = Math.max(...looks.map((l) => l.smUtil ?? -1));
      if (busiest <= 0) problems.push(`no SM % for pid ${pid} while it computed (readings: ${looks.map((l) => l.smUtil).join(', ')})`);
      lines.push(`PyTorch pid ${pid}: addon ${last.addonMiB === null ? '—' : r1(last.addonMiB)} MiB, nvidia-smi ${last.smiMiB ?? '—'} MiB; SM % while computing up to ${busiest}`);
      hold.kill('SIGKILL');

      const migOn = backend.nvml.sampleAll().some((s) => s.migMode?.current);
      figures.gpm = migOn ? 'MIG slices present: see migDevices in the sample' : 'not read: the addon reads GPM SM activity per MIG slice, and no GPU is in MIG mode (the kit never changes the MIG mode)';
      lines.push(`GPM: ${figures.gpm}`);
      return verdict(problems, lines, figures);
    } finally {
      backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** One reading of the addon and of nvidia-smi per GPU, side by side, with the tolerance each is held to. */
async function compareWithSmi(backend: GpuBackend, problems: string[]): Promise<unknown[]> {
  const smi = await run('nvidia-smi', ['--query-gpu=index,memory.used,memory.total,memory.reserved,utilization.gpu,temperature.gpu,power.draw', '--format=csv,noheader,nounits'], { timeoutMs: 30_000 });
  const samples = backend.nvml.sampleAll();
  const rows = smi.stdout.trim().split('\n').map((line) => line.split(',').map((s) => Number(s.trim())));
  return rows.map(([index, used, total, reserved, util, temp, power]) => {
    const s = samples.find((x) => x.index === index);
    const addon = {
      usedMiB: s?.memory ? s.memory.used / MiB : null,
      totalMiB: s?.memory ? s.memory.total / MiB : null,
      reservedMiB: s?.memory?.reserved != null ? s.memory.reserved / MiB : null,
      util: s?.utilization?.gpu ?? null,
      temperatureC: s?.temperatureC ?? null,
      powerW: s?.powerMilliwatts != null ? s.powerMilliwatts / 1000 : null,
    };
    const within = (what: string, a: number | null, b: number, tolerance: number): void => {
      if (a === null || !Number.isFinite(b) || Math.abs(a - b) > tolerance) problems.push(`GPU ${index} ${what}: addon ${a === null ? '—' : r1(a)}, nvidia-smi ${b} (tolerance ${tolerance})`);
    };
    within('memory used MiB', addon.usedMiB, used, 1);
    within('memory total MiB', addon.totalMiB, total, 1);
    within('utilization %', addon.util, util, 10); // each is an average over its own recent window
    within('temperature C', addon.temperatureC, temp, 2);
    within('power W', addon.powerW, power, Math.max(15, power * 0.1)); // read a moment apart
    return { index, nvidiaSmi: { usedMiB: used, totalMiB: total, reservedMiB: reserved, util, temperatureC: temp, powerW: power }, addon };
  });
}

/** `gpushare run --mem 2G`: one PyTorch process, then four of one job, are refused past 2 GiB. */
const quota: KitCheck = {
  name: 'quota',
  title: 'The hard memory quota under PyTorch, through gpushare run --mem 2G',
  boundSeconds: 120,
  async run(context) {
    const dir = scratch('quota');
    const engine = new KitEngine(context);
    const figures: Record<string, unknown> = {};
    const lines: string[] = [];
    const problems: string[] = [];
    try {
      await engine.start();
      const trivial = await engine.cli(['run', '--wait', '5', '--', '/bin/true']);
      figures.trivialRun = (trivial.stdout + trivial.stderr).trim();
      lines.push(`engine answers; gpushare run -- /bin/true: ${String(figures.trivialRun).split('\n')[0]}`);
      if (trivial.code !== 0 && !/finished|exit code 0|running/.test(String(figures.trivialRun))) problems.push(`gpushare run -- /bin/true: ${figures.trivialRun}`);
      const torch = needsTorch(context);
      if (torch) return { status: problems.length ? 'failed' : 'skipped', reason: problems.join('; ') || torch.reason, lines, figures };

      const python = context.machine.python!;
      const script = join(checksDir, 'quota.py');
      const singleOut = join(dir, 'single.json');
      const single = await engine.cli(['run', '--mem', '2G', '--wait', '2', '--', python, script, 'single', singleOut]);
      figures.singleRun = (single.stdout + single.stderr).trim();
      const singleText = await waitForFile(singleOut, 60_000);
      if (!singleText) problems.push(`the single-process job wrote no result (${figures.singleRun})`);
      else {
        const s = JSON.parse(singleText) as { oomRaised: boolean; error: string | null; heldBytes: number; memGetInfo: { free: number; total: number } };
        figures.single = s;
        lines.push(`one process: refused at ${(s.heldBytes / GiB).toFixed(3)} GiB held (${s.error ?? 'never refused'}); cuMemGetInfo total ${(s.memGetInfo.total / GiB).toFixed(2)} GiB`);
        if (!s.oomRaised) problems.push(`one process: no torch.cuda.OutOfMemoryError (${s.error ?? 'never refused'})`);
        if (s.heldBytes > 2 * GiB) problems.push(`one process held ${(s.heldBytes / GiB).toFixed(3)} GiB under a 2 GiB quota`);
      }

      const multiOut = join(dir, 'multi.json');
      const multi = await engine.cli(['run', '--mem', '2G', '--wait', '2', '--', python, script, 'multi', '4', multiOut]);
      figures.multiRun = (multi.stdout + multi.stderr).trim();
      const holding = await waitForFile(`${multiOut}.holding`, 90_000);
      if (holding) figures.smiWhileHolding = Object.fromEntries(await smiProcesses());
      const multiText = await waitForFile(multiOut, 60_000);
      if (!multiText) problems.push(`the four-process job wrote no result (${figures.multiRun})`);
      else {
        const m = JSON.parse(multiText) as { heldBytesEach: number[]; heldBytesTogether: number; allRefusedWithOom: boolean; pids: number[] };
        figures.multi = m;
        lines.push(`four processes of one job: ${m.heldBytesEach.map((b) => (b / GiB).toFixed(2)).join(' + ')} = ${(m.heldBytesTogether / GiB).toFixed(3)} GiB when all were refused`);
        if (m.heldBytesTogether > 2 * GiB) problems.push(`four processes held ${(m.heldBytesTogether / GiB).toFixed(3)} GiB together under a 2 GiB quota`);
        if (!m.allRefusedWithOom) problems.push('not every process was refused with torch.cuda.OutOfMemoryError');
      }
      return verdict(problems, lines, figures);
    } catch (error) {
      return { status: 'failed', reason: `${(error as Error).message}\n${engine.output.slice(-1500)}`, lines, figures };
    } finally {
      await engine.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** torch.compile(mode="reduce-overhead") as best-effort beside a high job: it runs, and its graphs replay. */
const capture: KitCheck = {
  name: 'capture',
  title: 'CUDA graphs (torch.compile reduce-overhead, and by hand) as best-effort beside a high job',
  boundSeconds: 150,
  async run(context) {
    const torch = needsTorch(context);
    if (torch) return torch;
    const dir = scratch('capture');
    const launchGate = LaunchGate.create({ dir, name: 'kit-capture', windowPolicy: 'learned', activeWindowMs: 5, heartbeatIntervalMs: 200 });
    try {
      const high = launchGate.allocateSlot({ gpu: 0, priority: 'high' }).env;
      const low = launchGate.allocateSlot({ gpu: 0, priority: 'best-effort' }).env;
      const go = join(dir, 'go');
      writeFileSync(go, `${Date.now() / 1000}\n`);
      const busy = startPython(context, 'infer.py', ['200', '0.5', '100', join(dir, 'ir'), go, join(dir, 'io')], high);
      await waitForFile(join(dir, 'ir'), 60_000, () => busy.exitCode === null);
      const out = join(dir, 'capture.json');
      const job = startPython(context, 'capture.py', ['5', out], low);
      const text = await waitForFile(out, 130_000, () => job.exitCode === null);
      busy.kill('SIGKILL');
      if (!text) return { status: 'failed', reason: `capture.py wrote no result: ${job.log().slice(-1200)}`, figures: {} };
      const result = JSON.parse(text) as { compiledMatchesEager: boolean; manualGraphMatchesEager: boolean; compiledCalls: number; compileSeconds: number; inductorCounters: unknown };
      const ok = result.compiledMatchesEager && result.manualGraphMatchesEager && result.compiledCalls > 0;
      const lines = [
        `torch.compile reduce-overhead: compiled in ${r1(result.compileSeconds)} s, ${result.compiledCalls} calls in 5 s beside the high job, matches eager: ${result.compiledMatchesEager}; counters ${JSON.stringify(result.inductorCounters)}`,
        `graph captured by hand: 50 replays, matches eager: ${result.manualGraphMatchesEager}`,
      ];
      return { status: ok ? 'passed' : 'failed', reason: ok ? undefined : 'a graph result differs from eager, or nothing ran', lines, figures: result as unknown as Record<string, unknown> };
    } finally {
      launchGate.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** A PyTorch process holding 4 GiB, checkpointed to host memory and restored through the driver's calls. */
const park: KitCheck = {
  name: 'park',
  title: 'Park: cuCheckpointProcess* on a PyTorch process holding 4 GiB',
  boundSeconds: 120,
  async run(context) {
    const torch = needsTorch(context);
    if (torch) return torch;
    const checkpoint = openCudaCheckpoint();
    const unsupported = checkpoint.supported();
    if (unsupported) return { status: 'skipped', reason: `${unsupported}`, figures: {} };
    const dir = scratch('park');
    const ready = join(dir, 'ready');
    const go = join(dir, 'go');
    const out = join(dir, 'out');
    const holder = startPython(context, 'park.py', ['4', ready, go, out]);
    const figures: Record<string, unknown> = {};
    try {
      const text = await waitForFile(ready, 60_000, () => holder.exitCode === null);
      if (!text) return { status: 'failed', reason: `park.py did not start: ${holder.log().slice(-800)}`, figures };
      const { pid } = JSON.parse(text) as { pid: number };
      const before = (await smiProcesses()).get(pid) ?? null;
      const t0 = performance.now();
      await checkpoint.lock(pid, 10_000);
      const t1 = performance.now();
      await checkpoint.checkpoint(pid);
      const t2 = performance.now();
      const state = checkpoint.state(pid);
      const parked = (await smiProcesses()).get(pid) ?? 0;
      const t3 = performance.now();
      await checkpoint.restore(pid);
      const t4 = performance.now();
      await checkpoint.unlock(pid);
      const t5 = performance.now();
      const restored = (await smiProcesses()).get(pid) ?? null;
      writeFileSync(go, `${Date.now() / 1000}\n`);
      const compared = await waitForFile(out, 60_000, () => holder.exitCode === null);
      const equal = compared ? (JSON.parse(compared) as { contentsEqual: boolean }).contentsEqual : null;
      Object.assign(figures, { pid, smiMiB: { before, parked, restored }, stateWhenParked: state, ms: { lock: r1(t1 - t0), checkpoint: r1(t2 - t1), restore: r1(t4 - t3), unlock: r1(t5 - t4) }, contentsEqual: equal });
      const lines = [
        `pid ${pid}: nvidia-smi ${before} MiB → ${parked} MiB parked (${state}) → ${restored} MiB restored`,
        `lock ${r1(t1 - t0)} ms, checkpoint ${r1(t2 - t1)} ms, restore ${r1(t4 - t3)} ms, unlock ${r1(t5 - t4)} ms; contents equal after restore: ${equal}`,
      ];
      const problems: string[] = [];
      if (state !== 'checkpointed') problems.push(`state after checkpoint: ${state}`);
      if (before !== null && parked > before - 4000) problems.push(`nvidia-smi still saw ${parked} MiB of ${before} while parked`);
      if (equal !== true) problems.push(`contents after restore: ${equal === null ? 'not compared' : 'differ'}`);
      return verdict(problems, lines, figures);
    } catch (error) {
      return { status: 'failed', reason: `${(error as Error).message}`, figures };
    } finally {
      holder.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** ns per cuLaunchKernel: no preload library, the library with no gate, a high job's slot beside an idle best-effort slot. */
const launchCost: KitCheck = {
  name: 'launch-cost',
  title: 'What the preload library and the gate cost per kernel launch',
  boundSeconds: 60,
  async run(context) {
    const dir = scratch('launch');
    const backend = context.simulate ? await openBackend(context, dir) : null;
    const driverEnv = backend?.simulated?.env ?? {};
    const size = context.simulate ? ['2000', '3'] : ['20000', '7']; // the simulated GPU runs each kernel on a CPU thread
    const bench = async (env: NodeJS.ProcessEnv): Promise<{ nsPerLaunchMedian: number; nsPerKernelWithSyncMedian: number } | string> => {
      const ran = await run(join(nativeBuild('preload'), 'launch_bench'), size, { env: { ...process.env, ...driverEnv, ...env }, timeoutMs: 30_000 });
      try {
        const parsed = JSON.parse(ran.stdout.trim().split('\n').pop() ?? '');
        return parsed.error ? String(parsed.error) : parsed;
      } catch {
        return `launch_bench: ${(ran.stderr || ran.stdout).trim().slice(0, 300) || `exit ${ran.code}`}`;
      }
    };
    const launchGate = LaunchGate.create({ dir, name: 'kit-launch', windowPolicy: 'learned', activeWindowMs: 5, heartbeatIntervalMs: 200 });
    try {
      launchGate.allocateSlot({ gpu: 0, priority: 'best-effort' });
      const configs: Record<string, NodeJS.ProcessEnv> = {
        noPreload: {},
        preloadNoGate: { LD_PRELOAD: preloadLibraryPath() },
        highSlotIdleBestEffort: launchGate.allocateSlot({ gpu: 0, priority: 'high' }).env,
      };
      // three rounds, each configuration once per round: the first run of a cold GPU is slower whichever it is
      const medians: Record<string, number[]> = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
      for (let round = 0; round < 3; round++) {
        for (const [name, env] of Object.entries(configs)) {
          const got = await bench(env);
          if (typeof got === 'string') return { status: 'failed', reason: `${name}: ${got}`, figures: { medians } };
          medians[name].push(got.nsPerLaunchMedian);
        }
      }
      const ns = (k: string): number => [...medians[k]].sort((a, b) => a - b)[1];
      const lines = [`ns per launch, median of 3 interleaved rounds (each the median of ${size[1]} × ${size[0]}): no preload ${r1(ns('noPreload'))}, preload ${r1(ns('preloadNoGate'))} (${signed(ns('preloadNoGate') - ns('noPreload'))}), high slot beside an idle best-effort slot ${r1(ns('highSlotIdleBestEffort'))} (${signed(ns('highSlotIdleBestEffort') - ns('noPreload'))})${context.simulate ? ' — on the simulated driver' : ''}`];
      return { status: 'passed', lines, figures: { roundsNsPerLaunchMedian: medians } };
    } finally {
      launchGate.close();
      backend?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** In the order they run: the quick ones that need least first, so a short lease still learns most. */
export const CHECKS: readonly KitCheck[] = [seeing, launchCost, quota, park, capture, gate];
