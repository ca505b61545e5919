// "Where can I run now": memory per GPU, GPU count and priority; the host answers from every box's
// latest state (free memory, the lab policy there, the queue ahead), best first, and why not elsewhere.
import { useState, type FormEvent } from 'react';
import { useStore } from 'zustand';
import { PRIORITIES, parseByteSize, type Priority } from '../../../../shared/jobs.js';
import { labConsoleHref } from '../../../../shared/lab-console.js';
import { askWhere } from '../../data/lab-feed.js';
import { formatBytes, formatPercent } from '../../format.js';
import { utcClock } from './LabBoxCard.js';
import { labStore } from '../../stores/lab-store.js';

export function LabWhere() {
  const where = useStore(labStore, (s) => s.where);
  const [memory, setMemory] = useState('20G');
  const [gpus, setGpus] = useState('1');
  const [priority, setPriority] = useState<Priority>('normal');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    let memoryBytes: number;
    try {
      memoryBytes = memory.trim() === '' ? 0 : parseByteSize(memory);
    } catch (error) {
      return setProblem((error as Error).message);
    }
    const count = Number(gpus);
    if (!Number.isInteger(count) || count < 1 || count > 64) return setProblem(`"${gpus}" is not a GPU count: a whole number from 1 to 64.`);
    setProblem(null);
    void askWhere({ memoryBytes, gpus: count, priority });
  };
  const answer = where.answer;
  return (
    <section className="panel lab-where" aria-label="where can I run now">
      <div className="panel-head">
        <h2>Where can I run now</h2>
      </div>
      <form className="lab-where-form" onSubmit={submit}>
        <label>
          memory per GPU <input name="memory" value={memory} onChange={(e) => setMemory(e.target.value)} size={6} />
        </label>
        <label>
          GPUs <input name="gpus" type="number" min={1} max={64} value={gpus} onChange={(e) => setGpus(e.target.value)} style={{ width: 56 }} />
        </label>
        <label>
          priority{' '}
          <select name="priority" value={priority} onChange={(e) => setPriority(e.target.value as Priority)}>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={where.pending}>
          {where.pending ? 'Asking…' : 'Find'}
        </button>
      </form>
      {(problem ?? where.error) && (
        <p className="lab-where-error" role="alert">
          {problem ?? where.error}
        </p>
      )}
      {answer && where.asked && (
        <div className="lab-where-answer">
          <p className="muted">
            {formatBytes(where.asked.memoryBytes)} on {where.asked.gpus} GPU{where.asked.gpus === 1 ? '' : 's'}, {where.asked.priority}, as of {utcClock(where.answeredAt ?? Date.now())}:
          </p>
          {answer.places.length === 0 ? (
            <p className="lab-where-none">No box can start it now.</p>
          ) : (
            <ol className="lab-places">
              {answer.places.map((place, rank) => (
                <li key={place.box} data-box={place.box} className={rank === 0 ? 'best' : ''}>
                  <strong>{place.box}</strong> GPU{place.gpus.length === 1 ? '' : 's'} {place.gpus.join(', ')}
                  {place.slice && <span title={place.slice.uuid}> · MIG slice {place.slice.profile ?? place.slice.uuid}</span>}
                  <span className="muted">
                    {' '}
                    · free {place.freeBytes.map(formatBytes).join(', ')} · {place.queueAhead === 0 ? 'nothing queued ahead' : `${place.queueAhead} queued ahead`} · util {formatPercent(place.utilization)}
                  </span>{' '}
                  <a href={labConsoleHref(window.location.href, place.box)}>open</a>
                </li>
              ))}
            </ol>
          )}
          {answer.notNow.length > 0 && (
            <ul className="lab-not-now" aria-label="boxes that cannot start it now">
              {answer.notNow.map((n) => (
                <li key={n.box} data-box={n.box}>
                  <strong>{n.box}</strong>: <span className="muted">{n.reason}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
