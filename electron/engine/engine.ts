// The engine: sampler, API dispatcher, alerts and events. Hosted by Electron main,
// `gpushare serve` or a daemon; never imports electron.
import { userInfo } from 'node:os';
import { activeConditionSchema, type ActiveCondition, type ApiEvents, type ApiMethod, type ApiParams, type ApiResults } from '../../shared/api.js';
import type { Alert, EngineKind, JobView } from '../../shared/jobs.js';
import { array } from '../../shared/schema.js';
import { ApiError } from './api/api-error.js';
import { Dispatcher, type Caller } from './api/dispatcher.js';
import { alertSeenBy, commandLines, jobsSeenBy, type KeptAlert } from './api/need-to-know.js';
import type { BoxRights } from './api/rights.js';
import type { Enroller } from './server/enrol-answer.js';
import { EventBus } from './event-bus.js';
import type { GpuBackend } from './gpu/open-backend.js';
import { watchLostGpus } from './gpu-lost-watch.js';
import { otherUsersEngines } from './other-engines.js';
import { RecentSampleRing } from './sampler/recent-samples.js';
import { DEFAULT_RATE_HZ, Sampler } from './sampler/sampler.js';

export interface EngineOptions {
  backend: GpuBackend;
  rateHz?: number;
  /** 'daemon': the box's one scheduler, every user a client; 'personal' (default): one user's engine. */
  kind?: EngineKind;
  /** The box daemon's administrators' group (root always administers). */
  adminGroup?: string;
}

/** What the process hosting the engine offers its user; the host says (setHost) once it has it. */
export interface EngineHost {
  /** Shut the host down as on SIGTERM (engine.stop); absent: this host is not stopped through the socket. */
  stop?: () => void;
  /** The browser console the host serves, with its token. */
  consoleUrl?: string;
  /** What a user's connections to the engine's socket hold, against their bounds. */
  connections?: (uid: number) => NonNullable<ApiResults['session.whoami']['connections']>;
}

const ALERTS_KEPT = 500;
const conditionList = array(activeConditionSchema, { max: 10_000 });

export class Engine {
  readonly dispatcher = new Dispatcher();
  readonly sampler: Sampler;
  readonly events = new EventBus<ApiEvents>();
  /** The user the engine runs as: the caller of every local transport. */
  readonly owner: Caller;
  readonly kind: EngineKind;
  /** Who may change the box and act on anyone's jobs. */
  readonly rights: BoxRights;
  private readonly alerts: Alert[] = [];
  private alertSeq = 0;
  private running = false;
  /** The active conditions by who reports them ("scheduler", "gpus"), in the order sources first reported. */
  private readonly conditionsBySource = new Map<string, ActiveCondition[]>();
  private conditionsKey = '[]';
  /** Each source's last list as it reported it, to skip a report that changed nothing. */
  private readonly sourceKeys = new Map<string, string>();
  private host: EngineHost = {};
  /** Answers a process that asks to enrol (enrol/enrolment.ts), once a scheduler with a gate is attached; null: none. */
  enroller: Enroller | null = null;
  private readonly jobViews = new WeakMap<JobView[], Map<number, JobView[]>>();

  constructor(readonly backend: GpuBackend, options: Omit<EngineOptions, 'backend'> = {}) {
    this.sampler = new Sampler(backend.nvml, {
      rateHz: options.rateHz ?? DEFAULT_RATE_HZ,
      simulated: backend.simulated !== null,
      scenario: backend.simulated?.scenario ?? null,
    });
    this.kind = options.kind ?? 'personal';
    const me = userInfo();
    this.owner = { uid: me.uid, gid: me.gid, groups: process.getgroups?.() ?? [], user: me.username, pid: process.pid, admin: me.uid === 0, via: 'internal' };
    this.rights = { engineUid: me.uid, engineUser: me.username, adminGroup: options.adminGroup ?? null };
    this.dispatcher.useRights(this.rights);
    this.sampler.onSnapshot((snapshot) => this.events.emit('snapshot', snapshot));
    this.events.on('snapshot', watchLostGpus(this));
    this.dispatcher.register('snapshot.latest', () => this.sampler.latest);
    const recent = new RecentSampleRing();
    this.sampler.onSnapshot((snapshot) => recent.add(snapshot));
    this.dispatcher.register('samples.recent', ({ seconds }) => recent.read(seconds));
    this.dispatcher.register('alerts.list', (_params, caller) => this.alerts.map((a) => this.alertSeenBy(a, caller)).reverse());
    this.dispatcher.register('alerts.active', () => this.conditions);
    this.dispatcher.register('audit.list', ({ limit, before }, caller) => this.dispatcher.auditPage({ limit: limit ?? 200, before }, caller));
    this.dispatcher.register('session.whoami', (_params, caller) => ({
      user: caller.user,
      uid: caller.uid,
      admin: caller.admin,
      engine: { kind: this.kind, owner: this.owner.user, pid: process.pid },
      otherEngines: otherUsersEngines(this.owner.uid),
      consoleUrl: caller.uid === this.owner.uid ? (this.host.consoleUrl ?? null) : null, // the URL carries the console's token
      connections: this.host.connections?.(caller.uid) ?? null,
    }));
    this.dispatcher.register('engine.stop', () => this.requestStop());
    this.dispatcher.register('sampler.setRate', ({ hz }) => {
      this.sampler.setRate(hz);
      return { hz: this.sampler.rateHz };
    });
  }

  /** The host tells what it offers: how it stops, its console's URL. */
  setHost(host: EngineHost): void {
    this.host = { ...this.host, ...host };
  }

  /** Only the engine's own user gets here (the API registry's `who`). */
  private requestStop(): { pid: number } {
    if (this.kind === 'daemon') throw new ApiError('forbidden', 'The box daemon is stopped by an admin: systemctl stop gpushare.');
    const stop = this.host.stop;
    if (!stop) throw new ApiError('unsupported', `This engine (pid ${process.pid}) is not stopped through its socket: quit the program that runs it.`);
    setImmediate(stop); // after this answer is on its way
    return { pid: process.pid };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.sampler.start();
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.sampler.stop();
  }

  /** A request from a transport, validated and audited. */
  call<M extends ApiMethod>(method: M, params: ApiParams<M>, caller: Caller = this.owner): Promise<ApiResults[M]> {
    return this.dispatcher.dispatch(method, params, caller) as Promise<ApiResults[M]>;
  }

  /** Jobs as `caller` may see them: another user's without their paths or submitted arguments, unless an administrator. Built once per list and user (an event goes to many). */
  jobsSeenBy(jobs: JobView[], caller: Caller): JobView[] {
    const viewer = { uid: caller.uid, everyone: caller.admin || caller.uid === this.owner.uid };
    if (viewer.everyone) return jobs;
    let byUid = this.jobViews.get(jobs);
    if (!byUid) this.jobViews.set(jobs, (byUid = new Map()));
    let seen = byUid.get(caller.uid);
    if (!seen) byUid.set(caller.uid, (seen = jobsSeenBy(jobs, viewer, commandLines(this.sampler.latest))));
    return seen;
  }

  /** The conditions that hold now, every source's. */
  get conditions(): ActiveCondition[] {
    return [...this.conditionsBySource.values()].flat();
  }

  /**
   * Replace one source's active conditions (the scheduler calls it on every evaluation; "gpus" is the
   * lost-GPU watch). Emits 'conditions' only when the whole list changed. A bad list throws and changes nothing.
   */
  setConditions(list: readonly ActiveCondition[], source = 'scheduler'): void {
    const sourceKey = JSON.stringify(list);
    if (this.sourceKeys.get(source) === sourceKey) return; // unchanged since its last report: nothing to check or send (each evaluation reports every queued job's wait)
    const checked = conditionList.parse(list, 'conditions');
    this.sourceKeys.set(source, sourceKey);
    this.conditionsBySource.set(source, checked);
    const all = this.conditions;
    const key = JSON.stringify(all);
    if (key === this.conditionsKey) return;
    this.conditionsKey = key;
    this.events.emit('conditions', all);
  }

  /** An alert as `caller` may read it (another user's job's log is not theirs to read). */
  alertSeenBy(alert: Alert, caller: Caller): Alert {
    return alertSeenBy(alert, { uid: caller.uid, everyone: caller.admin || caller.uid === this.owner.uid });
  }

  /** `uid` and `publicMessage`: whose job it is about, and the sentence everyone else reads. */
  raiseAlert(alert: Omit<KeptAlert, 'id' | 'at'>): Alert {
    const full: KeptAlert = { ...alert, id: ++this.alertSeq, at: Date.now() };
    this.alerts.push(full);
    if (this.alerts.length > ALERTS_KEPT) this.alerts.splice(0, this.alerts.length - ALERTS_KEPT);
    this.events.emit('alert', full);
    return full;
  }
}
