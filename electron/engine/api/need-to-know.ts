// What a user sees of another user's jobs: what `ps` would show them, no more. A non-administrator
// sees another's job without its working directory and log, and its arguments only as the command line
// of its running process (its program's name once it has none), and alerts about it without its log;
// its owner and administrators see it whole.
import { basename } from 'node:path';
import { FINAL_STATES, type Alert, type JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';

export interface JobViewer {
  uid: number;
  /** An administrator, or the engine's own user: sees every job whole. */
  everyone: boolean;
}

/** The command line of a running process, as the last snapshot read it from /proc; null when it is not there. */
export const commandLines = (snapshot: Snapshot | null) => (pid: number): string[] | null => snapshot?.processes.find((p) => p.pid === pid && p.argv.length > 0)?.argv ?? null;

export function jobSeenBy(view: JobView, viewer: JobViewer, running: (pid: number) => string[] | null): JobView {
  if (viewer.everyone || view.uid === viewer.uid) return view;
  const alive = view.pid !== null && !FINAL_STATES.has(view.state);
  // an unmanaged process's argv is its /proc command line already
  const shown = alive ? (view.managed ? running(view.pid!) : view.argv) : null;
  const { argvCut: _submittedLength, ...seen } = view; // the length of what they submitted is theirs too
  return {
    ...seen,
    argv: shown ?? [basename(view.argv[0] ?? '')],
    cwd: null,
    logPath: null,
    // why a job could not start may name its paths
    history: view.history.map((h) => (h.reason.startsWith('could not start') ? { ...h, reason: 'could not start' } : h)),
    withheld: true,
  };
}

/** A list of jobs as `viewer` sees it; the same list when nothing in it is withheld from them. */
export function jobsSeenBy(jobs: JobView[], viewer: JobViewer, running: (pid: number) => string[] | null): JobView[] {
  if (viewer.everyone || jobs.every((j) => j.uid === viewer.uid)) return jobs;
  return jobs.map((j) => jobSeenBy(j, viewer, running));
}

/** An alert as the engine keeps it: about whose job, and its sentence without what only they may read. */
export interface KeptAlert extends Alert {
  /** The owner of the job it is about. */
  uid?: number;
  /** The message without the job's paths (its log, why it could not start in detail), for everyone else. */
  publicMessage?: string;
}

const alertViews = new WeakMap<KeptAlert, { whole?: Alert; withheld?: Alert }>();

/** An alert as `viewer` may read it; one object per alert and kind of reader, so an event's line is built once for each. */
export function alertSeenBy(alert: KeptAlert, viewer: JobViewer): Alert {
  const whole = viewer.everyone || alert.uid === undefined || alert.uid === viewer.uid;
  let views = alertViews.get(alert);
  if (!views) alertViews.set(alert, (views = {}));
  const { uid: _uid, publicMessage, ...plain } = alert;
  if (whole) return (views.whole ??= plain);
  return (views.withheld ??= { ...plain, message: publicMessage ?? plain.message });
}
