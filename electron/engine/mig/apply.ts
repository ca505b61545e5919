// Reading a GPU's MIG layout, and applying a planned one: only when MIG mode is on, every profile exists
// on this GPU, the instances it destroys are idle and the engine may (root); otherwise say what blocks it.
import type { MigApplyResult, MigLayoutView, MigSliceView, MpsSliceStatus } from '../../../shared/spatial.js';
import type { SliceRef } from '../mps/mps-control.js';
import type { DeviceSample, NvmlBinding } from '../gpu/nvml-types.js';
import type { ProcessIdentity } from '../proc/proc-table.js';
import { migCommands } from './commands.js';
import type { MigExecutor } from './executor.js';
import { JobSpecError, parseJobSpecs } from '../../../shared/mig-job-spec.js';
import { migLayoutFromDevices, type MigInstance } from './layout.js';
import { planMigLayout } from './planner.js';
import { builtInMigProfileTable, type MigProfile, type MigProfileTable } from './profiles.js';
import { validateMigLayout } from './validator.js';

export interface MigDeps {
  nvml: Pick<NvmlBinding, 'describeDevice' | 'sampleDevice'>;
  /** Who a pid is (user, command line), for "in use by pid 4242 (alice: python train.py)". */
  identify: (pid: number) => Pick<ProcessIdentity, 'user' | 'argv' | 'command'>;
  /** The MPS daemon inside each slice (a slice whose daemon runs is busy: kept, never destroyed); absent: none known. */
  sliceDaemons?: (slices: SliceRef[]) => Pick<MpsSliceStatus, 'gpuInstanceId' | 'daemonRunning' | 'daemonUser'>[];
}

export interface MigApplyRequest {
  gpu: number;
  /** Job specs to plan for, "30G,10G:0.2,20G@high" (as `gpushare mig plan --jobs`). */
  jobs?: string;
  /** Or the layout itself: profiles, optionally @START ("3g.40gb@4"). */
  layout?: string[];
  dryRun?: boolean;
}

/** Applying was refused: every reason, one sentence each. */
export class MigApplyRefused extends Error {
  constructor(
    readonly blockers: string[],
    readonly result: MigApplyResult,
    readonly kind: 'forbidden' | 'conflict' | 'invalid-request',
  ) {
    super(blockers.join('\n'));
    this.name = 'MigApplyRefused';
  }
}

const MIG_MODE_OFF = (gpu: number): string =>
  `MIG mode is off on GPU ${gpu}: enable it with \`sudo nvidia-smi -i ${gpu} -mig 1\` (needs an idle GPU and may need a reset)`;

function tableFor(name: string, memoryTotal: number): MigProfileTable | null {
  return builtInMigProfileTable(name, memoryTotal);
}

/** The layout as NVML reports it now, with the processes in each slice. */
export function readMigLayout(gpu: number, deps: MigDeps): MigLayoutView {
  const device = deps.nvml.describeDevice(gpu);
  const table = tableFor(device.name, device.memoryTotal);
  const sample = device.migMode?.current ? deps.nvml.sampleDevice(gpu) : null;
  const processes = sample?.processes ?? [];
  const byGi = new Map<number, MigSliceView>();
  for (const instance of migLayoutFromDevices(device.migDevices)) {
    const gi = instance.gpuInstanceId!;
    const devices = device.migDevices.filter((d) => d.gpuInstanceId === gi);
    byGi.set(gi, {
      gpuInstanceId: gi,
      computeInstanceIds: instance.computeInstanceIds ?? [],
      profile: instance.profile,
      profileId: instance.profileId,
      placement: instance.placement,
      uuids: devices.map((d) => d.uuid),
      memoryTotal: devices[0]?.memoryTotal ?? null,
      smCount: devices[0]?.smCount ?? null,
      smPercent: sample?.migDevices.find((m) => m.gpuInstanceId === gi)?.smUtil ?? null,
      processes: processes
        .filter((p) => p.gpuInstanceId === gi)
        .map((p) => {
          const who = deps.identify(p.pid);
          return { pid: p.pid, user: who.user, command: who.argv.length ? who.argv.join(' ') : who.command, computeInstanceId: p.computeInstanceId };
        }),
    });
  }
  const slices = [...byGi.values()].sort((a, b) => a.placement.start - b.placement.start);
  const memorySlices = table?.memorySlices ?? null;
  const taken = new Set(slices.flatMap((s) => Array.from({ length: s.placement.size }, (_, i) => s.placement.start + i)));
  return {
    gpu,
    name: device.name,
    migEnabled: device.migMode ? device.migMode.current : null,
    migPending: device.migMode ? device.migMode.pending : null,
    profiles: table
      ? table.profiles.map((p) => ({ name: p.name, id: p.id, memoryMiB: p.memoryMiB, smCount: p.smCount, maxInstances: p.maxInstances, placementStarts: p.placementStarts }))
      : null,
    memorySlices,
    slices,
    freeMemorySlices: memorySlices === null || !device.migMode?.current ? [] : Array.from({ length: memorySlices }, (_, i) => i).filter((i) => !taken.has(i)),
  };
}

/** Plan (or take) a layout for one GPU and apply it through the executor, or refuse with every reason. */
export async function applyMigLayout(request: MigApplyRequest, deps: MigDeps, executor: MigExecutor): Promise<MigApplyResult> {
  const { gpu } = request;
  if ((request.jobs === undefined) === (request.layout === undefined)) {
    throw new MigApplyRefused(['Give either jobs (specs to plan for) or layout (profiles to create), not both and not neither.'], emptyResult(request), 'invalid-request');
  }
  const device = deps.nvml.describeDevice(gpu);
  const result = emptyResult(request);
  const refuse = (blockers: string[], kind: MigApplyRefused['kind'] = 'conflict'): never => {
    throw new MigApplyRefused(blockers, { ...result, blockers }, kind);
  };
  if (device.migMode === null) refuse([`GPU ${gpu} (${device.name}) does not support MIG.`]);
  const table = tableFor(device.name, device.memoryTotal);
  if (!table) refuse([`No MIG profile table is known for ${device.name}: gpushare has built-in tables for A100, H100 and H200.`]);

  const current = migLayoutFromDevices(device.migDevices);
  const daemons = new Map<number, string>(); // GPU instance id -> whose MPS daemon runs inside it
  if (device.migMode?.current) {
    const refs = device.migDevices.map((m) => ({ gpu, gpuInstanceId: m.gpuInstanceId, uuid: m.uuid }));
    for (const d of refs.length && deps.sliceDaemons ? deps.sliceDaemons(refs) : []) if (d.daemonRunning) daemons.set(d.gpuInstanceId, d.daemonUser ?? '?');
    markBusy(current, deps.nvml.sampleDevice(gpu), new Set(daemons.keys()));
  }
  let planned: MigInstance[];
  if (request.jobs !== undefined) {
    let needs;
    try {
      needs = parseJobSpecs(request.jobs);
    } catch (error) {
      if (error instanceof JobSpecError) refuse([error.message], 'invalid-request');
      throw error;
    }
    const plan = planMigLayout(table!, needs!, current);
    planned = plan.instances;
    result.unplaced = plan.unplaced;
  } else {
    planned = layoutFromProfiles(table!, device.name, current, request.layout!, refuse);
  }
  result.planned = planned.map((p) => ({
    profile: p.profile,
    profileId: p.profileId,
    placement: p.placement,
    jobId: p.jobId,
    gpuInstanceId: p.gpuInstanceId ?? null,
    ...(p.busy ? { busy: { pids: p.busy.pids, memoryFreeBytes: p.busy.memoryFreeBytes } } : {}),
    ...(p.mps ? { mps: p.mps.map((m) => ({ ...m })) } : {}),
  }));
  const problems = validateMigLayout(table!, planned).problems;
  if (problems.length > 0) refuse(problems.map((p) => `The planned layout is not valid on ${device.name}: ${p}.`), 'invalid-request');

  const commands = migCommands(current, planned, gpu);
  result.commands = commands.map((c) => c.argv.join(' '));
  const blockers: string[] = [];
  if (!device.migMode!.current) blockers.push(MIG_MODE_OFF(gpu));
  const kept = new Set(planned.flatMap((p) => (p.gpuInstanceId === undefined ? [] : [p.gpuInstanceId])));
  const changed = current.filter((c) => !kept.has(c.gpuInstanceId!));
  if (changed.length > 0) {
    const processes = deps.nvml.sampleDevice(gpu).processes;
    for (const slice of changed) {
      for (const p of processes.filter((x) => x.gpuInstanceId === slice.gpuInstanceId)) {
        const who = deps.identify(p.pid);
        const what = who.argv.length ? who.argv.join(' ') : (who.command ?? '?');
        blockers.push(`GPU ${gpu} slice ${slice.profile} (GI ${slice.gpuInstanceId}) is in use by pid ${p.pid} (${who.user ?? '?'}: ${what})`);
      }
      const daemonUser = daemons.get(slice.gpuInstanceId!);
      if (daemonUser !== undefined) {
        blockers.push(`GPU ${gpu} slice ${slice.profile} (GI ${slice.gpuInstanceId}) has an MPS daemon running (user ${daemonUser}): stop it first (\`gpushare mps stop --gpu ${gpu} --gi ${slice.gpuInstanceId}\` for gpushare's own; it stops by itself when the slice's last MPS job ends)`);
      }
    }
  }
  const privilege = executor.privilegeProblem();
  if (privilege && commands.length > 0) blockers.push(privilege);
  result.blockers = blockers;

  if (request.dryRun || commands.length === 0) {
    result.layout = readMigLayout(gpu, deps);
    return result;
  }
  if (blockers.length > 0) refuse(blockers, privilege && blockers.length === 1 ? 'forbidden' : 'conflict');

  const run = await executor.run(commands);
  result.layout = readMigLayout(gpu, deps);
  if (!run.ok) {
    refuse([`Applying the MIG layout on GPU ${gpu} stopped after ${run.done} of ${commands.length} commands: ${run.failure}`]);
  }
  result.applied = true;
  return result;
}

/** Today's slices with processes (or an MPS daemon) in them, and the memory each leaves free now (what a job beside it gets). */
export function markBusy(current: MigInstance[], sample: DeviceSample, withMpsDaemon: ReadonlySet<number> = new Set()): void {
  for (const instance of current) {
    const pids = sample.processes.filter((p) => p.gpuInstanceId === instance.gpuInstanceId).map((p) => p.pid);
    if (pids.length === 0 && !withMpsDaemon.has(instance.gpuInstanceId!)) continue;
    const slice = sample.migDevices.find((d) => d.gpuInstanceId === instance.gpuInstanceId);
    const used = slice?.memoryUsed ?? sample.processes.filter((p) => p.gpuInstanceId === instance.gpuInstanceId).reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
    // a slice whose size the driver does not say has nothing known to be free
    instance.busy = { pids: [...new Set(pids)], memoryFreeBytes: slice?.memoryTotal == null ? 0 : Math.max(0, slice.memoryTotal - used) };
  }
}

function emptyResult(request: MigApplyRequest): MigApplyResult {
  return { gpu: request.gpu, dryRun: request.dryRun ?? false, applied: false, planned: [], unplaced: [], commands: [], blockers: [], layout: null };
}

/**
 * "3g.40gb@4", "2g.20gb": the whole layout wanted. Instances that exist with that profile (and start, if
 * given) are kept; the rest are placed in the free slices, largest first, searching every allowed start.
 */
function layoutFromProfiles(
  table: MigProfileTable,
  name: string,
  current: MigInstance[],
  specs: string[],
  refuse: (blockers: string[], kind?: MigApplyRefused['kind']) => never,
): MigInstance[] {
  const wanted = specs.map((spec) => {
    const [profileName, at] = spec.split('@');
    const profile = table.profiles.find((p) => p.name === profileName);
    if (!profile) refuse([`profile ${profileName} does not exist on ${name} (its profiles: ${table.profiles.map((p) => p.name).join(', ')})`], 'invalid-request');
    return { profile: profile!, start: at === undefined ? null : Number(at) };
  });
  const layout: MigInstance[] = [];
  const unused = [...current];
  const toPlace: typeof wanted = [];
  for (const w of wanted) {
    const i = unused.findIndex((c) => c.profileId === w.profile.id && (w.start === null || c.placement.start === w.start));
    if (i >= 0) layout.push({ ...unused.splice(i, 1)[0] });
    else toPlace.push(w);
  }
  let used = 0;
  for (const k of layout) used |= mask(k.placement.start, k.placement.size);
  toPlace.sort((a, b) => b.profile.memorySlices - a.profile.memorySlices);
  const placed = placeAll(toPlace, 0, used, table.memorySlices);
  if (!placed) refuse([`The layout ${specs.join(', ')} does not fit on ${name} next to the instances it keeps (${table.memorySlices} memory slices).`], 'invalid-request');
  placed!.forEach((start, i) => layout.push(instanceAt(toPlace[i].profile, start)));
  return layout.sort((a, b) => a.placement.start - b.placement.start);
}

const mask = (start: number, size: number): number => ((1 << size) - 1) << start;

function placeAll(items: Array<{ profile: MigProfile; start: number | null }>, i: number, used: number, slices: number): number[] | null {
  if (i === items.length) return [];
  const { profile, start } = items[i];
  const starts = start === null ? [...profile.placementStarts].reverse() : [start];
  for (const s of starts) {
    if (!profile.placementStarts.includes(s) || s + profile.memorySlices > slices) continue;
    const m = mask(s, profile.memorySlices);
    if (used & m) continue;
    const rest = placeAll(items, i + 1, used | m, slices);
    if (rest) return [s, ...rest];
  }
  return null;
}

const instanceAt = (profile: MigProfile, start: number): MigInstance => ({
  profile: profile.name,
  profileId: profile.id,
  placement: { start, size: profile.memorySlices },
  jobId: null,
});
