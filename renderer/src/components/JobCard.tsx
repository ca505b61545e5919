// One job on the board. Drag it to a lane or a GPU — or focus it and press
// ←/→ (or H, N, B, P) to change lanes, a digit to place it on that GPU, K to park or unpark it.
import { slurmJobLabel } from '../../../shared/slurm.js';
import { memo, useState, type KeyboardEvent } from 'react';
import { enrolledGpuNote, enrolledGpuText, gpuDemand, gpusPhrase, gpusText, type JobView } from '../../../shared/jobs.js';
import { moveJobToLane, parkJob, placeJob, unparkJob } from '../actions/job-actions.js';
import { processColor } from '../colors.js';
import { laneOf, MOVABLE_LANES, parkActionOf } from '../data/board-jobs.js';
import { endJobDrag, JOB_DRAG_TYPE, startJobDrag } from '../data/drag-state.js';
import { formatPercent, shortCommand, shownBytes } from '../format.js';
import type { Lane, PendingChange } from '../stores/jobs-store.js';
import { highlight } from '../stores/ui-store.js';
import { useAlerts, useUi } from '../stores/hooks.js';
import { QuotaBar } from './QuotaBar.js';

const LETTER_LANES: Record<string, Lane> = { h: 'high', n: 'normal', b: 'best-effort', p: 'paused' };

interface Props {
  job: JobView;
  pending: PendingChange | undefined;
  capacity: number;
  readOnly: boolean;
}

function JobCardView({ job, pending, capacity, readOnly }: Props) {
  const [quotaDragging, setQuotaDragging] = useState(false);
  const highlighted = useUi((s) => s.highlighted === job.id);
  const waiting = useAlerts((s) => (job.state === 'queued' ? (s.conditions.find((c) => c.kind === 'waiting' && c.jobId === job.id)?.message ?? null) : null));
  const lane = laneOf(job, pending);
  const parkAction = readOnly || pending ? null : parkActionOf(job);
  const togglePark = (): void => {
    if (parkAction === 'park') void parkJob(job);
    else if (parkAction === 'unpark') void unparkJob(job);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLElement>): void => {
    if (e.target !== e.currentTarget || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key.toLowerCase() === 'k') {
      e.preventDefault();
      togglePark();
      return;
    }
    const at = MOVABLE_LANES.indexOf(lane ?? 'normal');
    let target: Lane | undefined = LETTER_LANES[e.key.toLowerCase()];
    if (e.key === 'ArrowLeft') target = MOVABLE_LANES[Math.max(0, at - 1)];
    if (e.key === 'ArrowRight') target = MOVABLE_LANES[at < 0 ? 0 : Math.min(MOVABLE_LANES.length - 1, at + 1)];
    if (/^[0-9]$/.test(e.key)) {
      e.preventDefault();
      void placeJob(job, Number(e.key));
      return;
    }
    if (!target) return;
    e.preventDefault();
    void moveJobToLane(job, target);
  };
  return (
    <li
      className={`job-card${pending ? ' pending' : ''}${highlighted ? ' highlighted' : ''}${job.managed ? '' : ' unmanaged'}`}
      data-job={job.id}
      data-lane={lane ?? undefined}
      tabIndex={0}
      draggable={!quotaDragging}
      aria-label={`${job.id} ${shortCommand(job.argv, null)} by ${job.owner}`}
      aria-keyshortcuts="ArrowLeft ArrowRight H N B P K 0 1 2 3 4 5 6 7 8 9"
      title="Drag to a lane or onto a GPU. Keyboard: ←/→ or H/N/B/P move lanes, a digit places it on that GPU, K parks or unparks it."
      onDragStart={(e) => {
        e.dataTransfer.setData(JOB_DRAG_TYPE, job.id);
        e.dataTransfer.setData('text/plain', job.id);
        e.dataTransfer.effectAllowed = 'move';
        startJobDrag(job);
      }}
      onDragEnd={endJobDrag}
      onKeyDown={onKeyDown}
      onMouseEnter={() => highlight(job.id)}
      onMouseLeave={() => highlight(null)}
      style={{ borderLeftColor: job.pid !== null ? processColor(job.pid) : undefined }}
    >
      <div className="job-line">
        <span className="job-id">{job.id}</span>
        <span className="job-command" title={job.argv.join(' ')}>{shortCommand(job.argv, null)}</span>
        {parkAction && (
          <button
            type="button"
            className="job-park"
            draggable={false}
            title={parkAction === 'park' ? 'Park: move its GPU memory to host memory and free the GPU (K)' : 'Unpark: bring it back onto its GPU (K)'}
            onClick={togglePark}
          >
            {parkAction === 'park' ? 'Park' : 'Unpark'}
          </button>
        )}
      </div>
      <div className="job-line job-meta">
        <span>{job.owner}</span>
        {job.enrolled && (
          <span className="job-enrolled" title={`Enrolled: started outside gpushare, it joined at its first CUDA call (${job.enrolled.by === 'command' ? 'gpushare enrol' : job.enrolled.by}${job.enrolled.name ? ` ${job.enrolled.name}` : ''}); moved like any job`}>
            enrolled{job.enrolled.slurm ? ` · ${slurmJobLabel(job.enrolled.slurm)}` : job.enrolled.name ? ` · ${job.enrolled.name}` : ''}
          </span>
        )}
        <span title={enrolledGpuNote(job) ?? undefined}>{job.gpu === null ? queuedGpuLabel(job) : job.enrolled ? `GPU ${enrolledGpuText(job)}` : gpusPhrase(job)}</span>
        {waiting ? (
          <span className="job-waiting" title={waiting}>
            waiting: {waiting.replace(/^.*? is queued: /, '').replace(/\.$/, '')}
          </span>
        ) : (
          <span>SM {formatPercent(job.smPercent)}</span>
        )}
        <span className={`state state-${job.state}`}>{pending ? 'moving…' : job.state}</span>
      </div>
      <QuotaBar job={job} quota={pending?.memoryQuotaBytes !== undefined ? pending.memoryQuotaBytes : job.memoryQuotaBytes} capacity={capacity} editable={!readOnly} onDraggingChange={setQuotaDragging} />
    </li>
  );
}

/** Where a queued job asked to run: "any GPU", "GPU 1", "GPUs 0,2", "2 GPUs". */
function queuedGpuLabel(job: JobView): string {
  const { count, named } = gpuDemand(job);
  if (named) return named.length > 1 ? `GPUs ${named.join(',')}` : `GPU ${named[0]}`;
  return count > 1 ? `${count} GPUs` : 'any GPU';
}

/** Re-render only when something the card shows changed (jobs arrive as new objects every tick). */
const sameCard = (a: Props, b: Props): boolean =>
  a.pending === b.pending && a.capacity === b.capacity && a.readOnly === b.readOnly &&
  a.job.id === b.job.id && a.job.state === b.job.state && a.job.suspendedBy === b.job.suspendedBy && a.job.priority === b.job.priority && gpusText(a.job) === gpusText(b.job) &&
  a.job.memoryQuotaBytes === b.job.memoryQuotaBytes && a.job.pid === b.job.pid && a.job.owner === b.job.owner &&
  Math.round(a.job.smPercent ?? -1) === Math.round(b.job.smPercent ?? -1) &&
  shownBytes(a.job.usedMemory) === shownBytes(b.job.usedMemory) &&
  a.job.history.length === b.job.history.length;

export const JobCard = memo(JobCardView, sameCard);
