// Jobs of processes gpushare did not start, enrolled by the preload library (enrol/enrolment.ts asks
// through Scheduler.startEnrolled, enrolledFiles and endEnrolled): a new one is given a gate slot and
// started at once, not by a step (the library waits at most 50 ms for the files it is handed); one whose
// last member is gone is a wish that the next step of the control loop carries out (takeInEnds).
import type { JobActuators } from './actuators.js';
import type { JobGate } from './job-gate.js';
import type { JobEvent } from './job-state.js';
import type { JobRecord, JobTable } from './job-table.js';
import type { JobOwnership } from './ownership.js';

/** What an enrolled process maps (enrol/enrolment.ts hands it over as descriptors): its job's gate slot files and park file. */
export interface EnrolledFiles {
  slot: number;
  generation: number;
  dir: string;
  control: string;
  activity: string;
  park: string | null;
}

/** What enrolled jobs need of the loop. */
export interface EnrolledJobsContext {
  readonly table: JobTable;
  readonly act: JobActuators;
  readonly ownership: JobOwnership;
  /** Move the job by an event of the state machine (the loop's one way to change a state). */
  fire(record: JobRecord, event: JobEvent, reason: string): boolean;
  /** The job ended: its slot and holds given back, its GPU free for the queue (the loop's one way to end a job). */
  ended(record: JobRecord, event: 'exit', reason: string): void;
  /** 'now': an end to carry out; 'soon': the policies decide on a started job with the commands' shared step. */
  requestEvaluation(when: 'now' | 'soon'): void;
}

export class EnrolledJobs {
  /** Enrolled jobs whose last member is gone, and why: the next step ends them. */
  private readonly ends = new Map<JobRecord, string>();

  constructor(private readonly loop: EnrolledJobsContext) {}

  /** The launch gate; enrolment refuses every process when there is none, so none is started here without one. */
  private get gate(): JobGate {
    return this.loop.act.options.gate!;
  }

  /** A process enrolled into a new job (its record already in the table): given a gate slot, attached and started now. Throws (the record removed) when no slot is left. */
  start(record: JobRecord, gpu: number): EnrolledFiles {
    let files: Omit<EnrolledFiles, 'slot' | 'generation'>;
    try {
      files = this.loop.act.enrolSlot(record, gpu);
    } catch (error) {
      this.loop.table.remove(record.view.id);
      throw error;
    }
    this.loop.act.attach(record);
    this.loop.ownership.claim(record.view.id, record.view.owner, record.view.pid!, record.startTicks);
    this.loop.fire(record, 'started', `running as pid ${record.view.pid} (enrolled)`);
    this.loop.requestEvaluation('soon');
    return { ...files, slot: record.slot!, generation: this.gate.slotFiles!(record.slot!).generation };
  }

  /** The files a process joining the enrolled job maps: its slot's, and its park file while it has one. */
  files(record: JobRecord): EnrolledFiles {
    const files = this.gate.slotFiles!(record.slot!);
    return { dir: files.dir, control: files.control, activity: files.activity, park: this.loop.act.parkFileOf(record), slot: record.slot!, generation: files.generation };
  }

  /** An enrolled job none of whose processes is a member any more: the next step ends it. */
  end(record: JobRecord, reason: string): void {
    if (!this.ends.has(record)) this.ends.set(record, reason);
    this.loop.requestEvaluation('now');
  }

  /** The loop's step: enrolled jobs asked to end since the last step end now, their slots and holds given back. */
  takeInEnds(): void {
    const ends = [...this.ends];
    this.ends.clear();
    for (const [record, reason] of ends) this.loop.ended(record, 'exit', reason);
  }
}
