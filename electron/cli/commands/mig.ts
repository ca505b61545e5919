// `gpushare mig plan`: a MIG layout for a job mix on one GPU model, and the commands that make it.
import type { MigApplyResult, MigLayoutView } from '../../../shared/spatial.js';
import { openGpuBackend } from '../../engine/gpu/open-backend.js';
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { applyMigLayout, MigApplyRefused, readMigLayout } from '../../engine/mig/apply.js';
import { migCommands } from '../../engine/mig/commands.js';
import { DryRunMigExecutor } from '../../engine/mig/executor.js';
import { ProcTable } from '../../engine/proc/proc-table.js';
import { connectToEngine, EngineUnavailableError } from '../engine-client.js';
import { JOB_SPEC_HELP, JobSpecError, parseJobSpecs } from '../../../shared/mig-job-spec.js';
import type { MigInstance, MigJobNeed } from '../../engine/mig/layout.js';
import { planMigLayout } from '../../engine/mig/planner.js';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable } from '../../engine/mig/profiles.js';
import { parseFlags, UsageError } from '../args.js';
import { formatByteSize } from '../../../shared/byte-size.js';
import { checkGpuIndex, checkGpuOnEngine } from '../engine-snapshot.js';
import { migUsage } from '../usage.js';

export async function migCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`Which mig subcommand? plan, layout or apply.\n${migUsage}`);
  if (sub === 'plan') return migPlan(rest);
  if (sub === 'apply' || sub === 'layout') return migOnGpu(sub, rest);
  throw new UsageError(`Unknown mig subcommand "${sub}": plan, layout or apply.\n${migUsage}`);
}

function migPlan(argv: string[]): number {
  const { values, positionals } = parseFlags(argv, {
    model: { type: 'string' },
    jobs: { type: 'string' },
    gpu: { type: 'string' },
    'no-mps': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`gpushare mig plan takes no arguments, got "${positionals[0]}".`);
  if (values.model === undefined) throw new UsageError(`--model is missing: one of ${BUILT_IN_MIG_MODELS.join(', ')}.`);
  if (values.jobs === undefined) throw new UsageError(`--jobs is missing: ${JOB_SPEC_HELP}, separated by commas (e.g. --jobs 30G,10G:0.2,20G@high).`);
  const table = builtInMigProfileTable(values.model);
  if (!table) throw new UsageError(`Unknown GPU model "${values.model}": MIG tables are built in for ${BUILT_IN_MIG_MODELS.join(', ')}.`);
  const gpu = values.gpu === undefined ? 0 : Number(values.gpu);
  if (!/^\d+$/.test(values.gpu ?? '0')) throw new UsageError(`--gpu must be a GPU index (0, 1, …), got "${values.gpu}".`);

  let jobs: MigJobNeed[];
  try {
    jobs = parseJobSpecs(values.jobs);
  } catch (error) {
    if (error instanceof JobSpecError) throw new UsageError(error.message);
    throw error;
  }
  const specs = values.jobs.split(',').map((s) => s.trim());
  const describe = (id: string | null) => {
    if (id === null) return null;
    const i = jobs.findIndex((j) => j.id === id);
    return { id, spec: specs[i], priority: jobs[i].priority ?? 'normal' };
  };

  const plan = planMigLayout(table, jobs, [], { mps: !values['no-mps'] });
  const commands = migCommands([], plan.instances, gpu);
  if (values.json) {
    const out = {
      model: table.model,
      slices: plan.instances.map((s) => ({
        profile: s.profile,
        profileId: s.profileId,
        placement: s.placement,
        job: describe(s.jobId),
        ...(s.mps ? { mps: s.mps.map((m) => ({ ...describe(m.jobId), activeThreadPercentage: m.activeThreadPercentage })) } : {}),
      })),
      unplaced: plan.unplaced.map((u) => ({ job: describe(u.jobId), reason: u.reason })),
      commands: commands.map((c) => c.argv.join(' ')),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return 0;
  }

  const lines = [`MIG plan for ${table.model} (${table.memorySlices} memory slices, ${table.computeSlices} compute slices)`, ''];
  if (plan.instances.length === 0) lines.push('  No job fits.');
  else {
    const rows = plan.instances.map((s) => (s.mps ? { ...s, jobId: s.mps.map((m) => m.jobId).join('+') } : s));
    const jobCell = (id: string | null) => (id === null ? 'idle' : id.includes('+') ? `${id}  (MPS)` : `${id}  ${describe(id)!.spec}`);
    lines.push(...instanceRows(rows, jobCell));
  }
  lines.push(...runLines(plan.instances, null));
  if (plan.unplaced.length > 0) {
    lines.push('', 'Not placed:');
    for (const u of plan.unplaced) lines.push(`  ${u.jobId}  ${describe(u.jobId)!.spec}: ${u.reason}`);
  }
  if (commands.length > 0) {
    lines.push('', `Commands (as root, with GPU ${gpu} in MIG mode and idle; \`gpushare mig apply\` runs them):`);
    for (const c of commands) lines.push(`  ${c.argv.join(' ')}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

type PlannedForRun = { profile: string; placement: { start: number }; jobId?: string | null; gpuInstanceId?: number | null; mps?: Array<{ jobId: string; activeThreadPercentage: number }> };
type LayoutForRun = { gpu: number; slices: MigLayoutView['slices']; applied: boolean };

/**
 * The command that runs each placed job in its slice: after `mig apply` (or its dry run) every job, in a slice of its
 * own or sharing one through MPS with its SM share (the engine starts the slice's MPS daemon with the first); an offline
 * `mig plan` only the MPS groups. `layout`: the slices as they are after applying (or today's, where a dry run keeps
 * them), for their UUIDs; null: no box.
 */
export function runLines(planned: PlannedForRun[], layout: LayoutForRun | null): string[] {
  const uuidOf = (p: PlannedForRun): string | undefined => {
    const exists = layout !== null && (layout.applied || (p.gpuInstanceId ?? null) !== null);
    return exists ? layout.slices.find((s) => s.profile === p.profile && s.placement.start === p.placement.start)?.uuids[0] : undefined;
  };
  const whereUuid = (p: PlannedForRun) => `    (MIG-UUID: the ${p.profile} slice's once it is created; gpushare mig layout${layout ? ` --gpu ${layout.gpu}` : ''} lists it)`;
  const lines: string[] = [];
  const alone = layout === null ? [] : planned.filter((p) => !p.mps && p.jobId);
  if (alone.length > 0) {
    lines.push('', 'Run each job in its slice:');
    for (const p of alone) {
      const uuid = uuidOf(p);
      lines.push(`    ${p.jobId}: gpushare run --mig-slice ${uuid ?? 'MIG-UUID'} -- COMMAND`);
      if (!uuid) lines.push(whereUuid(p));
    }
  }
  const shared = planned.filter((p) => p.mps);
  if (shared.length > 0) lines.push('', 'Shared through MPS (more jobs placed than one slice each allows); run each job in its slice with its SM share:');
  for (const p of shared) {
    lines.push(`  ${p.profile} at ${p.placement.start}: ${p.mps!.map((m) => `${m.jobId} ${m.activeThreadPercentage}%`).join(', ')}`);
    const uuid = uuidOf(p);
    for (const m of p.mps!) lines.push(`    ${m.jobId}: gpushare run --mig-slice ${uuid ?? 'MIG-UUID'} --mps-share ${m.activeThreadPercentage} -- COMMAND`);
    if (!uuid) lines.push(whereUuid(p));
  }
  return lines;
}

function instanceRows(instances: MigInstance[], job: (id: string | null) => string): string[] {
  const rows = [['SLICES', 'PROFILE', 'ID', 'PLACEMENT', 'JOB']];
  for (const s of instances) {
    const end = s.placement.start + s.placement.size - 1;
    rows.push([s.placement.size === 1 ? `${end}` : `${s.placement.start}-${end}`, s.profile, String(s.profileId), `${s.placement.start}:${s.placement.size}`, job(s.jobId)]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => '  ' + r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  '));
}

/** `mig layout` and `mig apply`: through the running engine, or on the GPUs directly (--simulate, --dry-run). */
async function migOnGpu(sub: 'apply' | 'layout', argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { gpu: { type: 'string' }, jobs: { type: 'string' }, layout: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' }, simulate: { type: 'string' } },
    { simulate: POINTED_BOX },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare mig ${sub} takes no arguments, got "${positionals[0]}".`);
  if (values.gpu === undefined || !/^\d+$/.test(values.gpu)) throw new UsageError(`--gpu N is needed: the index of the GPU${values.gpu === undefined ? '' : `, got "${values.gpu}"`}.`);
  const gpu = Number(values.gpu);
  const dryRun = values['dry-run'] ?? false;
  if (sub === 'apply' && (values.jobs === undefined) === (values.layout === undefined)) {
    throw new UsageError('Give --jobs (specs to plan for, e.g. 30G,10G:0.2) or --layout (profiles, e.g. 3g.40gb@4,2g.20gb), one of them.');
  }
  const request = { gpu, jobs: values.jobs, layout: values.layout?.split(',').map((p) => p.trim()), dryRun };

  let result: MigApplyResult | MigLayoutView;
  // the running engine's GPUs are the ones a real apply changes, so a dry run asks it too; without one,
  // a dry run reads the driver directly
  const engine = values.simulate === undefined ? await connectToEngine().catch((error: Error) => {
    if (!(error instanceof EngineUnavailableError)) throw error;
    if (sub === 'apply' && dryRun) return null;
    throw new Error(`${error.message}\nWithout an engine: \`gpushare mig ${sub} --simulate\`${sub === 'apply' ? ' or --dry-run' : ''}.`);
  }) : null;
  if (engine) {
    try {
      await checkGpuOnEngine(engine, gpu);
      result = sub === 'layout' ? await engine.call('mig.layout', { gpu }) : await engine.call('mig.apply', request);
    } finally {
      engine.close();
    }
  } else {
    const backend = await openGpuBackend({ simulate: values.simulate });
    try {
      const deps = { nvml: backend.nvml, identify: (pid: number) => new ProcTable().lookup(pid) };
      checkGpuIndex(backend.nvml.deviceCount(), gpu);
      if (sub === 'layout') {
        result = readMigLayout(gpu, deps);
      } else {
        const executor = dryRun ? new DryRunMigExecutor() : backend.migExecutor();
        result = await applyMigLayout(request, deps, executor).catch((error: unknown) => {
          if (error instanceof MigApplyRefused) throw new Error(`${error.message}${error.result.commands.length ? `\nCommands:\n${error.result.commands.map((c) => `  ${c}`).join('\n')}` : ''}`);
          throw error;
        });
      }
    } finally {
      backend.close();
    }
  }
  if (values.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  else process.stdout.write(('slices' in result ? renderLayout(result) : renderApply(result)) + '\n');
  return 0;
}

function renderLayout(layout: MigLayoutView): string {
  if (layout.migEnabled === null) return `GPU ${layout.gpu} (${layout.name}) does not support MIG.`;
  if (!layout.migEnabled) return `GPU ${layout.gpu} (${layout.name}): MIG mode is off (enable: sudo nvidia-smi -i ${layout.gpu} -mig 1).`;
  const lines = [`GPU ${layout.gpu} (${layout.name}) MIG layout${layout.freeMemorySlices.length ? ` — free memory slices ${layout.freeMemorySlices.join(',')}` : ''}`];
  const instances = layout.slices.map((s) => ({ profile: s.profile, profileId: s.profileId, placement: s.placement, jobId: `GI ${s.gpuInstanceId}` }));
  const rows = instanceRows(instances, (id) => id ?? '');
  lines.push(...rows.map((row, i) => {
    if (i === 0) return `${row.replace(/JOB$/, 'GI  ')}  UUID / PROCESSES`;
    const s = layout.slices[i - 1];
    const procs = s.processes.map((p) => `${p.pid} ${p.user ?? '?'} ${p.command ?? ''}`.trim()).join('; ');
    const sm = s.smPercent === undefined || s.smPercent === null ? '' : `  SM ${Math.round(s.smPercent)}%`;
    return `${row}  ${s.uuids.join(',')}${sm}${procs ? `  ${procs}` : ''}`;
  }));
  return lines.join('\n');
}

function renderApply(result: MigApplyResult): string {
  const lines = [`GPU ${result.gpu}: ${result.applied ? 'MIG layout applied' : result.dryRun ? 'dry run (nothing changed)' : 'nothing to change'}`];
  if (result.commands.length) lines.push('', 'Commands:', ...result.commands.map((c) => `  ${c}`));
  lines.push(...runLines(result.planned, result.layout && { gpu: result.gpu, slices: result.layout.slices, applied: result.applied }));
  const beside = result.planned.filter((p) => p.busy && p.jobId !== null);
  if (beside.length) {
    lines.push('', 'Beside running work (the slice is busy and kept; the job gets only the memory free now):');
    for (const p of beside) lines.push(`  ${p.jobId}: ${p.profile} GI ${p.gpuInstanceId}, with ${p.busy!.pids.length ? `pid ${p.busy!.pids.join(', ')}` : 'its MPS daemon'}, ${formatByteSize(p.busy!.memoryFreeBytes)} free now`);
  }
  if (result.unplaced.length) lines.push('', 'Not placed:', ...result.unplaced.map((u) => `  ${u.jobId}: ${u.reason}`));
  if (result.blockers.length) lines.push('', 'Would block applying:', ...result.blockers.map((b) => `  ${b}`));
  if (result.layout) lines.push('', renderLayout(result.layout));
  return lines.join('\n');
}
