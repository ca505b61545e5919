// The Plan MIG view's requests: today's layout, a plan for the job mix (a dry run of mig.apply),
// and applying it. Refusals are shown as the engine words them ("needs root …", "in use by pid …").
import type { JobView } from '../../../shared/jobs.js';
import { JobSpecError, parseJobSpecs } from '../../../shared/mig-job-spec.js';
import { migPlanStore } from '../stores/mig-plan-store.js';
import { showNotice } from '../stores/ui-store.js';
import { engineApi } from './engine-api.js';

const GIB = 2 ** 30;
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A queued job as a spec the planner reads: its declared memory (binary GiB) and priority. */
export function jobSpecOf(job: JobView): string | null {
  const bytes = job.memoryRequestBytes ?? job.memoryQuotaBytes;
  if (bytes === null) return null;
  return `${Number((bytes / GIB).toFixed(2))}GiB@${job.priority}`;
}

export const typedSpecList = (typed: string): string[] => typed.split(',').map((s) => s.trim()).filter(Boolean);

/** The mix in order, as names for people and specs for the engine; or why it cannot be planned. */
export function jobMix(jobs: readonly JobView[], picked: readonly string[], typed: string): { names: string[]; specs: string[] } | string {
  const names: string[] = [];
  const specs: string[] = [];
  for (const id of picked) {
    const job = jobs.find((j) => j.id === id);
    if (!job) continue; // it started or ended meanwhile
    const spec = jobSpecOf(job);
    if (!spec) return `${job.id} declares no memory (neither a request nor a quota), so it cannot be planned for: give it one, or type a spec like 20G.`;
    names.push(job.id);
    specs.push(spec);
  }
  for (const spec of typedSpecList(typed)) {
    names.push(spec);
    specs.push(spec);
  }
  if (specs.length === 0) return 'Pick queued jobs or type job specs (e.g. 30G,10G:0.2) to plan a layout for.';
  try {
    parseJobSpecs(specs.join(',')); // the engine's own reading (20G = 20 GiB), so a typo is named before any request
  } catch (error) {
    if (error instanceof JobSpecError) return error.message;
    throw error;
  }
  return { names, specs };
}

export async function loadMigLayout(gpu: number): Promise<void> {
  migPlanStore.setState({ gpu, current: null, result: null, refusal: null, applyRefused: false });
  try {
    const current = await engineApi().call('mig.layout', { gpu });
    if (migPlanStore.getState().gpu === gpu) migPlanStore.setState({ current });
  } catch (error) {
    if (migPlanStore.getState().gpu === gpu) migPlanStore.setState({ refusal: messageOf(error) });
  }
}

/** Plan (always a dry run) or apply (a dry run while the toggle is on). */
export async function planMigLayout(jobs: readonly JobView[], action: 'plan' | 'apply'): Promise<void> {
  const { gpu, pickedJobs, typedSpecs, dryRun } = migPlanStore.getState();
  if (gpu === null) return;
  const mix = jobMix(jobs, pickedJobs, typedSpecs);
  if (typeof mix === 'string') {
    migPlanStore.setState({ refusal: mix, result: null, applyRefused: false });
    return;
  }
  const dry = action === 'plan' || dryRun;
  migPlanStore.setState({ busy: action === 'plan' ? 'planning' : 'applying', refusal: null, applyRefused: false });
  try {
    const result = await engineApi().call('mig.apply', { gpu, jobs: mix.specs.join(','), dryRun: dry });
    migPlanStore.setState({ result, mixNames: mix.names, busy: null, current: result.layout ?? migPlanStore.getState().current });
    if (result.applied) showNotice(`GPU ${gpu} now has the planned MIG layout (${result.commands.length} commands ran).`, 'info');
  } catch (error) {
    // a refused plan has no result: the earlier one must not sit under its error as if it were the answer
    if (dry) migPlanStore.setState({ busy: null, refusal: messageOf(error), result: null });
    else migPlanStore.setState({ busy: null, refusal: messageOf(error), applyRefused: true });
  }
}
