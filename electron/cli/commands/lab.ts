// `gpushare lab ps|where`: every box of the lab list at once, through the hub (one link per box over
// SSH as the person, or a socket on this machine); and `gpushare run --box NAME`'s link to one box.
import { join } from 'node:path';
import { PRIORITIES, formatByteSize, parseByteSize, type Priority } from '../../../shared/jobs.js';
import { labView, personTotals, type LabBoxSpec, type LabSnapshot } from '../../../shared/lab.js';
import { runFlags, whereCanIRun, type WherePlace } from '../../../shared/lab-where.js';
import { LabHub } from '../../engine/lab/lab-hub.js';
import { openBoxLink, LinkError } from '../../engine/lab/box-link.js';
import { loadLabList, noLabBoxes } from '../../engine/lab/lab-list.js';
import { runtimeDir } from '../../engine/paths.js';
import { parseFlags, UsageError } from '../args.js';
import type { EngineClient } from '../engine-client.js';
import { formatBytes, formatPercent, table } from '../format.js';

const DEFAULT_WAIT_S = 10;

/** The person's private directory for the boxes' forwarded sockets. */
export const labSocketDir = (): string => join(runtimeDir(), 'lab');

/** The lab list's boxes; none is an error naming the files looked at (gpushare lab, start --lab). */
export function labBoxes(): LabBoxSpec[] {
  const list = loadLabList();
  if (list.boxes.length === 0) throw new Error(noLabBoxes(list.looked));
  return list.boxes;
}

function waitSeconds(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_S;
  const s = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || s > 600) throw new UsageError(`--wait must be a number of seconds from 0 to 600, got "${text}".`);
  return s;
}

/** The lab as it stands once every box answered or failed once (at most waitS). */
async function readLab(waitS: number): Promise<LabSnapshot> {
  const hub = new LabHub(labBoxes(), { socketDir: labSocketDir() });
  hub.start();
  try {
    await hub.settled(waitS * 1000);
    return withoutNextTries(hub.snapshot());
  } finally {
    hub.close();
  }
}

/** A one-shot command stops its hub as it prints: a down box is shown since when and why, with no next try. */
const withoutNextTries = (lab: LabSnapshot): LabSnapshot => ({
  ...lab,
  boxes: lab.boxes.map((box) => (box.connection.state === 'down' ? { ...box, connection: { ...box.connection, nextTryAt: null } } : box)),
});

export async function labCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'ps') return labPs(rest);
  if (sub === 'where') return labWhere(rest);
  throw new UsageError(sub === undefined ? `Which? gpushare lab ps or gpushare lab where.` : `Unknown subcommand "${sub}" for gpushare lab: ps or where.`);
}

async function labPs(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, watch: { type: 'boolean' }, wait: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`gpushare lab ps takes no arguments, got "${positionals[0]}".`);
  if (values.json && values.watch) throw new UsageError('--json and --watch cannot be combined.');
  if (values.watch) return watchLab();
  const lab = await readLab(waitSeconds(values.wait));
  const people = personTotals(lab);
  if (values.json) process.stdout.write(JSON.stringify({ ...lab, people }, null, 2) + '\n');
  else process.stdout.write(renderLab(lab) + '\n');
  return lab.boxes.some((b) => b.connection.state === 'connected') ? 0 : 1;
}

/** The lab redrawn at most once a second until Ctrl-C. */
async function watchLab(): Promise<number> {
  const hub = new LabHub(labBoxes(), { socketDir: labSocketDir() });
  const draw = (): void => void process.stdout.write('\x1b[2J\x1b[H' + renderLab(hub.snapshot()) + '\n\nCtrl-C to quit.\n');
  const timer = setInterval(draw, 1000);
  hub.start();
  draw();
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  clearInterval(timer);
  hub.close();
  return 0;
}

export function renderLab(lab: LabSnapshot): string {
  const view = labView(lab, Date.now());
  const out: string[] = [];
  for (const box of view.boxes) {
    out.push(`${box.name} (${box.reach}): ${box.status}${box.simulated ? ' — simulated GPUs' : ''}${box.queued ? `; ${box.queued} queued` : ''}`);
    if (box.gpus.length === 0) continue;
    const rows = box.gpus.map((g) => [
      String(g.index),
      g.name + (g.lost ? ' (lost)' : ''),
      formatPercent(g.utilization),
      `${formatBytes(g.memoryUsed)} / ${formatBytes(g.memoryTotal)}`,
      g.migSlices ? String(g.migSlices) : '-',
      String(g.queued),
      g.users.map((u) => `${u.user} ${formatBytes(u.memoryBytes)}${u.processes > 1 ? ` (${u.processes})` : ''}`).join(', ') || '-',
    ]);
    out.push(indent(table(['GPU', 'NAME', 'UTIL', 'MEMORY', 'MIG', 'QUEUED', 'WHO'], rows, new Set([0, 2, 5]))));
  }
  const people = personTotals(lab);
  if (people.length) {
    out.push('', 'People across the boxes that answer:');
    out.push(indent(table(['USER', 'GPUS', 'PROCESSES', 'MEMORY', 'SM', 'JOBS RUNNING', 'QUEUED', 'BOXES'], people.map((p) => [p.user, String(p.gpus), String(p.processes), formatBytes(p.memoryBytes), formatPercent(p.smPercent), String(p.runningJobs), String(p.queuedJobs), p.boxes.join(', ')]), new Set([1, 2, 5, 6]))));
  }
  return out.join('\n');
}

const indent = (text: string): string =>
  text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

async function labWhere(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { mem: { type: 'string' }, gpus: { type: 'string' }, priority: { type: 'string' }, json: { type: 'boolean' }, wait: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`gpushare lab where takes no arguments, got "${positionals[0]}".`);
  if (values.mem === undefined) throw new UsageError('How much memory does the job need? Give --mem, like --mem 20G.');
  let memoryBytes: number;
  try {
    memoryBytes = parseByteSize(values.mem);
  } catch (error) {
    throw new UsageError(`--mem: ${(error as Error).message}`);
  }
  const gpus = values.gpus === undefined ? 1 : Number(values.gpus);
  if (!/^\d+$/.test(values.gpus ?? '1') || gpus < 1 || gpus > 64) throw new UsageError(`--gpus must be a whole number from 1 to 64, got "${values.gpus}".`);
  const priority = (values.priority ?? 'normal') as Priority;
  if (!(PRIORITIES as readonly string[]).includes(priority)) throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}; got "${values.priority}".`);
  const lab = await readLab(waitSeconds(values.wait));
  const request = { memoryBytes, gpus, priority };
  const answer = whereCanIRun(lab, request);
  const run = (p: WherePlace): string[] => runFlags(p, request, values.mem!);
  if (values.json) {
    // each place with the `gpushare run` flags that start the job there
    process.stdout.write(JSON.stringify({ request, places: answer.places.map((p) => ({ ...p, run: run(p) })), notNow: answer.notNow }, null, 2) + '\n');
  } else {
    const lines = answer.places.map(
      (p, i) =>
        `${i === 0 ? '→' : ' '} ${p.box}: GPU${p.gpus.length > 1 ? 's' : ''} ${p.gpus.join(', ')}${p.slice ? `, MIG slice ${p.slice.profile ?? '?'} ${p.slice.uuid}` : ''} (${p.freeBytes.map((f) => `${formatBytes(f)} free`).join(', ')}; ${p.queueAhead === 0 ? 'nothing queued ahead' : `${p.queueAhead} queued ahead`}; utilization ${formatPercent(p.utilization)})`,
    );
    if (answer.places.length === 0) lines.push(`No box can start a ${formatByteSize(memoryBytes)} job${gpus > 1 ? ` on ${gpus} GPUs` : ''} now.`);
    else lines.push('', `Run it there: gpushare run ${run(answer.places[0]!).join(' ')} -- COMMAND`);
    if (answer.notNow.length) lines.push('', 'Not now:', ...answer.notNow.map((n) => `  ${n.box}: ${n.reason}`));
    process.stdout.write(lines.join('\n') + '\n');
  }
  return answer.places.length ? 0 : 1;
}

/** A client of one box of the lab list, as `gpushare run --box NAME` uses it. */
export async function connectToBox(name: string): Promise<EngineClient> {
  const boxes = labBoxes();
  const box = boxes.find((b) => b.name === name);
  if (!box) throw new UsageError(`--box ${name}: no such box in the lab list; it has ${boxes.map((b) => b.name).join(', ')}.`);
  try {
    const link = await openBoxLink(box, { socketDir: labSocketDir() });
    return { call: link.client.call, on: link.client.on, close: () => link.close() };
  } catch (error) {
    if (error instanceof LinkError) throw new Error(`${name}: ${error.message}`);
    throw error;
  }
}
