// The job board: High, Normal, Best-effort, Paused and the Queue.
import type { JobView } from '../../../shared/jobs.js';
import { laneOf, LANES } from '../data/board-jobs.js';
import type { Lane } from '../stores/jobs-store.js';
import { useBoardJobs, useGpus, useJobs } from '../stores/hooks.js';
import { JobLane } from './JobLane.js';

const NO_GPUS: never[] = [];

/** 12 for "j12", 4242 for "p4242": job ids and pids both grow with age. */
const idNumber = (job: JobView): number => Number(job.id.slice(1)) || 0;

export function JobBoard() {
  const jobs = useBoardJobs();
  const pending = useJobs((s) => s.pending);
  const schedulerMissing = useJobs((s) => s.schedulerMissing);
  const gpus = useGpus((s) => s.snapshot?.gpus) ?? NO_GPUS;
  const largest = Math.max(1, ...gpus.map((g) => g.memoryTotal));
  const capacityOf = (job: JobView): number => gpus.find((g) => g.index === (job.gpu ?? job.requestedGpu))?.memoryTotal ?? largest;
  const byLane = new Map<Lane, JobView[]>(LANES.map((l) => [l.lane, []]));
  for (const job of jobs) {
    const lane = laneOf(job, pending[job.id]);
    if (lane) byLane.get(lane)!.push(job);
  }
  // managed jobs first, then oldest first: a card stays where it is while a person reaches for it
  for (const list of byLane.values()) list.sort((a, b) => Number(b.managed) - Number(a.managed) || idNumber(a) - idNumber(b));
  return (
    <section className="panel job-board" aria-label="Job board">
      <header className="panel-head">
        <h2>Job board</h2>
        <span className="muted">drag a card to a lane or onto a GPU; focus a card and press ←/→, H/N/B/P, a GPU number, or K to park / unpark</span>
      </header>
      {schedulerMissing && (
        <div className="board-note" role="status">
          Showing GPU processes only: {schedulerMissing} Drops are sent to the engine and refused until its scheduler runs.
        </div>
      )}
      <div className="lanes">
        {LANES.map((l) => (
          <JobLane key={l.lane} {...l} jobs={byLane.get(l.lane)!} pending={pending} capacityOf={capacityOf} readOnly={false} />
        ))}
      </div>
    </section>
  );
}
