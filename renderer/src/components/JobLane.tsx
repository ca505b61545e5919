// A lane of the board; dropping a card here asks the engine for that priority or pause.
import { useState, type DragEvent } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { moveJobToLane } from '../actions/job-actions.js';
import { draggedJob, endJobDrag, JOB_DRAG_TYPE } from '../data/drag-state.js';
import type { Lane, PendingChange } from '../stores/jobs-store.js';
import { JobCard } from './JobCard.js';

/** More cards than this make a lane unreadable (and slow); the table lists them all. */
export const LANE_CARD_LIMIT = 12;

interface Props {
  lane: Lane;
  title: string;
  hint: string;
  jobs: JobView[];
  pending: Record<string, PendingChange>;
  capacityOf(job: JobView): number;
  readOnly: boolean;
}

export function JobLane({ lane, title, hint, jobs, pending, capacityOf, readOnly }: Props) {
  const [over, setOver] = useState(false);
  const onDrop = (e: DragEvent): void => {
    e.preventDefault();
    setOver(false);
    const job = draggedJob();
    endJobDrag();
    if (job) void moveJobToLane(job, lane);
  };
  return (
    <section
      className={`lane lane-${lane}${over ? ' drop-target' : ''}`}
      data-lane={lane}
      aria-label={`${title} lane`}
      onDragOver={(e) => {
        // the Queue takes the drop too, so that it can say why a job cannot go back there
        if (!e.dataTransfer.types.includes(JOB_DRAG_TYPE)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'move';
        setOver(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
      }}
      onDrop={onDrop}
    >
      <header className="lane-head">
        <h3>{title}</h3>
        <span className="lane-count">{jobs.length}</span>
        <span className="lane-hint">{hint}</span>
      </header>
      <ul className="lane-cards">
        {jobs.slice(0, LANE_CARD_LIMIT).map((job) => (
          <JobCard key={job.id} job={job} pending={pending[job.id]} capacity={capacityOf(job)} readOnly={readOnly} />
        ))}
      </ul>
      {jobs.length > LANE_CARD_LIMIT && <div className="lane-more">+{jobs.length - LANE_CARD_LIMIT} more (newer) — see the table</div>}
    </section>
  );
}
