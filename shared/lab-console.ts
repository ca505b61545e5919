// The Lab view's wire, between the console host running the hub (`gpushare start --lab`) and the
// console: the page and its WebSocket name a box (`?box=NAME`: that box's console, every request
// to its daemon) or the lab (`?lab`: the Lab view, one `lab` event and the `lab.where` request).
import { PRIORITIES } from './jobs.js';
import type { LabBoxRow, LabGpuRow, LabGpuUser, LabView, PersonTotal } from './lab.js';
import type { WhereAnswer } from './lab-where.js';
import { number, object, oneOf, type Infer } from './schema.js';

/** The console URL's parameter naming the box whose console it shows. */
export const BOX_PARAM = 'box';
/** The console URL's parameter asking for the Lab view. */
export const LAB_PARAM = 'lab';

/** Users a GPU's tile names, the most memory first; the others are counted, and the event carries no more. */
export const LAB_USERS_SHOWN = 3;

/** A GPU as its tile shows it: the users named (their processes and memory) and how many others. */
export interface LabConsoleGpu extends Omit<LabGpuRow, 'box' | 'users'> {
  users: Array<Pick<LabGpuUser, 'user' | 'processes' | 'memoryBytes'>>;
  otherUsers: number;
}

/** A box as the Lab view shows it (labView's row, its GPUs as their tiles show them). */
export interface LabConsoleRow extends Omit<LabBoxRow, 'gpus'> {
  gpus: LabConsoleGpu[];
}

/** What the Lab view shows of a box's row: a GPU's every user went on the wire, and a 20-box update was 141 KiB, most of it users no tile names. */
export function labConsoleRow(row: LabBoxRow): LabConsoleRow {
  const gpus = row.gpus.map(({ box: _box, users, ...gpu }): LabConsoleGpu => ({
    ...gpu,
    users: users.slice(0, LAB_USERS_SHOWN).map(({ user, processes, memoryBytes }) => ({ user, processes, memoryBytes })),
    otherUsers: Math.max(0, users.length - LAB_USERS_SHOWN),
  }));
  return { ...row, gpus };
}

/** The lab as the Lab view shows it. */
export interface LabConsoleState {
  takenAt: number;
  view: { boxes: LabConsoleRow[]; totals: LabView['totals'] };
  people: PersonTotal[];
  /** When each box sampled the snapshot shown (its own clock), by box name; null before its first. */
  sampledAt: Record<string, number | null>;
}

/**
 * The one event of a lab session, built once by the host for every Lab view open: the rows of the
 * boxes that changed since the update before (every row in the first, `whole`), the rest whole.
 */
export const LAB_EVENT = 'lab';
export interface LabConsoleUpdate {
  takenAt: number;
  whole: boolean;
  /** Every box's name, in the lab list's order. */
  names: string[];
  rows: LabConsoleRow[];
  totals: LabView['totals'];
  people: PersonTotal[];
  sampledAt: Record<string, number | null>;
}

/** The update from `state`: every row when `before` is null, else those not in it (by identity: the host keeps a row that did not change). */
export function labUpdateOf(state: LabConsoleState, before: ReadonlyMap<string, LabConsoleRow> | null): LabConsoleUpdate {
  const rows = before === null ? state.view.boxes : state.view.boxes.filter((row) => before.get(row.name) !== row);
  return { takenAt: state.takenAt, whole: before === null, names: state.view.boxes.map((b) => b.name), rows, totals: state.view.totals, people: state.people, sampledAt: state.sampledAt };
}

/** The state after `update`, from the one before (null: none yet); a row that did not change keeps its object. */
export function applyLabUpdate(before: LabConsoleState | null, update: LabConsoleUpdate): LabConsoleState {
  const byName = new Map(update.whole || !before ? [] : before.view.boxes.map((b) => [b.name, b] as const));
  for (const row of update.rows) byName.set(row.name, row);
  const boxes = update.names.flatMap((name) => byName.get(name) ?? []);
  return { takenAt: update.takenAt, view: { boxes, totals: update.totals }, people: update.people, sampledAt: update.sampledAt };
}

/** The one request of a lab session: where can a job start now. */
export const LAB_WHERE = 'lab.where';
export const labWhereSchema = object({
  /** GPU memory the job needs on each GPU (bytes; 0: not said). */
  memoryBytes: number({ integer: true, min: 0, max: 2 ** 50, unit: 'bytes' }),
  gpus: number({ integer: true, min: 1, max: 64, unit: 'GPUs' }),
  priority: oneOf(PRIORITIES),
});
export type LabWhereParams = Infer<typeof labWhereSchema>;
export type LabWhereResult = WhereAnswer;

/** The URL of one box's console, or of the Lab view (box null), beside `page` (which carries the token). */
export function labConsoleHref(page: string, box: string | null): string {
  const url = new URL(page);
  url.searchParams.delete(BOX_PARAM);
  url.searchParams.delete(LAB_PARAM);
  if (box === null) url.searchParams.set(LAB_PARAM, '1');
  else url.searchParams.set(BOX_PARAM, box);
  url.hash = '';
  return url.toString();
}

/** The URL of this box's own console (the desktop app's "This box"), beside `page`: no box, no Lab view. */
export function thisBoxHref(page: string): string {
  const url = new URL(page);
  url.searchParams.delete(BOX_PARAM);
  url.searchParams.delete(LAB_PARAM);
  url.hash = '';
  return url.toString();
}
