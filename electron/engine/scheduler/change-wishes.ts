// Changes a person asks of a job (priority, memory quota, suspend, resume, a queued job's GPU and mode:
// one command's move), applied by a step of the control loop, never by the command. The command asks
// with the check of its whole move; the step runs it again (the job may have changed since it was asked)
// and applies every change only when all pass, so a move is applied whole or not at all. Asking starts
// that step at once when none runs, so the command's answer, sent once it settles, shows the new state;
// the policies decide on it in a later step, shared with the other commands (Scheduler.requestEvaluation).
import { ApiError } from '../api/api-error.js';

/** A move's check: each change's applier (null: it changes nothing), or it throws (an ApiError) and nothing is changed. */
export type CheckedMove = () => ReadonlyArray<(() => void) | null>;

/** What the wishes need of the loop. */
export interface ChangeWishContext {
  /** A step that applies the moves, now (after the current one when asked inside it, or while steps wait). */
  step(): void;
  stopped(): boolean;
}

interface ChangeWish {
  check: CheckedMove;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class ChangeWishes {
  private asked: ChangeWish[] = [];

  constructor(private readonly loop: ChangeWishContext) {}

  /** Moves asked for and not yet applied. */
  get pending(): boolean {
    return this.asked.length > 0;
  }

  /** Ask for a move; resolves once a step applied it, rejects with its refusal (nothing applied). */
  request(check: CheckedMove): Promise<void> {
    if (this.loop.stopped()) return Promise.reject(stopping());
    const applied = new Promise<void>((resolve, reject) => this.asked.push({ check, resolve, reject }));
    this.loop.step();
    return applied;
  }

  /** The loop's step: each move checked again and applied whole, in the order asked. */
  carryOut(): void {
    const wishes = this.asked;
    this.asked = [];
    for (const wish of wishes) {
      try {
        for (const apply of wish.check()) apply?.();
        wish.resolve();
      } catch (error) {
        wish.reject(error); // a refusal (checked before any applies), or an actuator's failure, as the command's own
      }
    }
  }

  /** Engine stop: every move not applied is refused. */
  dropAll(): void {
    const wishes = this.asked;
    this.asked = [];
    for (const wish of wishes) wish.reject(stopping());
  }
}

const stopping = (): ApiError => new ApiError('conflict', 'The engine is stopping: nothing was changed.');
