// Each person's use of the lab, summed over the boxes that answer now: the most memory first.
import type { PersonTotal } from '../../../../shared/lab.js';
import { formatBytes } from '../../format.js';

export function LabPeople({ people }: { people: readonly PersonTotal[] }) {
  return (
    <section className="panel lab-people" aria-label="people across the lab">
      <div className="panel-head">
        <h2>People across the lab</h2>
        <span className="muted">connected boxes; SM in GPUs' worth</span>
      </div>
      {people.length === 0 ? (
        <p className="muted">Nobody has GPU processes or jobs on the connected boxes.</p>
      ) : (
        <table className="lab-table">
          <thead>
            <tr>
              <th>user</th>
              <th>boxes</th>
              <th className="num">GPUs</th>
              <th className="num">processes</th>
              <th className="num">memory</th>
              <th className="num">SM</th>
              <th className="num">jobs running</th>
              <th className="num">queued</th>
            </tr>
          </thead>
          <tbody>
            {/* keyed by place: a new order rewrites the rows' words rather than moving the rows */}
            {people.map((p, place) => (
              <tr key={place} data-user={p.user}>
                <td>{p.user}</td>
                <td>{p.boxes.join(', ')}</td>
                <td className="num">{p.gpus}</td>
                <td className="num">{p.processes}</td>
                <td className="num">{formatBytes(p.memoryBytes)}</td>
                <td className="num">{(p.smPercent / 100).toFixed(2)}</td>
                <td className="num">{p.runningJobs}</td>
                <td className="num">{p.queuedJobs}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
