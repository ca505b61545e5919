// What /proc says about one pid: owner, run state, parent, process group and start time.
// The start time tells a reused pid from the process we meant.
import { readdirSync, readFileSync, statSync } from 'node:fs';

export interface ProcStatus {
  pid: number;
  uid: number;
  ppid: number;
  /** One letter: R running, S sleeping, T stopped, Z zombie, … */
  state: string;
  /** Field 22 of /proc/PID/stat, clock ticks since boot: with the pid, names one process. */
  startTicks: number;
}

/** One process as the kernel names it: a pid alone may name another process once this one exits. */
export interface ProcessRef {
  pid: number;
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

/** The process group of a pid (a job started in its own session leads one: pgid = pid), or null when it is gone. */
export function processGroupOf(pid: number, procRoot = '/proc'): number | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/** The live processes of process group `pgid` (none once every member has exited). */
export function groupMembers(pgid: number, procRoot = '/proc'): number[] {
  const members: number[] = [];
  for (const name of readdirSync(procRoot)) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const status = readProcStatus(pid, procRoot);
    if (status && status.state !== 'Z' && status.state !== 'X' && processGroupOf(pid, procRoot) === pgid) members.push(pid);
  }
  return members;
}

/** The thread ids of a process (/proc/PID/task); empty when it is gone. */
export function threadIds(pid: number, procRoot = '/proc'): number[] {
  try {
    return readdirSync(`${procRoot}/${pid}/task`).map(Number).filter((tid) => Number.isInteger(tid) && tid > 0);
  } catch {
    return [];
  }
}
