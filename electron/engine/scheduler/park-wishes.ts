// Parks and unparks asked for and not yet begun: what users (and auto-park, and the lab's idle-holder
// policy) want, kept on the job (JobRecord.parkWish) until a step of the control loop begins it with
// parking.ts's steps. Asking is refused at once when it cannot be done; else its promise settles
// when the park or unpark is done, or rejects with the reason it failed or never began.
import { ApiError } from '../api/api-error.js';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import type { JobRecord } from './job-table.js';
import { checkParkWish, parkJob, unparkJob, type ParkStepContext } from './parking.js';

/** What the wishes need of the loop: the park steps' context, and how to ask it for a step or a fresh sample. */
export interface ParkWishContext extends ParkStepContext {
  readonly checkpointer: ProcessCheckpointer;
  /** A step runs now: a wish asked inside it is begun at its end, no new step is asked for. */
  stepping(): boolean;
  /** A park or unpark ended: another step, now. */
  step(): void;
  /** Memory moved (auto-park's): ask the sampler for a fresh published sample, whose step admits the jobs that waited for it. */
  freshSample(): void;
  stopped(): boolean;
}

export class ParkWishes {
  private readonly asked = new Set<JobRecord>();

  constructor(private readonly loop: ParkWishContext) {}

  /** Ask for a park or unpark of `record` (by: who, as its history will say; automatic: a policy of the engine, no alert). */
  request(record: JobRecord, want: 'park' | 'unpark', by: string, automatic = false): Promise<void> {
    checkParkWish(this.loop.checkpointer, record, want);
    const wish = record.parkWish;
    if (wish && wish.want !== want) throw new ApiError('conflict', `Cannot ${want} ${record.view.id}: an ${wish.want} of it was asked for by ${wish.by} and has not begun; try again in a moment.`);
    const settled = new Promise<void>((resolve, reject) => {
      if (wish) wish.settle.push({ resolve, reject });
      else record.parkWish = { want, by, automatic, settle: [{ resolve, reject }] };
    });
    this.asked.add(record);
    if (!this.loop.stepping()) this.loop.step(); // inside a step (a policy's wish), that step begins it at its end
    return settled;
  }

  /** The loop's step: begin every wish; each settles its askers, then asks for the next step (or a fresh sample, after auto-park's). */
  carryOut(): void {
    for (const record of this.asked) {
      this.asked.delete(record);
      const wish = record.parkWish;
      record.parkWish = null;
      if (!wish) continue;
      try {
        checkParkWish(this.loop.checkpointer, record, wish.want); // it may have changed since it was asked
      } catch (error) {
        for (const s of wish.settle) s.reject(error);
        continue;
      }
      const work = wish.want === 'park' ? parkJob(this.loop, record, wish.by, wish.automatic) : unparkJob(this.loop, record, wish.by, wish.automatic);
      work
        .then(
          () => wish.settle.forEach((s) => s.resolve()),
          (error: unknown) => wish.settle.forEach((s) => s.reject(error)),
        )
        .finally(() => {
          if (this.loop.stopped()) return;
          if (wish.automatic) this.loop.freshSample();
          else this.loop.step();
        });
    }
  }

  /** A wish that will never begin (its job ended, the engine stops): its askers hear why. */
  drop(record: JobRecord, why: string): void {
    const wish = record.parkWish;
    if (!wish) return;
    record.parkWish = null;
    this.asked.delete(record);
    for (const s of wish.settle) s.reject(new ApiError('conflict', why));
  }

  /** Engine stop: every wish not begun is dropped. */
  dropAll(): void {
    for (const r of [...this.asked]) this.drop(r, `The engine is stopping: ${r.view.id} was not ${r.parkWish?.want === 'park' ? 'parked' : 'unparked'}.`);
  }
}
