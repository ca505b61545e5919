// `gpushare mig plan`: a MIG layout for a job mix on one GPU model, and the commands that make it.
import { migCommands } from '../../engine/mig/commands.js';
import { JOB_SPEC_HELP, JobSpecError, parseJobSpecs } from '../../engine/mig/job-spec.js';
import type { MigInstance, MigJobNeed } from '../../engine/mig/layout.js';
import { planMigLayout } from '../../engine/mig/planner.js';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable } from '../../engine/mig/profiles.js';
import { parseFlags, UsageError } from '../args.js';

export const migUsage = `Usage: gpushare mig plan --model MODEL --jobs SPEC[,SPEC…] [--gpu N] [--json]
  --model MODEL        ${BUILT_IN_MIG_MODELS.join(', ')} (or a name like "NVIDIA H100 80GB HBM3")
  --jobs SPEC,…        each MEMORY[:SMSHARE][@PRIORITY], e.g. 30G,10G:0.2,20G@high
                       MEMORY 20G or 20GB (decimal, as profile names are: 1g.10gb holds 10G), or 20GiB
                       SMSHARE 0-1 or 1-100% of the GPU's SMs; PRIORITY high, normal or best-effort
  --gpu N              GPU index for the printed nvidia-smi commands (default 0)
  --json               the plan as JSON (for scripts)`;

export async function migCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(migUsage + '\n');
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'plan') throw new UsageError(`Unknown mig subcommand "${sub}"; \`gpushare mig plan\` is the one there is.\n${migUsage}`);
  return migPlan(rest);
}

function migPlan(argv: string[]): number {
  const { values, positionals } = parseFlags(argv, {
    model: { type: 'string' },
    jobs: { type: 'string' },
    gpu: { type: 'string' },
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

  const plan = planMigLayout(table, jobs);
  const commands = migCommands([], plan.instances, gpu);
  if (values.json) {
    const out = {
      model: table.model,
      slices: plan.instances.map((s) => ({ profile: s.profile, profileId: s.profileId, placement: s.placement, job: describe(s.jobId) })),
      unplaced: plan.unplaced.map((u) => ({ job: describe(u.jobId), reason: u.reason })),
      commands: commands.map((c) => c.argv.join(' ')),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return 0;
  }

  const lines = [`MIG plan for ${table.model} (${table.memorySlices} memory slices, ${table.computeSlices} compute slices)`, ''];
  if (plan.instances.length === 0) lines.push('  No job fits.');
  else lines.push(...instanceRows(plan.instances, (id) => (id === null ? 'idle' : `${id}  ${describe(id)!.spec}`)));
  if (plan.unplaced.length > 0) {
    lines.push('', 'Not placed:');
    for (const u of plan.unplaced) lines.push(`  ${u.jobId}  ${describe(u.jobId)!.spec}: ${u.reason}`);
  }
  if (commands.length > 0) {
    lines.push('', `Commands (as root, with GPU ${gpu} in MIG mode and idle; \`gpushare mig apply\` is not there yet):`);
    for (const c of commands) lines.push(`  ${c.argv.join(' ')}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
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
