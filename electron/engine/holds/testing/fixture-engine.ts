// A stand-in engine for tests: a child node process that owns a Freezer (and parks through
// a DriverCheckpointer), driven by JSON lines on stdin, so a test can SIGKILL or stop it.
//   node fixture-engine.js '<options JSON>'   (FixtureEngineOptions)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { DriverCheckpointer } from '../driver-checkpointer.js';
import { Freezer, type FreezerOptions } from '../freezer.js';
import { ProcessControl } from '../process-control.js';

export type FixtureEngineOptions = Omit<FreezerOptions, 'control' | 'onGuardianReleased'>;

type Request =
  | { op: 'suspend'; pid: number; jobId: string; group?: boolean }
  | { op: 'resume'; pid: number }
  | { op: 'park'; pid: number; jobId: string }
  | { op: 'hang'; until: string }
  | { op: 'guardian' };

export interface FixtureEngine {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Ask the engine to act; resolves with its answer, rejects with its error. */
  call(request: Request): Promise<unknown>;
  /** Resolves with the next event of this kind (e.g. "released"). */
  next(event: string): Promise<Record<string, unknown>>;
}

/** Start the stand-in engine; it is SIGKILLed after the test. */
export async function startFixtureEngine(t: TestContext, options: FixtureEngineOptions, env: NodeJS.ProcessEnv = process.env): Promise<FixtureEngine> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify(options)], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => {
    child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const seen: Array<Record<string, unknown>> = [];
  const waiters: Array<{ event: string; resolve: (e: Record<string, unknown>) => void; reject: (e: Error) => void }> = [];
  child.once('exit', (code, signal) => {
    const why = new Error(`fixture engine exited (${code ?? signal}): ${stderr.trim()}`);
    for (const p of pending.values()) p.reject(why);
    for (const w of waiters.splice(0)) w.reject(why);
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.id === 'number') {
      const p = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) p?.resolve(message.result);
      else p?.reject(new Error(String(message.error)));
      return;
    }
    const w = waiters.findIndex((x) => x.event === message.event);
    if (w >= 0) waiters.splice(w, 1)[0].resolve(message);
    else seen.push(message);
  });
  const next = (event: string): Promise<Record<string, unknown>> => {
    const i = seen.findIndex((m) => m.event === event);
    if (i >= 0) return Promise.resolve(seen.splice(i, 1)[0]);
    return new Promise((resolve, reject) => waiters.push({ event, resolve, reject }));
  };
  let nextId = 1;
  const call = (request: Request): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.stdin!.write(JSON.stringify({ id, ...request }) + '\n');
    });
  await next('ready');
  return { child, pid: child.pid!, call, next };
}

function runFixtureEngine(optionsJson: string): void {
  const options = JSON.parse(optionsJson) as FixtureEngineOptions;
  const say = (message: object) => process.stdout.write(JSON.stringify(message) + '\n');
  const freezer = new Freezer({ ...options, control: new ProcessControl(), onGuardianReleased: (entries) => say({ event: 'released', entries }) });
  const checkpointer = options.cudaLibraryPath ? DriverCheckpointer.open({ libraryPath: options.cudaLibraryPath }) : null;
  const act = async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'suspend':
        return freezer.suspend(request.pid, request.jobId, { group: request.group });
      case 'resume':
        return freezer.resume(request.pid);
      case 'park':
        if (!checkpointer) throw new Error('no cudaLibraryPath was given: cannot park');
        freezer.noteParked(request.pid, request.jobId); // on disk before the checkpoint starts
        await checkpointer.lock(request.pid);
        await checkpointer.checkpoint(request.pid);
        return checkpointer.state(request.pid);
      case 'hang': // a hung engine: its event loop busy until the file appears, so no heartbeat either
        while (!existsSync(request.until)) {
          // spin
        }
        return null;
      case 'guardian':
        return freezer.guardianPid;
    }
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    const request = JSON.parse(line) as Request & { id: number };
    act(request).then(
      (result) => say({ id: request.id, ok: true, result: result ?? null }),
      (error: unknown) => say({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  process.stdin.once('end', () => {
    freezer.stop();
    process.exit(0);
  });
  say({ event: 'ready' });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runFixtureEngine(process.argv[2] ?? '{}');
