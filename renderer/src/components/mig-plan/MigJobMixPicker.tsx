// The job mix to plan for: queued jobs (by their declared memory and priority) and typed specs.
import { SIZE_HELP } from '../../../../shared/byte-size.js';
import type { JobView } from '../../../../shared/jobs.js';
import { jobSpecOf, planMigLayout } from '../../actions/mig-plan-actions.js';
import { shortCommand } from '../../format.js';
import { useMigPlan } from '../../stores/hooks.js';
import { migPlanStore } from '../../stores/mig-plan-store.js';

export function MigJobMixPicker({ queued }: { queued: readonly JobView[] }) {
  const picked = useMigPlan((s) => s.pickedJobs);
  const typed = useMigPlan((s) => s.typedSpecs);
  const dryRun = useMigPlan((s) => s.dryRun);
  const busy = useMigPlan((s) => s.busy);
  const toggle = (id: string): void =>
    migPlanStore.setState((s) => ({ pickedJobs: s.pickedJobs.includes(id) ? s.pickedJobs.filter((j) => j !== id) : [...s.pickedJobs, id] }));
  return (
    <form
      className="mix-picker"
      onSubmit={(e) => {
        e.preventDefault();
        void planMigLayout(queued, 'plan');
      }}
    >
      <h3>Job mix</h3>
      <fieldset className="mix-jobs">
        <legend className="stat-label">Queued jobs</legend>
        {queued.length === 0 && <span className="muted">No queued jobs; type specs below.</span>}
        {queued.map((job) => {
          const spec = jobSpecOf(job);
          return (
            <label key={job.id} className="mix-job" title={spec ? `planned as ${spec}` : 'declares no memory: give it a request or a quota'}>
              <input type="checkbox" checked={picked.includes(job.id)} onChange={() => toggle(job.id)} />
              <b>{job.id}</b>
              <span className="job-command">{shortCommand(job.argv, null)}</span>
              <span className="muted">{spec ?? 'no memory declared'}</span>
            </label>
          );
        })}
      </fieldset>
      <label className="mix-specs">
        <span className="stat-label">Job specs</span>
        <input type="text" placeholder="30G,10G:0.2,20G@high" aria-label="Job specs" value={typed} onChange={(e) => migPlanStore.setState({ typedSpecs: e.target.value })} />
        <span className="muted">MEMORY[:SM SHARE][@PRIORITY], comma-separated; {SIZE_HELP} (profile names are nominal)</span>
      </label>
      <div className="mix-actions">
        <button type="submit" className="primary" disabled={busy !== null}>{busy === 'planning' ? 'Planning…' : 'Plan'}</button>
        <button type="button" disabled={busy !== null} onClick={() => void planMigLayout(queued, 'apply')}>
          {busy === 'applying' ? 'Applying…' : dryRun ? 'Apply (dry run)' : 'Apply'}
        </button>
        <label className="dry-run">
          <input type="checkbox" checked={dryRun} onChange={(e) => migPlanStore.setState({ dryRun: e.target.checked })} /> dry run: only list the commands
        </label>
      </div>
    </form>
  );
}
