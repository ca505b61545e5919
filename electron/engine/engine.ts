// The engine: sampler, API dispatcher, alerts and events. Hosted by Electron main,
// `gpushare serve` or a daemon; never imports electron.
import { userInfo } from 'node:os';
import { activeConditionSchema, type ActiveCondition, type ApiEvents, type ApiMethod, type ApiParams, type ApiResults } from '../../shared/api.js';
import type { Alert, EngineKind } from '../../shared/jobs.js';
import { array } from '../../shared/schema.js';
import { Dispatcher, type Caller } from './api/dispatcher.js';
import { requireBoxRight, type BoxRights } from './api/rights.js';
import { EventBus } from './event-bus.js';
import type { GpuBackend } from './gpu/open-backend.js';
import { watchLostGpus } from './gpu-lost-watch.js';
import { DEFAULT_RATE_HZ, Sampler } from './sampler/sampler.js';

export interface EngineOptions {
  backend: GpuBackend;
  rateHz?: number;
  /** 'daemon': the box's one scheduler, every user a client; 'personal' (default): one user's engine. */
  kind?: EngineKind;
  /** The box daemon's administrators' group (root always administers). */
  adminGroup?: string;
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
    this.sampler.onSnapshot((snapshot) => this.events.emit('snapshot', snapshot));
    this.events.on('snapshot', watchLostGpus(this));
    this.dispatcher.register('snapshot.latest', () => this.sampler.latest);
    this.dispatcher.register('alerts.list', () => [...this.alerts].reverse());
    this.dispatcher.register('alerts.active', () => this.conditions);
    this.dispatcher.register('audit.list', ({ limit }) => this.dispatcher.auditLog(limit));
    this.dispatcher.register('session.whoami', (_params, caller) => ({
      user: caller.user,
      uid: caller.uid,
      admin: caller.admin,
      engine: { kind: this.kind, owner: this.owner.user, pid: process.pid },
    }));
    this.dispatcher.register('sampler.setRate', ({ hz }, caller) => {
      requireBoxRight(caller, this.rights, 'change the sampling rate', 'every user of the box sees the GPUs at that rate');
      this.sampler.setRate(hz);
      return { hz: this.sampler.rateHz };
    });
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

  /** The conditions that hold now, every source's. */
  get conditions(): ActiveCondition[] {
    return [...this.conditionsBySource.values()].flat();
  }

  /**
   * Replace one source's active conditions (the scheduler calls it on every evaluation; "gpus" is the
   * lost-GPU watch). Emits 'conditions' only when the whole list changed. A bad list throws and changes nothing.
   */
  setConditions(list: readonly ActiveCondition[], source = 'scheduler'): void {
    const checked = conditionList.parse(list, 'conditions');
    this.conditionsBySource.set(source, checked);
    const all = this.conditions;
    const key = JSON.stringify(all);
    if (key === this.conditionsKey) return;
    this.conditionsKey = key;
    this.events.emit('conditions', all);
  }

  raiseAlert(alert: Omit<Alert, 'id' | 'at'>): Alert {
    const full: Alert = { ...alert, id: ++this.alertSeq, at: Date.now() };
    this.alerts.push(full);
    if (this.alerts.length > ALERTS_KEPT) this.alerts.splice(0, this.alerts.length - ALERTS_KEPT);
    this.events.emit('alert', full);
    return full;
  }
}
