// A test's process tree: bash running `script` under the name `argv0` (what a process's parent is called
// matters to some checks), its children read from the kernel, and the whole tree ended when the test ends.
import { spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';

/** The children of the bash started for `script`, as /proc lists them now; none once it is gone. */
export function parentWithChildren(t: TestContext, argv0: string, script: string, options: Pick<SpawnOptions, 'cwd' | 'env'> = {}): () => number[] {
  const parent = spawn('bash', ['-c', script], { ...options, argv0, stdio: 'ignore' });
  const gone = new Promise((resolve) => parent.once('exit', resolve));
  const children = (): number[] => {
    try {
      return readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    } catch {
      return []; // the parent is gone
    }
  };
  t.after(async () => {
    for (const pid of children()) process.kill(pid, 'SIGKILL'); // the parent's wait then returns
    parent.kill('SIGKILL');
    await gone;
  });
  return children;
}
