// A process's session id as the kernel holds it (/proc/PID/stat's sixth field): the tests' stand-in for slurmd's word
// on which processes are a Slurm job's.
import { readFileSync } from 'node:fs';

/** The session of `pid`; null once it is gone. */
export function sessionOf(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')[3]);
  } catch {
    return null;
  }
}
