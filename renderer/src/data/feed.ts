// The transport feeds this module; it fills the sample rings at once and commits to the
// stores at most ten times a second, so a burst of events costs one React render.
import type { ActiveCondition, GpushareApi } from '../../../shared/api.js';
import { ApiCallError } from '../../../shared/api-client.js';
import type { Alert, JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { addAlerts, setConditions } from '../stores/alerts-store.js';
import { gpusStore } from '../stores/gpus-store.js';
import { jobsStore } from '../stores/jobs-store.js';
import { setStoreStatus } from '../stores/store-status-store.js';
import { keepPreferences } from '../stores/preferences.js';
import { uiStore } from '../stores/ui-store.js';
import type { ConsoleTransport } from '../transport/transport.js';
import { learnJobs } from './process-label.js';
import { ingestRecent, ingestSnapshot } from './sample-history.js';

export const COMMIT_INTERVAL_MS = 100;

let pendingSnapshot: Snapshot | null = null;
let pendingJobs: JobView[] | null = null;
let pendingAlerts: Alert[] = [];
let pendingConditions: ActiveCondition[] | null = null;
let lastCommitAt = 0;
let commitTimer: ReturnType<typeof setTimeout> | null = null;
let commits = 0;

/** Commits so far (the UI benchmark waits on it). */
export const commitCount = (): number => commits;

function commit(): void {
  commitTimer = null;
  lastCommitAt = performance.now();
  if (pendingSnapshot) {
    gpusStore.setState({ snapshot: pendingSnapshot });
    pendingSnapshot = null;
  }
  if (pendingJobs) {
    jobsStore.setState({ jobs: pendingJobs, schedulerMissing: null });
    pendingJobs = null;
  }
  if (pendingAlerts.length > 0) {
    addAlerts(pendingAlerts);
    pendingAlerts = [];
  }
  if (pendingConditions) {
    setConditions(pendingConditions);
    pendingConditions = null;
  }
  commits++;
}

function scheduleCommit(): void {
  if (commitTimer !== null) return;
  commitTimer = setTimeout(commit, Math.max(0, lastCommitAt + COMMIT_INTERVAL_MS - performance.now()));
}

/** Live snapshots held back from the rings while the engine's recent history is on its way (it goes in first). */
let awaitingHistory: Snapshot[] | null = null;
/** Enough to bridge a slow answer at the fastest rate; older ones are in the history anyway. */
const AWAITING_KEPT = 120;

export function receiveSnapshot(snapshot: Snapshot): void {
  if (awaitingHistory) {
    awaitingHistory.push(snapshot);
    if (awaitingHistory.length > AWAITING_KEPT) awaitingHistory.shift();
  } else {
    ingestSnapshot(snapshot);
  }
  pendingSnapshot = snapshot;
  scheduleCommit();
}

export function receiveJobs(jobs: JobView[]): void {
  learnJobs(jobs); // at once: the next snapshot's samples are labelled with these job ids
  pendingJobs = jobs;
  scheduleCommit();
}

function receiveAlert(alert: Alert): void {
  pendingAlerts.push(alert);
  scheduleCommit();
}

function receiveConditions(conditions: ActiveCondition[]): void {
  pendingConditions = conditions;
  scheduleCommit();
}

/** The timelines start from what the engine sampled before this page opened (an older engine has none: they start empty). */
async function loadRecentHistory(api: GpushareApi): Promise<void> {
  awaitingHistory ??= [];
  try {
    ingestRecent(await api.call('samples.recent', {}));
  } catch {
    // no history to draw: the live samples below still go in
  } finally {
    const live = awaitingHistory ?? [];
    awaitingHistory = null;
    for (const snapshot of live) ingestSnapshot(snapshot);
  }
}

/** Ask the engine for jobs again (after a change, or when the scheduler may have arrived). */
export async function refreshJobs(api: GpushareApi): Promise<void> {
  try {
    receiveJobs(await api.call('jobs.list', {}));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ApiCallError && error.code === 'unsupported') jobsStore.setState({ schedulerMissing: message });
  }
}

export function startFeed(transport: ConsoleTransport): void {
  const { api } = transport;
  let preferencesKept = false;
  gpusStore.setState({ transportKind: transport.kind });
  api.on('snapshot', receiveSnapshot);
  api.on('jobs', receiveJobs);
  api.on('alert', receiveAlert);
  api.on('conditions', receiveConditions);
  api.on('store', setStoreStatus);
  transport.onConnection((connection, detail) => {
    gpusStore.setState({ connection, connectionDetail: detail });
    if (connection !== 'open') return;
    void loadRecentHistory(api);
    void api.call('snapshot.latest', {}).then((s) => s && !gpusStore.getState().snapshot && receiveSnapshot(s), () => undefined);
    void api.call('alerts.list', {}).then((alerts) => addAlerts(alerts), () => undefined);
    void api.call('alerts.active', {}).then(receiveConditions, () => undefined); // an older engine has none
    void api.call('store.status', {}).then(setStoreStatus, () => setStoreStatus(null)); // an engine without a store says nothing
    void api.call('session.whoami', {}).then((session) => uiStore.setState({ me: session.user, session }), () => undefined);
    if (!preferencesKept) {
      preferencesKept = true; // once: a reconnect must not undo what was chosen meanwhile
      keepPreferences(api, uiStore);
    }
    void refreshJobs(api);
  });
}
