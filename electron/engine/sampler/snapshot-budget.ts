// A snapshot's size has a bound whatever the processes on the box do. Each process's texts are bounded where they
// are read (proc/text-bounds.ts); here the rows together: past the budget, command lines shrink to a line each, and
// past that the processes last in line are left out, counted on their GPU: each user's processes by GPU memory,
// taken in turns, so no user's flood of processes pushes out another's.
import type { GpuProcessView, GpuView } from '../../../shared/snapshot.js';
import { cutArgv, jsonBytes, TEXT_MAX_JSON_BYTES } from '../proc/text-bounds.js';

/** The processes of one snapshot take at most this much JSON (a box of 8 GPUs × 64 processes takes about a tenth). */
export const SNAPSHOT_PROCESSES_MAX_BYTES = 1024 * 1024;
/** A command line's share when the whole budget would not hold them all at full length. */
export const ARGV_SHORT_JSON_BYTES = 256;
/** A row's JSON besides its command line and context (keys, numbers, the GPU's uuid, user and command): an upper bound. */
const ROW_FIXED_BYTES = 640 + 2 * TEXT_MAX_JSON_BYTES;

type Argv = GpuProcessView['argv'];
type Context = NonNullable<GpuProcessView['context']>;

// rows are new every tick, but a process's argv and context are the same objects while it stays on a GPU
const argvBytesOf = new WeakMap<Argv, number>();
const contextBytesOf = new WeakMap<Context, number>();
const shortOf = new WeakMap<Argv, { argv: string[]; cut: boolean; bytes: number }>();

function argvBytes(argv: Argv): number {
  let bytes = argvBytesOf.get(argv);
  if (bytes === undefined) argvBytesOf.set(argv, (bytes = jsonBytes(argv)));
  return bytes;
}

function contextBytes(context: GpuProcessView['context']): number {
  if (!context) return 4; // null
  let bytes = contextBytesOf.get(context);
  if (bytes === undefined) contextBytesOf.set(context, (bytes = jsonBytes(context)));
  return bytes;
}

function short(argv: Argv): { argv: string[]; cut: boolean; bytes: number } {
  let kept = shortOf.get(argv);
  if (!kept) {
    const { argv: cutTo, cut } = cutArgv(argv, ARGV_SHORT_JSON_BYTES);
    shortOf.set(argv, (kept = { argv: cutTo, cut, bytes: jsonBytes(cutTo) }));
  }
  return kept;
}

const byMemory = (rows: GpuProcessView[]) => (a: number, b: number): number => (rows[b].usedMemory ?? 0) - (rows[a].usedMemory ?? 0) || rows[a].pid - rows[b].pid;

/** Row indices: each user's processes by GPU memory, largest first, taken one per user per turn (each turn by memory too). */
function inTurns(rows: GpuProcessView[]): number[] {
  const byUser = new Map<number | null, number[]>();
  rows.forEach((row, i) => {
    const list = byUser.get(row.uid);
    if (list) list.push(i);
    else byUser.set(row.uid, [i]);
  });
  const turn = new Int32Array(rows.length);
  for (const list of byUser.values()) list.sort(byMemory(rows)).forEach((i, rank) => (turn[i] = rank));
  const memory = byMemory(rows);
  return rows.map((_, i) => i).sort((a, b) => turn[a] - turn[b] || memory(a, b));
}

/** The whole command line's size, for one that was whole until the budget cut it. */
const wholeSize = (argv: Argv): { bytes: number; args: number } => ({ bytes: argv.reduce((sum, arg) => sum + Buffer.byteLength(arg) + 1, 0), args: argv.length });

/**
 * The rows a snapshot lists, in their order: all of them as they are while they fit the budget. Past it, in turns:
 * every user's largest process (by GPU memory), then every user's second, and so on (one user's flood cannot push
 * out another user's processes): each gets its row with its command line cut to ARGV_SHORT_JSON_BYTES while the
 * budget lasts, the rest are left out and counted on their GPU (GpuView.unlisted), and what the budget has left
 * lengthens command lines again, in the same order.
 */
export function fitProcessesToBudget(rows: GpuProcessView[], gpus: GpuView[], budget = SNAPSHOT_PROCESSES_MAX_BYTES): GpuProcessView[] {
  const costs = rows.map((row) => ROW_FIXED_BYTES + argvBytes(row.argv) + contextBytes(row.context));
  let total = 2 + rows.length; // [ , ]
  for (const cost of costs) total += cost;
  if (total <= budget) return rows;

  const order = inTurns(rows);
  const listed = new Uint8Array(rows.length); // 0: left out, 1: short command line, 2: as read
  let used = 2;
  for (const i of order) {
    const cost = costs[i] - argvBytes(rows[i].argv) + short(rows[i].argv).bytes + 1;
    if (used + cost > budget) break;
    listed[i] = 1;
    used += cost;
  }
  for (const i of order) {
    if (listed[i] === 0) break;
    const more = argvBytes(rows[i].argv) - short(rows[i].argv).bytes;
    if (used + more > budget) continue;
    listed[i] = 2;
    used += more;
  }

  const fitted: GpuProcessView[] = [];
  const unlisted = new Map<number, { processes: number; usedMemory: number }>();
  rows.forEach((row, i) => {
    if (listed[i] === 2) fitted.push(row);
    else if (listed[i] === 1) {
      const cut = short(row.argv);
      fitted.push(cut.cut ? { ...row, argv: cut.argv, argvCut: row.argvCut ?? wholeSize(row.argv) } : row);
    } else {
      const count = unlisted.get(row.gpuIndex) ?? { processes: 0, usedMemory: 0 };
      count.processes++;
      count.usedMemory += row.usedMemory ?? 0;
      unlisted.set(row.gpuIndex, count);
    }
  });
  for (const gpu of gpus) {
    const count = unlisted.get(gpu.index);
    if (count) gpu.unlisted = count;
  }
  return fitted;
}
