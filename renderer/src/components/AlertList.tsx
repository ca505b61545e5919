// Contention, quota, out-of-memory and finished-job events, newest first.
import type { AlertKind } from '../../../shared/jobs.js';
import { formatClock } from '../format.js';
import { useAlerts } from '../stores/hooks.js';

const KIND_LABELS: Record<AlertKind, string> = {
  contention: 'contention',
  quota: 'quota',
  'out-of-memory': 'out of memory',
  waiting: 'waiting',
  finished: 'finished',
  failed: 'failed',
  suspended: 'suspended',
  resumed: 'resumed',
  parked: 'parked',
  'gpu-lost': 'GPU lost',
};

export function AlertList() {
  const alerts = useAlerts((s) => s.alerts);
  return (
    <section className="panel alert-panel" aria-label="Alerts">
      <header className="panel-head">
        <h2>Alerts</h2>
        <span className="muted">{alerts.length === 0 ? 'all quiet' : `${alerts.length}`}</span>
      </header>
      <ol className="alert-list">
        {alerts.map((a) => (
          <li key={a.id} className={`alert alert-${a.severity}`} data-kind={a.kind}>
            <span className={`alert-kind kind-${a.kind}`}>{KIND_LABELS[a.kind] ?? a.kind}</span>
            <span className="alert-message">{a.message}</span>
            <span className="alert-meta">
              {a.gpu !== null && <>GPU {a.gpu} · </>}
              {a.jobId && <>{a.jobId} · </>}
              {formatClock(a.at)}
            </span>
          </li>
        ))}
        {alerts.length === 0 && <li className="alert-empty">No contention, quota or out-of-memory events so far.</li>}
      </ol>
    </section>
  );
}
