// What holds now (the engine's active conditions), then contention, quota, out-of-memory and
// finished-job events, newest first.
import { useState } from 'react';
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
  idle: 'idle memory',
};

export function AlertList() {
  const alerts = useAlerts((s) => s.alerts);
  const conditions = useAlerts((s) => s.conditions);
  // the panel is short so the console fits a screen; "Show all" lets it grow to every alert
  const [expanded, setExpanded] = useState(false);
  return (
    <section className={`panel alert-panel${expanded ? ' expanded' : ''}`} aria-label="Alerts">
      <header className="panel-head">
        <h2>Alerts</h2>
        <span className="muted">{conditions.length > 0 ? `${conditions.length} now` : alerts.length === 0 ? 'all quiet' : 'none now'}</span>
        {alerts.length > 0 && (
          <button type="button" className="alert-toggle" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
            {expanded ? 'Show fewer' : `Show all ${alerts.length}`}
          </button>
        )}
      </header>
      {conditions.length > 0 && (
        <ul className="condition-list" aria-label="Now">
          {conditions.map((c) => (
            <li key={`${c.kind}:${c.gpu}:${c.jobId}:${c.message}`} className={`condition alert-${c.severity}`} data-kind={c.kind}>
              <span className={`alert-kind kind-${c.kind}`}>now · {KIND_LABELS[c.kind] ?? c.kind}</span>
              <span className="alert-message">{c.message}</span>
            </li>
          ))}
        </ul>
      )}
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
