// From today's MIG layout to the planned one as `nvidia-smi mig` command lines, in an order the driver accepts.
import type { MigInstance } from './layout.js';

export interface MigCommand {
  argv: string[];
  /** What it does, for people reading the plan. */
  why: string;
}

const smi = (...args: (string | number)[]): string[] => ['nvidia-smi', 'mig', ...args.map(String)];

/**
 * Why creation order matters: a GPU instance takes memory slices that must all be free at that moment,
 * and without an explicit placement the driver picks the first free one, so small instances made first
 * can leave no aligned run for a larger one (a 1g at slice 0 and another at 4 block both 3g placements).
 * Hence: destroy first, compute instances before their GPU instance (-dgi refuses while any exist); then
 * create each GPU instance at its explicit PROFILE:START, largest first (the order that leaves aligned room
 * for what follows); -C makes its default compute instance, without which no MIG device appears.
 * The tuple syntax "<profile name or id>:<placement start>" is what `nvidia-smi mig -cgi` documents.
 */
export function migCommands(current: MigInstance[], planned: MigInstance[], gpu = 0): MigCommand[] {
  const keptIds = new Set(planned.flatMap((p) => (p.gpuInstanceId === undefined ? [] : [p.gpuInstanceId])));
  const commands: MigCommand[] = [];

  for (const gone of current.filter((c) => c.gpuInstanceId !== undefined && !keptIds.has(c.gpuInstanceId))) {
    for (const ci of gone.computeInstanceIds ?? []) {
      commands.push({ argv: smi('-dci', '-i', gpu, '-gi', gone.gpuInstanceId!, '-ci', ci), why: `free ${gone.profile} at ${gone.placement.start}: its compute instance ${ci}` });
    }
    commands.push({ argv: smi('-dgi', '-i', gpu, '-gi', gone.gpuInstanceId!), why: `free memory slices ${span(gone)} (${gone.profile})` });
  }

  for (const kept of planned.filter((p) => p.gpuInstanceId !== undefined && (p.computeInstanceIds ?? []).length === 0)) {
    commands.push({ argv: smi('-cci', '-i', gpu, '-gi', kept.gpuInstanceId!), why: `give the kept ${kept.profile} at ${kept.placement.start} its compute instance` });
  }

  const created = planned
    .filter((p) => p.gpuInstanceId === undefined)
    .sort((a, b) => b.placement.size - a.placement.size || a.placement.start - b.placement.start);
  for (const instance of created) {
    commands.push({
      argv: smi('-i', gpu, '-cgi', `${instance.profileId}:${instance.placement.start}`, '-C'),
      why: `${instance.profile} on memory slices ${span(instance)}${instance.jobId ? ` for ${instance.jobId}` : ''}`,
    });
  }
  return commands;
}

const span = (i: MigInstance): string =>
  i.placement.size === 1 ? String(i.placement.start) : `${i.placement.start}-${i.placement.start + i.placement.size - 1}`;
