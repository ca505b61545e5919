// The lab: several boxes, each with its own daemon, seen together. The hub (electron/engine/lab/)
// keeps one connection per box and publishes a LabSnapshot; everything here is plain data and pure
// functions over it, so the console, the CLI and the tests read the same lab the same way.
import { FINAL_STATES, gpuDemand, type JobView } from './jobs.js';
import type { LabPolicyStatus } from './lab-policy.js';
import type { Snapshot } from './snapshot.js';
import { array, object, optional, string, ValidationError, type Infer } from './schema.js';

// ---------------------------------------------------------------------------------------------
// The lab list: /etc/gpushare/lab.json (the admin's) and ~/.config/gpushare/lab.json (a person's own)

/** The daemon's socket on every box, unless a box's entry names another. */
export const BOX_DAEMON_SOCKET = '/run/gpushare/engine.sock';

const boxName = string({ min: 1, max: 64, pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]*$/, describe: 'a box name of letters, digits, ".", "_" or "-" (like "box3")' });
/** What `ssh` takes as its destination: a Host of the person's SSH config, host, user@host or ssh://user@host:port; never an option. */
const sshDestination = string({ min: 1, max: 255, pattern: /^(?!-)[^\s'"\\]+$/, describe: 'an ssh destination like "box3", "alice@box3.lab" or "ssh://box3:2222" (no spaces, not starting with "-")' });
const socketPath = string({ min: 2, max: 107, pattern: /^\/[^\0\n]*$/, describe: 'an absolute socket path (at most 107 bytes, the kernel\'s limit)' });

export const labBoxSchema = object({
  name: boxName,
  /** Reach the box over SSH as this destination (the person's own keys, agent and ~/.ssh/config). */
  ssh: optional(sshDestination),
  /** The daemon's socket on the box (default /run/gpushare/engine.sock); without `ssh`, a socket on this machine reached directly. */
  socket: optional(socketPath),
  /** The gpushare command on the box, for `gpushare relay --stdio` where it cannot forward a socket (default "gpushare" on the PATH). */
  gpushare: optional(string({ min: 1, max: 255, pattern: /^[A-Za-z0-9_./+-]+$/, describe: 'a command name or path of letters, digits and "_./+-" (like "/opt/gpushare/electron/cli/gpushare.js")' })),
});
export const labListSchema = object({ boxes: array(labBoxSchema, { max: 500 }) });
export type LabListInput = Infer<typeof labListSchema>;

/** One box of the lab and how to reach it. */
export type BoxRoute = { kind: 'ssh'; destination: string; socket: string; gpushare: string } | { kind: 'socket'; path: string };
export interface LabBoxSpec {
  name: string;
  route: BoxRoute;
}

/** Check one lab file's content (parsed JSON); throws a ValidationError naming the entry and key ("boxes[2].ssh"). */
export function parseLabList(value: unknown): LabBoxSpec[] {
  const input = labListSchema.parse(value, '');
  const seen = new Set<string>();
  return input.boxes.map((box, i) => {
    if (seen.has(box.name)) throw new ValidationError(`boxes[${i}].name`, `names "${box.name}" again: each box once`);
    seen.add(box.name);
    if (box.ssh === undefined && box.socket === undefined) throw new ValidationError(`boxes[${i}]`, `("${box.name}") needs "ssh" (how to reach it) or "socket" (a socket on this machine)`);
    if (box.ssh === undefined && box.gpushare !== undefined) throw new ValidationError(`boxes[${i}].gpushare`, `("${box.name}") is only for a box reached over ssh`);
    const route: BoxRoute =
      box.ssh !== undefined ? { kind: 'ssh', destination: box.ssh, socket: box.socket ?? BOX_DAEMON_SOCKET, gpushare: box.gpushare ?? 'gpushare' } : { kind: 'socket', path: box.socket! };
    return { name: box.name, route };
  });
}

/** The admin's list, then the person's own: an own entry with an admin box's name replaces it (their SSH alias wins). */
export function mergeLabLists(admin: readonly LabBoxSpec[], own: readonly LabBoxSpec[]): LabBoxSpec[] {
  const byName = new Map<string, LabBoxSpec>();
  for (const box of [...admin, ...own]) byName.set(box.name, box);
  return [...byName.values()];
}

// ---------------------------------------------------------------------------------------------
// The lab snapshot: what the hub publishes

export type BoxVia = 'socket' | 'ssh-forward' | 'ssh-relay';

/**
 * A box's connection. `down`: not reachable since `since`, the last error in words, the next try
 * scheduled (null: none, the one-shot command that asked has stopped its hub); `reconnecting`: a try is under way after the box was down; `connecting`: the first try.
 */
export type BoxConnection =
  | { state: 'connecting'; since: number }
  | { state: 'connected'; since: number; via: BoxVia }
  | { state: 'reconnecting'; since: number; lastError: string; attempt: number }
  | { state: 'down'; since: number; lastError: string; attempt: number; nextTryAt: number | null };
export type BoxConnectionState = BoxConnection['state'];

/** Who the box's daemon takes this person to be (by the kernel's word on that box). */
export interface BoxCaller {
  user: string;
  uid: number;
  admin: boolean;
}

export interface LabBox {
  name: string;
  /** Where it is reached, in words: "ssh box3", "socket /run/gpushare/engine.sock". */
  reach: string;
  connection: BoxConnection;
  /** The latest of each, kept while the box is down (shown as of `updatedAt`); null before the first. */
  snapshot: Snapshot | null;
  jobs: JobView[];
  /** The lab policy on that box and where the person stands under it; null: not read yet. */
  policy: LabPolicyStatus | null;
  caller: BoxCaller | null;
  /** When the box last sent anything (ms); null: never. */
  updatedAt: number | null;
}

export interface LabSnapshot {
  takenAt: number;
  /** In the lab list's order. */
  boxes: LabBox[];
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19) + ' UTC';

/** A box's state in one line: "connected over ssh (forwarded socket)", "down since 20:03:12 UTC (next try in 4 s): box3: ssh: Permission denied (publickey)". */
export function describeBoxState(box: Pick<LabBox, 'name' | 'connection'>, now: number): string {
  const c = box.connection;
  switch (c.state) {
    case 'connecting':
      return 'connecting';
    case 'connected':
      return `connected ${c.via === 'socket' ? 'to its socket' : c.via === 'ssh-forward' ? 'over ssh (forwarded socket)' : 'over ssh (gpushare relay)'}`;
    case 'reconnecting':
      return `reconnecting (down since ${clock(c.since)}, try ${c.attempt}): ${c.lastError}`;
    case 'down':
      return `down since ${clock(c.since)}${c.nextTryAt === null ? '' : ` (next try in ${Math.max(0, Math.ceil((c.nextTryAt - now) / 1000))} s)`}: ${c.lastError}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The lab view: boxes × GPUs at a glance

export interface LabGpuUser {
  user: string;
  processes: number;
  memoryBytes: number;
  smPercent: number;
}

export interface LabGpuRow {
  box: string;
  index: number;
  name: string;
  lost: boolean;
  utilization: number | null;
  memoryUsed: number | null;
  memoryTotal: number;
  /** Who runs on it, the most memory first. */
  users: LabGpuUser[];
  migSlices: number;
  /** Managed jobs waiting for this GPU (those asking for any GPU are counted on the box). */
  queued: number;
}

export interface LabBoxRow {
  name: string;
  reach: string;
  state: BoxConnectionState;
  /** describeBoxState's line. */
  status: string;
  simulated: boolean;
  gpus: LabGpuRow[];
  /** Managed jobs queued on the box, and those of them that asked for any GPU. */
  queued: number;
  queuedAnyGpu: number;
  updatedAt: number | null;
}

export interface LabView {
  boxes: LabBoxRow[];
  totals: { boxes: number; connected: number; gpus: number; processes: number; memoryUsed: number; memoryTotal: number };
}

export const isQueued = (job: JobView): boolean => job.state === 'queued';

/** Merge every box's latest snapshot and jobs into one view (a down box keeps its last figures, marked by its state). */
export function labView(lab: LabSnapshot, now: number = lab.takenAt): LabView {
  const totals = { boxes: lab.boxes.length, connected: 0, gpus: 0, processes: 0, memoryUsed: 0, memoryTotal: 0 };
  const boxes = lab.boxes.map((box): LabBoxRow => {
    if (box.connection.state === 'connected') totals.connected++;
    const queuedJobs = box.jobs.filter(isQueued);
    const gpus = (box.snapshot?.gpus ?? []).map((gpu): LabGpuRow => {
      const users = new Map<string, LabGpuUser>();
      for (const p of box.snapshot!.processes) {
        if (p.gpuIndex !== gpu.index) continue;
        const user = p.user ?? (p.uid === null ? 'unknown' : `uid ${p.uid}`);
        const entry = users.get(user) ?? { user, processes: 0, memoryBytes: 0, smPercent: 0 };
        entry.processes++;
        entry.memoryBytes += p.usedMemory ?? 0;
        entry.smPercent += p.smPercent ?? 0;
        users.set(user, entry);
      }
      return {
        box: box.name,
        index: gpu.index,
        name: gpu.name,
        lost: gpu.lost,
        utilization: gpu.utilizationGpu,
        memoryUsed: gpu.memoryUsed,
        memoryTotal: gpu.memoryTotal,
        users: [...users.values()].sort((a, b) => b.memoryBytes - a.memoryBytes || a.user.localeCompare(b.user)),
        migSlices: gpu.migSlices.length,
        queued: queuedJobs.filter((j) => gpuDemand(j).named?.includes(gpu.index)).length, // a job naming several GPUs waits for each
      };
    });
    if (box.connection.state === 'connected') {
      totals.gpus += gpus.length;
      totals.processes += box.snapshot?.processes.length ?? 0;
      for (const g of gpus) {
        totals.memoryUsed += g.memoryUsed ?? 0;
        totals.memoryTotal += g.memoryTotal;
      }
    }
    return {
      name: box.name,
      reach: box.reach,
      state: box.connection.state,
      status: describeBoxState(box, now),
      simulated: box.snapshot?.driver.simulated ?? false,
      gpus,
      queued: queuedJobs.length,
      queuedAnyGpu: queuedJobs.filter((j) => j.requestedGpu === 'auto').length,
      updatedAt: box.updatedAt,
    };
  });
  return { boxes, totals };
}

// ---------------------------------------------------------------------------------------------
// Per-person totals across boxes

export interface PersonTotal {
  user: string;
  /** Boxes where they have GPU processes or live jobs, in lab order. */
  boxes: string[];
  /** Distinct GPUs their processes are on, over all boxes. */
  gpus: number;
  processes: number;
  memoryBytes: number;
  /** Sum of their processes' SM shares (100 = one whole GPU's worth). */
  smPercent: number;
  runningJobs: number;
  queuedJobs: number;
}

/** Each person's use of the lab, from the boxes that answer now: the most memory first. */
export function personTotals(lab: LabSnapshot): PersonTotal[] {
  const people = new Map<string, PersonTotal & { gpuKeys: Set<string> }>();
  const of = (user: string) => {
    let p = people.get(user);
    if (!p) people.set(user, (p = { user, boxes: [], gpus: 0, processes: 0, memoryBytes: 0, smPercent: 0, runningJobs: 0, queuedJobs: 0, gpuKeys: new Set() }));
    return p;
  };
  const onBox = (p: PersonTotal, box: string): void => {
    if (!p.boxes.includes(box)) p.boxes.push(box);
  };
  for (const box of lab.boxes) {
    if (box.connection.state !== 'connected') continue;
    for (const proc of box.snapshot?.processes ?? []) {
      const p = of(proc.user ?? (proc.uid === null ? 'unknown' : `uid ${proc.uid}`));
      onBox(p, box.name);
      p.gpuKeys.add(`${box.name}\0${proc.gpuIndex}`);
      p.processes++;
      p.memoryBytes += proc.usedMemory ?? 0;
      p.smPercent += proc.smPercent ?? 0;
    }
    for (const job of box.jobs) {
      if (!job.managed || FINAL_STATES.has(job.state)) continue;
      const p = of(job.owner);
      onBox(p, box.name);
      if (isQueued(job)) p.queuedJobs++;
      else p.runningJobs++;
    }
  }
  return [...people.values()]
    .map(({ gpuKeys, ...p }) => ({ ...p, gpus: gpuKeys.size }))
    .sort((a, b) => b.memoryBytes - a.memoryBytes || b.processes - a.processes || a.user.localeCompare(b.user));
}
