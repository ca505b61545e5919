// The app's own connection to the engine, for the tray and notifications: who this user is (the
// engine's word), the jobs, and which conditions and alerts are this user's business (user-scope.ts).
import type { ActiveCondition, ApiResults, GpushareApi } from '../../shared/api.js';
import { createMessageClient } from '../../shared/api-client.js';
import type { Alert, JobView } from '../../shared/jobs.js';
import type { LineConnection } from './line-connection.js';
import { concernsViewer, type Concern, type Viewer } from './user-scope.js';

export type WhoAmI = ApiResults['session.whoami'];

export interface EngineView {
  readonly whoami: WhoAmI;
  readonly api: GpushareApi;
  /** Does this alert or condition concern the user at this desktop? */
  concerns(item: Concern): boolean;
  /** The active conditions that concern this user, now. */
  myConditions(): ActiveCondition[];
  /** Called whenever that list changes (a condition came or went, or a job moved to or from this user's GPUs). */
  onMyConditions(listener: (conditions: ActiveCondition[]) => void): () => void;
  /** Every alert the engine raises (the coalescer asks concerns()). */
  onAlert(listener: (alert: Alert) => void): () => void;
  /** Suspend this user's running best-effort jobs; says which could not be. */
  pauseMyBestEffort(): Promise<{ paused: string[]; refused: string[] }>;
  close(): void;
}

export async function openEngineView(connection: LineConnection): Promise<EngineView> {
  const client = createMessageClient((message) => connection.send(message));
  connection.onMessage((message) => client.receive(message));
  connection.onClose(() => client.failPending('The engine closed the connection.'));
  const { api } = client;
  connection.send({ kind: 'subscribe', events: ['jobs', 'conditions', 'alert'] });

  let jobs: JobView[] = [];
  let conditions: ActiveCondition[] = [];
  let mineKey = '';
  const listeners = new Set<(conditions: ActiveCondition[]) => void>();
  const alertListeners = new Set<(alert: Alert) => void>();
  // events are heard from the start; the first lists below only fill in what came before
  let heardJobs = false;
  let heardConditions = false;
  api.on('jobs', (list) => {
    heardJobs = true;
    jobs = list;
    changed();
  });
  api.on('conditions', (list) => {
    heardConditions = true;
    conditions = list;
    changed();
  });
  api.on('alert', (alert) => alertListeners.forEach((listener) => listener(alert)));

  const [whoami, firstJobs, firstConditions] = await Promise.all([
    api.call('session.whoami', {}),
    api.call('jobs.list', { includeFinished: true }).catch(() => [] as JobView[]), // an engine with no scheduler has no jobs
    api.call('alerts.active', {}),
  ]);
  const viewer: Viewer = { uid: whoami.uid, admin: whoami.admin };
  const concerns = (item: Concern): boolean => concernsViewer(viewer, jobs, item);
  const mine = (): ActiveCondition[] => conditions.filter(concerns);
  if (!heardJobs) jobs = firstJobs;
  if (!heardConditions) conditions = firstConditions;
  mineKey = JSON.stringify(mine());

  function changed(): void {
    if (mineKey === '') return; // not yet known who this is
    const now = mine();
    const key = JSON.stringify(now);
    if (key === mineKey) return;
    mineKey = key;
    for (const listener of listeners) listener(now);
  }

  return {
    whoami,
    api,
    concerns,
    myConditions: mine,
    onMyConditions(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onAlert(listener) {
      alertListeners.add(listener);
      return () => alertListeners.delete(listener);
    },
    async pauseMyBestEffort() {
      const running = jobs.filter((j) => j.uid === viewer.uid && j.priority === 'best-effort' && (j.state === 'running' || j.state === 'gated'));
      const results = await Promise.allSettled(running.map((j) => api.call('jobs.suspend', { job: j.id })));
      return {
        paused: running.filter((_, k) => results[k].status === 'fulfilled').map((j) => j.id),
        refused: running.filter((_, k) => results[k].status === 'rejected').map((j) => j.id),
      };
    },
    close: () => connection.close(),
  };
}
