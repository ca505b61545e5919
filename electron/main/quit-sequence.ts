// Quitting: before-quit is held (preventDefault) until the personal engine has stopped cleanly (it
// resumes what it suspended and restores what it parked), for a bounded time, and only then exits.
import type { EngineExit } from './engine-link.js';

export interface QuitSteps {
  /** Close the tray, notifications, IPC bridge and the app's own engine view. */
  closeDesktop(): void;
  /** Ask the engine this app started to stop and await it (null: nothing of ours to stop). */
  stopEngine(): Promise<EngineExit | null>;
  exit(code: number): void;
  say(line: string): void;
  /** How long to wait for the stop at most (the link kills a stuck engine itself after its own timeout). */
  waitMs: number;
}

/** The before-quit handler: every before-quit is held while the stop runs (a second one would end the app under it). */
export function quitSequence(steps: QuitSteps): (event: { preventDefault(): void }) => void {
  let quitting = false;
  return (event) => {
    event.preventDefault();
    if (quitting) return;
    quitting = true;
    steps.closeDesktop();
    void stopWithin(steps).finally(() => steps.exit(0));
  };
}

async function stopWithin(steps: QuitSteps): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), steps.waitMs)));
  try {
    const exit = await Promise.race([steps.stopEngine(), late]);
    if (exit === 'late') steps.say(`gpushare: the engine did not stop within ${steps.waitMs / 1000} s; quitting without it.`);
    else if (exit && !exit.clean) steps.say(`gpushare: the personal engine did not stop cleanly (${exit.signal ?? `exit code ${exit.code}`}).`);
  } catch (error) {
    steps.say(`gpushare: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}
