// libgpushare-preload.so where CUDA is never used: loaded into every process of a box (/etc/ld.so.preload),
// it must do nothing a program could notice. Each check runs the same program with and without the library
// and compares what the program shows of itself (threads, fds, environment, signal handlers, umask, stderr)
// and every system call it makes (ptrace, native/preload/test/preload_inert.c), the loader's own mapping of
// the library left out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { preloadLibraryPath } from './launch-gate.js';
import { ensurePreloadBuilt, preloadBuildDir } from './testing/launch-gate-sim.js';

const inert = join(preloadBuildDir(), 'preload_inert');
const skip = process.platform !== 'linux' ? 'Linux only' : !ensurePreloadBuilt() ? 'the preload library is not built (npm run build:native)' : false;
const work = mkdtempSync(join(tmpdir(), 'gpushare-inert-'));
after(() => rmSync(work, { recursive: true, force: true }));

// nothing of gpushare's in the environment but the debug switch: even asked to talk, the library stays silent
const env = (): NodeJS.ProcessEnv => {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GPUSHARE_') && k !== 'LD_PRELOAD'));
  return { ...clean, GPUSHARE_PRELOAD_DEBUG: '1', PYTHONHASHSEED: '0', HOME: work, TMPDIR: work };
};

interface Ran { status: number | null; stdout: string; stderr: string }
function run(argv: string[], preload: boolean): Ran {
  const r = spawnSync(argv[0], argv.slice(1), { env: { ...env(), ...(preload ? { LD_PRELOAD: preloadLibraryPath() } : {}) }, cwd: work, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Each process's system calls, in the order of creation of the processes. */
function traced(argv: string[], preload: boolean): { calls: string[][]; ran: Ran } {
  const out = join(work, `trace-${preload ? 'with' : 'without'}.txt`);
  const ran = run([inert, 'trace', '--out', out, ...(preload ? ['--preload', preloadLibraryPath()] : []), '--', ...argv], false);
  const calls: string[][] = [];
  for (const line of readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
    const [index, ...rest] = line.split(' ');
    (calls[Number(index)] ??= []).push(rest.join(' '));
  }
  rmSync(out);
  return { calls, ran };
}

/**
 * The calls made with the library that the process does not make without it. Left out: per program image
 * (per execve), what the loader does for one more object besides mapping it (the tracer leaves that out):
 * write-protect its relocations (mprotect) and, where its own bookkeeping runs out of room, map a page (mmap).
 */
function extraCalls(without: string[], withLib: string[]): string[] {
  const images = withLib.filter((c) => c.startsWith('execve')).length;
  const loaderBudget = new Map([['mprotect', images], ['mmap', images]]);
  const extra: string[] = [];
  let i = 0;
  for (const call of withLib) {
    if (i < without.length && without[i] === call) i++;
    else if ((loaderBudget.get(call) ?? 0) > 0) loaderBudget.set(call, loaderBudget.get(call)! - 1);
    else extra.push(call);
  }
  return [...extra, ...without.slice(i).map((c) => `(missing) ${c}`)];
}

const PROGRAMS: Record<string, string[]> = {
  '/bin/true': ['/bin/true'],
  'python3 -c pass': ['/usr/bin/python3', '-c', 'pass'],
  'bash with a pipe and a subshell (forks, execs)': ['/bin/bash', '-c', 'echo hi | cat; (exit 3); echo $?'],
  'the probe itself (forks a child)': [inert, 'report'],
};

describe('the preload library in a process that never uses CUDA', { skip }, () => {
  test('the process sees the same threads, fds, environment, signal handlers and umask, in it and in a forked child', () => {
    const without = run([inert, 'report'], false);
    const withLib = run([inert, 'report'], true);
    assert.equal(without.status, 0, without.stderr);
    assert.match(without.stdout, /^parent threads 1$/m);
    assert.match(without.stdout, /^child threads 1$/m);
    assert.equal(withLib.stdout, without.stdout);
    assert.equal(withLib.status, 0);
  });

  for (const [name, argv] of Object.entries(PROGRAMS)) {
    test(`${name}: no system call of its own (no file, socket, thread, signal handler, write), nothing on stderr, same output`, () => {
      const without = traced(argv, false);
      const withLib = traced(argv, true);
      assert.deepEqual(withLib.ran, without.ran, 'exit status, stdout and stderr');
      assert.equal(withLib.calls.length, without.calls.length, 'as many processes');
      assert.ok(without.calls[0].length > 10, 'the tracer saw the program');
      assert.ok(withLib.calls.flat().some((c) => c.startsWith('execve')));
      withLib.calls.forEach((calls, p) => assert.deepEqual(extraCalls(without.calls[p], calls), [], `process ${p}: calls the library made`));
    });
  }

  test('a forked child starts without the library having written a page of it (no fork handler runs)', () => {
    const faults = (preload: boolean): number => Math.min(...[1, 2, 3].map(() => Number(run([inert, 'forkfaults'], preload).stdout)));
    const without = faults(false);
    const withLib = faults(true);
    assert.ok(without > 0);
    // fork handlers that reset the quota's maps wrote ~100 pages in every child (seen: 117 against 17)
    assert.ok(withLib <= without + 4, `page faults in a new child: ${withLib} with the library, ${without} without`);
  });

  test('the tracer sees a call the library would make (it is not blind to destructors)', () => {
    // the same comparison, on a library that makes one call at exit: our own check must catch it
    const leaky = join(work, 'leaky.so');
    const src = join(work, 'leaky.c');
    spawnSync('sh', ['-c', `printf '#include <unistd.h>\\n__attribute__((destructor)) static void f(void) { (void)getppid(); }\\n' > ${src} && gcc -shared -fPIC -o ${leaky} ${src}`]);
    const without = traced(['/bin/true'], false).calls[0];
    const out = join(work, 'trace-leaky.txt');
    spawnSync(inert, ['trace', '--out', out, '--preload', leaky, '--', '/bin/true'], { env: env() });
    const calls = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ').slice(1).join(' '));
    rmSync(out);
    assert.equal(extraCalls(without, calls).length, 1);
  });

  test('nothing left in the working directory, HOME or TMPDIR', () => {
    assert.deepEqual(readdirSync(work).filter((f) => !f.startsWith('leaky')), []);
  });
});
