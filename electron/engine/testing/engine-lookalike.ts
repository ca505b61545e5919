// A process of another user whose command line is a gpushare engine's (`node …/gpushare.js serve`):
// bash's exec -a names a sleeping shell "node"; no file of the checkout is needed, only /proc is read.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface EngineLookalike {
  pid: number;
  /** The user name of its uid, as /etc/passwd has it. */
  user: string;
  kill(): Promise<void>;
}

/** Needs root (setpriv to another uid). Resolves once /proc shows the engine's command line. */
export async function startEngineLookalike(uid = 65534, command = 'serve'): Promise<EngineLookalike> {
  const child = spawn('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', 'bash', '-c', `exec -a node /bin/sh -c "sleep 120; :" /opt/gpushare/electron/cli/gpushare.js ${command}`], { stdio: 'ignore', detached: true }); // its own process group: its sleep goes with it
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  for (let i = 0; i < 250; i++) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      break; // it exited: setpriv or bash failed
    }
    if (cmdline.startsWith('node\0')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const user = readFileSync('/etc/passwd', 'utf8').split('\n').find((line) => line.split(':')[2] === String(uid))?.split(':')[0] ?? String(uid);
  return {
    pid,
    user,
    kill: async () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    },
  };
}
