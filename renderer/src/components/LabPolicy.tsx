// The Lab policy view: where you stand (your limits and what your jobs use, your place in the
// fair-share queue) and the lab's rules. Everyone may read it; an administrator may edit it.
import { useEffect } from 'react';
import { LIMIT_KEYS, type LabLimit, type LabPolicyStatus, type LimitKey, type ResolvedLimits } from '../../../shared/lab-policy.js';
import { cancelLabPolicyEdit, editLabPolicy, loadLabPolicy, saveLabPolicy } from '../actions/lab-policy-actions.js';
import { formatBytes } from '../format.js';
import { labPolicyStore, useLabPolicy } from '../stores/lab-policy-store.js';
import './lab-policy.css';

const REFRESH_MS = 30_000;

const LIMIT_TITLES: Record<LimitKey, string> = {
  maxGpus: 'GPUs at once',
  maxMemory: 'GPU memory at once (managed jobs)',
  maxHighPriorityJobs: 'High-priority jobs at once',
  highPriorityGpuHoursPerDay: 'High-priority GPU-hours per 24 h',
};

/** Column heads of the rules table, where every limit is a column. */
const LIMIT_HEADS: Record<LimitKey, string> = { maxGpus: 'GPUs', maxMemory: 'Memory', maxHighPriorityJobs: 'High jobs', highPriorityGpuHoursPerDay: 'High GPU-h / 24 h' };

function limitValue(key: LimitKey, value: number): string {
  if (key === 'maxMemory') return formatBytes(value);
  return key === 'highPriorityGpuHoursPerDay' ? `${value} h` : String(value);
}

function used(key: LimitKey, you: LabPolicyStatus['you']): string {
  if (key === 'maxGpus') return String(you.using.gpus);
  if (key === 'maxMemory') return formatBytes(you.using.memoryBytes);
  if (key === 'maxHighPriorityJobs') return String(you.using.highPriorityJobs);
  return `${you.highPriorityGpuHoursToday.toFixed(1)} h`;
}

function YourLimits({ you }: { you: LabPolicyStatus['you'] }) {
  const limits: ResolvedLimits = you.limits;
  return (
    <table className="process-table lab-limits" aria-label="Your limits">
      <thead>
        <tr>
          <th>Limit</th>
          <th className="num">You use</th>
          <th className="num">Allowed</th>
          <th>From</th>
        </tr>
      </thead>
      <tbody>
        {LIMIT_KEYS.map((key) => {
          const limit = limits[key];
          return (
            <tr key={key} data-limit={key}>
              <td>{LIMIT_TITLES[key]}</td>
              <td className="num">{used(key, you)}</td>
              <td className="num">{limit ? limitValue(key, limit.value) : 'no limit'}</td>
              <td className="muted">{limit?.from ?? ''}</td>
            </tr>
          );
        })}
        <tr data-limit="defaultPriority">
          <td>Priority of your processes gpushare did not start</td>
          <td />
          <td className="num">{limits.defaultPriority?.value ?? 'normal'}</td>
          <td className="muted">{limits.defaultPriority?.from ?? ''}</td>
        </tr>
      </tbody>
    </table>
  );
}

function FairShare({ status }: { status: LabPolicyStatus }) {
  const { fairShare, policy, you } = status;
  if (!policy.fairShare.enabled) return <p className="muted">Fair share is off: the queue goes by priority, then submission order.</p>;
  const mine = fairShare.find((f) => f.user === you.user);
  return (
    <>
      <p className="lab-rank" aria-label="Your fair-share rank">
        {mine ? (
          <>
            Your place between users in the queue: <b>{mine.rank}</b> of {fairShare.length} ({mine.gpuHours.toFixed(1)} recent GPU-hours; usage {policy.fairShare.halfLifeHours} h old counts half).
          </>
        ) : (
          'Your usage is not known yet.'
        )}
      </p>
      <table className="process-table lab-fair-share" aria-label="Fair share">
        <thead>
          <tr>
            <th className="num">Rank</th>
            <th>User</th>
            <th className="num">Recent GPU-hours</th>
          </tr>
        </thead>
        <tbody>
          {fairShare.map((f) => (
            <tr key={f.user} className={f.user === you.user ? 'mine' : ''}>
              <td className="num">{f.rank}</td>
              <td>{f.user}</td>
              <td className="num">{f.gpuHours.toFixed(1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

const whom = (l: LabLimit): string => (l.user !== undefined ? `user ${l.user}` : l.group !== undefined ? `group ${l.group}` : 'everyone');

function LabRules({ status }: { status: LabPolicyStatus }) {
  const { limits, idleHolders } = status.policy;
  return (
    <>
      {limits.length === 0 ? (
        <p className="muted">No limits: every user may use every GPU.</p>
      ) : (
        <table className="process-table lab-rules" aria-label="The lab's limits">
          <thead>
            <tr>
              <th>For</th>
              {LIMIT_KEYS.map((key) => (
                <th key={key} className="num" title={LIMIT_TITLES[key]}>
                  {LIMIT_HEADS[key]}
                </th>
              ))}
              <th>Default priority</th>
            </tr>
          </thead>
          <tbody>
            {limits.map((l, i) => (
              <tr key={i}>
                <td>{whom(l)}</td>
                {LIMIT_KEYS.map((key) => (
                  <td key={key} className="num">{l[key] === undefined ? '' : limitValue(key, l[key]!)}</td>
                ))}
                <td>{l.defaultPriority ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="lab-idle">
        A process that holds GPU memory without computing for {idleHolders.notifyAfterMinutes} min is reported to its owner;{' '}
        {idleHolders.park ? `${idleHolders.graceMinutes} min later it is parked (its memory moved to host memory) until its owner unparks it. High-priority jobs are never parked.` : 'it is not parked.'}
      </p>
    </>
  );
}

function PolicyEditor({ status }: { status: LabPolicyStatus }) {
  const draft = useLabPolicy((s) => s.draft);
  const saving = useLabPolicy((s) => s.saving);
  const saveError = useLabPolicy((s) => s.saveError);
  if (!status.mayChange) return <p className="muted">Only {status.administrators} may change the lab policy.</p>;
  if (draft === null) {
    return (
      <button type="button" className="primary" onClick={editLabPolicy}>
        Edit the policy
      </button>
    );
  }
  return (
    <div className="lab-editor">
      <label className="muted" htmlFor="lab-policy-draft">
        The policy as in the daemon&apos;s config (JSON); it is checked whole, kept in the config, then applied.
      </label>
      <textarea id="lab-policy-draft" spellCheck={false} value={draft} onChange={(e) => labPolicyStore.setState({ draft: e.target.value })} rows={Math.min(30, draft.split('\n').length + 1)} />
      {saveError && (
        <div className="report-error" role="alert">
          {saveError}
        </div>
      )}
      <div className="lab-editor-actions">
        <button type="button" className="primary" onClick={() => void saveLabPolicy()} disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={cancelLabPolicyEdit} disabled={saving}>
          Cancel
        </button>
      </div>
    </div>
  );
}

export function LabPolicyView() {
  const status = useLabPolicy((s) => s.status);
  const error = useLabPolicy((s) => s.error);
  const loading = useLabPolicy((s) => s.loading);
  useEffect(() => {
    void loadLabPolicy();
    const timer = setInterval(() => void loadLabPolicy(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <section className="panel lab-policy-view" aria-label="Lab policy">
      <header className="panel-head">
        <h2>Lab policy</h2>
        {status && <span className="muted">{status.enforced ? 'applied by the scheduler to every user' : 'personal engine: no lab policy applies'}</span>}
        <button type="button" className="pause" onClick={() => void loadLabPolicy()} disabled={loading}>
          {loading ? 'Loading…' : 'Refresh'}
        </button>
      </header>
      {error && (
        <div className="report-error" role="alert">
          {error}
        </div>
      )}
      {!status && !error && <div className="muted">Asking the engine for the lab policy…</div>}
      {status && !status.enforced && (
        <p className="muted">This console talks to a personal engine, which schedules only its own user&apos;s jobs: limits and fair share come with the box daemon (`gpushare daemon`).</p>
      )}
      {status?.enforced && (
        <div className="lab-policy-body">
          <div className="lab-section">
            <h3>
              You: {status.you.user}
              {status.you.groups.length > 0 && <span className="muted"> · groups {status.you.groups.join(', ')}</span>}
            </h3>
            <YourLimits you={status.you} />
            <p className="muted">A job that would pass a limit waits in the queue with the reason on its card; running jobs are never stopped for a limit.</p>
          </div>
          <div className="lab-section">
            <h3>Fair share</h3>
            <FairShare status={status} />
          </div>
          <div className="lab-section lab-rules-section">
            <h3>The lab&apos;s rules</h3>
            <LabRules status={status} />
            <PolicyEditor status={status} />
          </div>
        </div>
      )}
    </section>
  );
}
