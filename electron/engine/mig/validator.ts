// Checks a MIG layout and a command list against the profile table, on its own: it shares no rule code
// with the planner or the command builder, so a mistake in one is caught by the other.
import type { MigInstance, MigJobNeed } from './layout.js';
import type { MigProfile, MigProfileTable } from './profiles.js';

export interface MigValidation {
  ok: boolean;
  problems: string[];
}

const where = (i: MigInstance): string => `${i.profile} at ${i.placement.start}:${i.placement.size}`;

/** Is every instance a legal placement, together within the GPU's slices and instance counts (and do jobs fit)? */
export function validateMigLayout(table: MigProfileTable, layout: MigInstance[], jobs?: MigJobNeed[]): MigValidation {
  const problems: string[] = [];
  const owner: (string | null)[] = new Array(table.memorySlices).fill(null);
  const perProfile = new Map<number, number>();
  let computeSlices = 0;
  const holders = new Map<string, number>();

  for (const instance of layout) {
    const profile = table.profiles.find((p) => p.id === instance.profileId);
    if (!profile) {
      problems.push(`${where(instance)}: profile id ${instance.profileId} is not offered on ${table.model}`);
      continue;
    }
    if (profile.name !== instance.profile) problems.push(`${where(instance)}: profile id ${profile.id} is ${profile.name} on ${table.model}`);
    const { start, size } = instance.placement;
    if (size !== profile.memorySlices) problems.push(`${where(instance)}: ${profile.name} spans ${profile.memorySlices} memory slices, not ${size}`);
    if (!profile.placementStarts.includes(start)) {
      problems.push(`${where(instance)}: ${profile.name} may start only at {${profile.placementStarts.join(',')}}`);
    }
    if (!Number.isInteger(start) || start < 0 || start + profile.memorySlices > table.memorySlices) {
      problems.push(`${where(instance)}: runs past the GPU's ${table.memorySlices} memory slices`);
    } else {
      for (let s = start; s < start + profile.memorySlices; s++) {
        if (owner[s] !== null) problems.push(`${where(instance)}: memory slice ${s} is already used by ${owner[s]}`);
        else owner[s] = where(instance);
      }
    }
    computeSlices += profile.computeSlices;
    perProfile.set(profile.id, (perProfile.get(profile.id) ?? 0) + 1);
    if (instance.jobId !== null) {
      holders.set(instance.jobId, (holders.get(instance.jobId) ?? 0) + 1);
      const job = jobs?.find((j) => j.id === instance.jobId);
      if (jobs && !job) problems.push(`${where(instance)}: holds unknown job ${instance.jobId}`);
      if (job) problems.push(...jobMisfit(table, profile, job).map((p) => `${where(instance)}: job ${job.id} ${p}`));
    }
  }
  if (computeSlices > table.computeSlices) problems.push(`the instances use ${computeSlices} compute slices; ${table.model} has ${table.computeSlices}`);
  for (const [id, count] of perProfile) {
    const profile = table.profiles.find((p) => p.id === id)!;
    if (count > profile.maxInstances) problems.push(`${count} instances of ${profile.name}; at most ${profile.maxInstances} may exist`);
  }
  for (const [job, count] of holders) if (count > 1) problems.push(`job ${job} is in ${count} instances`);
  return { ok: problems.length === 0, problems };
}

function jobMisfit(table: MigProfileTable, profile: MigProfile, job: MigJobNeed): string[] {
  const misfits: string[] = [];
  const bytes = job.memoryBytes ?? (job.memoryMiB ?? 0) * 1024 * 1024;
  if (bytes > profile.memoryMiB * 1024 * 1024) misfits.push(`needs ${bytes} bytes, more than ${profile.memoryMiB} MiB`);
  const wholeGpuSms = table.profiles.reduce((most, p) => Math.max(most, p.smCount), 0);
  if ((job.smShare ?? 0) * wholeGpuSms > profile.smCount + 1e-9) misfits.push(`needs ${job.smShare} of ${wholeGpuSms} SMs, more than ${profile.smCount}`);
  return misfits;
}

interface SimulatedInstance {
  profile: MigProfile;
  start: number;
  computeInstances: Set<number>;
}

/**
 * Would the driver accept these `nvidia-smi mig` command lines, one after the other, starting from today's
 * layout? Replays them on a model of the GPU: compute instances go before their GPU instance, every new GPU
 * instance names its placement and finds it free. With `expected`, the end state must be that layout.
 */
export function validateMigCommands(
  table: MigProfileTable,
  current: MigInstance[],
  commands: string[][],
  expected?: MigInstance[],
): MigValidation {
  const problems: string[] = [];
  const gpu = new Map<number, SimulatedInstance>();
  for (const c of current) {
    const profile = table.profiles.find((p) => p.id === c.profileId);
    if (!profile || c.gpuInstanceId === undefined) {
      problems.push(`today's ${where(c)} has no known profile or GPU instance id`);
      continue;
    }
    gpu.set(c.gpuInstanceId, { profile, start: c.placement.start, computeInstances: new Set(c.computeInstanceIds ?? []) });
  }
  let nextId = Math.max(0, ...gpu.keys()) + 1;
  let gpuIndex: string | undefined;

  commands.forEach((argv, n) => {
    const at = `command ${n + 1} (${argv.join(' ')})`;
    if (argv[0] !== 'nvidia-smi' || argv[1] !== 'mig') {
      problems.push(`${at}: not an nvidia-smi mig command`);
      return;
    }
    const flags = new Map<string, string | true>();
    for (let k = 2; k < argv.length; k++) {
      const flag = argv[k];
      if (['-i', '-gi', '-ci', '-cgi'].includes(flag)) flags.set(flag, argv[++k] ?? '');
      else if (['-dci', '-dgi', '-cci', '-C'].includes(flag)) flags.set(flag, true);
      else problems.push(`${at}: unexpected argument "${flag}"`);
    }
    const index = flags.get('-i');
    if (typeof index !== 'string') problems.push(`${at}: no -i GPU, so it would act on every GPU`);
    else if (gpuIndex === undefined) gpuIndex = index;
    else if (index !== gpuIndex) problems.push(`${at}: GPU ${index}, but the others act on GPU ${gpuIndex}`);

    const giText = flags.get('-gi');
    const gi = typeof giText === 'string' ? Number(giText) : undefined;
    const target = gi === undefined ? undefined : gpu.get(gi);
    if (flags.has('-dci')) {
      const ci = Number(flags.get('-ci'));
      if (!target) problems.push(`${at}: no GPU instance ${giText}`);
      else if (!flags.has('-ci') || !target.computeInstances.delete(ci)) problems.push(`${at}: GPU instance ${gi} has no compute instance ${flags.get('-ci')}`);
    } else if (flags.has('-dgi')) {
      if (!target) problems.push(`${at}: no GPU instance ${giText}`);
      else if (target.computeInstances.size > 0) problems.push(`${at}: GPU instance ${gi} still has compute instances; destroy them first`);
      else gpu.delete(gi!);
    } else if (flags.has('-cgi')) {
      const created = createGpuInstance(table, gpu, String(flags.get('-cgi')));
      if (typeof created === 'string') problems.push(`${at}: ${created}`);
      else gpu.set(nextId++, { ...created, computeInstances: new Set(flags.has('-C') ? [0] : []) });
    } else if (flags.has('-cci')) {
      if (!target) problems.push(`${at}: no GPU instance ${giText}`);
      else if (target.computeInstances.size > 0) problems.push(`${at}: GPU instance ${gi} already has its compute instance`);
      else target.computeInstances.add(0);
    } else {
      problems.push(`${at}: neither creates nor destroys an instance`);
    }
  });

  for (const [id, instance] of gpu) {
    if (instance.computeInstances.size === 0) problems.push(`GPU instance ${id} (${instance.profile.name} at ${instance.start}) ends with no compute instance, so no MIG device appears`);
  }
  if (expected) {
    const have = [...gpu.values()].map((g) => `${g.profile.id}@${g.start}`).sort();
    const want = expected.map((e) => `${e.profileId}@${e.placement.start}`).sort();
    if (have.join(' ') !== want.join(' ')) problems.push(`the commands end with [${have.join(', ')}], not the planned [${want.join(', ')}] (profile id@start)`);
  }
  return { ok: problems.length === 0, problems };
}

/** `-cgi PROFILE:START` on the simulated GPU: the new instance, or why the driver would refuse it. */
function createGpuInstance(table: MigProfileTable, gpu: Map<number, SimulatedInstance>, spec: string): Omit<SimulatedInstance, 'computeInstances'> | string {
  const [name, startText, extra] = spec.split(':');
  if (extra !== undefined || spec.includes(',')) return `create one GPU instance per command, as PROFILE:START, not "${spec}"`;
  const profile = table.profiles.find((p) => String(p.id) === name || p.name === name || `MIG ${p.name}` === name);
  if (!profile) return `no profile "${name}" on ${table.model}`;
  if (startText === undefined) return `${profile.name} has no explicit placement, so the driver would choose one`;
  const start = Number(startText);
  if (!profile.placementStarts.includes(start)) return `${profile.name} cannot start at ${startText} (allowed {${profile.placementStarts.join(',')}})`;
  const end = start + profile.memorySlices;
  if (end > table.memorySlices) return `${profile.name} at ${start} runs past memory slice ${table.memorySlices - 1}`;
  for (const other of gpu.values()) {
    if (start < other.start + other.profile.memorySlices && other.start < end) {
      return `memory slices ${start}-${end - 1} overlap ${other.profile.name} at ${other.start}; destroy it first`;
    }
  }
  const compute = [...gpu.values()].reduce((sum, g) => sum + g.profile.computeSlices, 0);
  if (compute + profile.computeSlices > table.computeSlices) return `only ${table.computeSlices - compute} compute slices are free for ${profile.name}`;
  const count = [...gpu.values()].filter((g) => g.profile.id === profile.id).length;
  if (count >= profile.maxInstances) return `${profile.name} already has its ${profile.maxInstances} instance(s)`;
  return { profile, start };
}
