// What /proc says about one pid: owner, run state, parent and start time.
// The start time tells a reused pid from the process we meant.
import { readFileSync, statSync } from 'node:fs';

export interface ProcStatus {
  pid: number;
  uid: number;
  ppid: number;
  /** One letter: R running, S sleeping, T stopped, Z zombie, … */
  state: string;
  /** Field 22 of /proc/PID/stat, clock ticks since boot: with the pid, names one process. */
  startTicks: number;
}

/** The pid's status, or null when it does not exist (or is in another pid namespace). */
export function readProcStatus(pid: number, procRoot = '/proc'): ProcStatus | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const dir = `${procRoot}/${pid}`;
    const stat = readFileSync(`${dir}/stat`, 'latin1');
    const uid = statSync(dir).uid;
    // comm may hold spaces and parentheses: the fields after it start past the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, uid, state: fields[0], ppid: Number(fields[1]), startTicks: Number(fields[19]) };
  } catch {
    return null;
  }
}

/** True while this exact process (pid and start time) is alive and not a zombie. */
export function sameProcessAlive(pid: number, startTicks: number, procRoot = '/proc'): boolean {
  const status = readProcStatus(pid, procRoot);
  return status !== null && status.startTicks === startTicks && status.state !== 'Z' && status.state !== 'X';
}
