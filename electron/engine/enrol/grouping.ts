// Which job a process that asks to enrol belongs to, from what the kernel says of it in /proc: its
// owner, parents, process group and session, its cgroup (a Slurm job, a systemd service, a container),
// and, for a notebook kernel, the kernel process itself. The environment is read only for a kernel's
// name (JPY_SESSION_NAME) and the GPU it asked for: a process's words never pick another job.
import { join } from 'node:path';
import { readProcStatus } from '../proc/proc-status.js';
import { readEnvironVariables, readSmallText, readStart } from '../proc/bounded-read.js';
import { parseCgroup } from '../proc/process-context.js';

/** How far up the parent chain a process is followed (as ownership.ts). */
export const ENROL_DEPTH = 32;

/** How a group was found, shown on the job (JobView.enrolled.by). */
export type EnrolGroupKind = 'command' | 'notebook' | 'slurm' | 'unit' | 'container' | 'tree';

/** What /proc says of the asking process. */
export interface EnrollingProcess {
  pid: number;
  uid: number;
  startTicks: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** comm: nvidia-cuda-mps-* marks an MPS process, which enrolment.ts checks is the engine's (anyone may take the name). */
  comm: string;
  /** Its ancestors nearest first (pid and start time), up to ENROL_DEPTH, stopping at pid 1. */
  ancestors: Array<{ pid: number; startTicks: number; uid: number }>;
}

/** A group the kernel's view alone gives (no job of ours involved): key, kind and a name to show. */
export interface KernelGroup {
  key: string;
  kind: Exclude<EnrolGroupKind, 'command' | 'tree'>;
  name: string | null;
}

const KERNEL_ARGV = /(^|\/|\s|\0)ipykernel_launcher(\.py)?(\0|$)|\0-m\0ipykernel(\0|$)/;
const ENV_NAMES = new Set(['JPY_SESSION_NAME', 'CUDA_VISIBLE_DEVICES']);

/** The process as /proc has it now, or null when it is gone. */
export function readEnrolling(pid: number, procRoot = '/proc'): EnrollingProcess | null {
  const status = readProcStatus(pid, procRoot);
  const stat = readSmallText(join(procRoot, String(pid), 'stat'), 4096, 'latin1');
  if (!status || !stat) return null;
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ancestors: EnrollingProcess['ancestors'] = [];
  for (let parent = status.ppid; parent > 1 && ancestors.length < ENROL_DEPTH; ) {
    const up = readProcStatus(parent, procRoot);
    if (!up) break;
    ancestors.push({ pid: parent, startTicks: up.startTicks, uid: up.uid });
    parent = up.ppid;
  }
  return { pid, uid: status.uid, startTicks: status.startTicks, ppid: status.ppid, pgid: Number(fields[2]), sid: Number(fields[3]), comm, ancestors };
}

/**
 * The group the kernel gives the process: a notebook kernel (it, or an ancestor of the same user, runs
 * ipykernel), a Slurm job, a systemd service other than a user's manager, or a container. Every key
 * holds the uid: a group is never shared across users, whatever a cgroup is named.
 */
export function kernelGroup(proc: EnrollingProcess, procRoot = '/proc'): KernelGroup | null {
  for (const p of [{ pid: proc.pid, startTicks: proc.startTicks, uid: proc.uid }, ...proc.ancestors]) {
    if (p.uid !== proc.uid) break;
    const argv = readStart(join(procRoot, String(p.pid), 'cmdline'), 4096, 'utf8');
    if (argv === null || !KERNEL_ARGV.test(argv.replace(/\0$/, ''))) continue;
    const session = readEnvironVariables(join(procRoot, String(p.pid), 'environ'), ENV_NAMES, 256)?.get('JPY_SESSION_NAME') ?? null;
    const name = session ? (session.split('/').pop() || session) : null;
    return { key: `notebook:${proc.uid}:${p.pid}:${p.startTicks}`, kind: 'notebook', name };
  }
  const cgroup = readSmallText(join(procRoot, String(proc.pid), 'cgroup'), 64 * 1024, 'utf8');
  if (!cgroup) return null;
  const facts = parseCgroup(cgroup);
  if (facts.slurmJobId) return { key: `slurm:${proc.uid}:${facts.slurmJobId}`, kind: 'slurm', name: `slurm job ${facts.slurmJobId}` };
  if (facts.container) return { key: `container:${proc.uid}:${facts.container.id}`, kind: 'container', name: `${facts.container.runtime} ${facts.container.id.slice(0, 12)}` };
  const unit = facts.systemdUnit;
  if (unit && unit.endsWith('.service') && !/^user@\d+\.service$/.test(unit) && !/^(session-.*|init)\.scope$/.test(unit))
    return { key: `unit:${proc.uid}:${unit}`, kind: 'unit', name: unit };
  return null;
}

/** The GPU the process asked for (CUDA_VISIBLE_DEVICES' first entry), where it can be read; null: none said. */
export function requestedDevice(pid: number, procRoot = '/proc'): string | null {
  const value = readEnvironVariables(join(procRoot, String(pid), 'environ'), ENV_NAMES, 256)?.get('CUDA_VISIBLE_DEVICES');
  const first = value?.split(',')[0]?.trim();
  return first ? first : null;
}
