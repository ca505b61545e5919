// What the plan needs: the nvidia-smi commands in order, what blocks applying, the jobs that do not fit.
import type { MigApplyResult } from '../../../../shared/spatial.js';

interface Props {
  result: MigApplyResult;
  nameOf: (planId: string) => string;
  /** A real Apply of this plan was refused (the engine's reasons are shown above). */
  applyRefused: boolean;
}

export function MigPlanOutcome({ result, nameOf, applyRefused }: Props) {
  const verdict = applyRefused
    ? `Not applied: the engine refused Apply (its reasons are above). It would have run ${result.commands.length} command${result.commands.length === 1 ? '' : 's'}:`
    : result.applied
    ? `Applied: ${result.commands.length} command${result.commands.length === 1 ? '' : 's'} ran.`
    : result.commands.length === 0
      ? 'The GPU already has this layout: nothing to run.'
      : result.dryRun
        ? `Dry run: nothing was changed. Applying would run ${result.commands.length} command${result.commands.length === 1 ? '' : 's'}:`
        : 'Not applied.';
  return (
    <div className="plan-outcome">
      <p className={`plan-verdict${result.applied ? ' applied' : ''}`} role="status">{verdict}</p>
      {result.commands.length > 0 && (
        <ol className="plan-commands" aria-label="nvidia-smi commands">
          {result.commands.map((command, i) => (
            <li key={i}><code>{command}</code></li>
          ))}
        </ol>
      )}
      {result.blockers.length > 0 && (
        <div className="plan-blockers" aria-label="What blocks applying">
          <h3>Applying is blocked</h3>
          <ul>
            {result.blockers.map((b) => <li key={b}>{b}</li>)}
          </ul>
        </div>
      )}
      {result.unplaced.length > 0 && (
        <div className="plan-blockers">
          <h3>Does not fit</h3>
          <ul>
            {result.unplaced.map((u) => <li key={u.jobId}><b>{nameOf(u.jobId)}</b>: {u.reason}</li>)}
          </ul>
        </div>
      )}
    </div>
  );
}
