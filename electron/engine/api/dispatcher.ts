// One entry point for every command: validate against shared/ schemas, run the
// handler, write an audit entry (who, what, when, result).
import { apiSchemas, isApiMethod, type ApiMethod, type ApiParams, type ApiResults } from '../../../shared/api.js';
import type { AuditEntry } from '../../../shared/jobs.js';
import { checkNesting, show } from '../../../shared/schema.js';
import { ApiError, toErrorBody } from './api-error.js';
import { boundedAuditEntry, NOT_KEPT } from './audit-summary.js';

/** Who sent a request: on the unix socket always the kernel's word (SO_PEERCRED), never the message's. */
export interface Caller {
  uid: number;
  gid: number;
  /** Supplementary groups, from the system (not from the client). */
  groups: readonly number[];
  user: string;
  /** The connecting process, where the kernel says (unix socket). */
  pid: number | null;
  /** May act on other users' jobs and processes, and change the box (MIG, MPS, lab policy). */
  admin: boolean;
  via: 'socket' | 'web' | 'ipc' | 'internal';
}

export type Handler<M extends ApiMethod> = (params: ApiParams<M>, caller: Caller) => Promise<ApiResults[M]> | ApiResults[M];

/** Methods that only read: not written to the audit log. */
const READS: ReadonlySet<ApiMethod> = new Set(['snapshot.latest', 'samples.recent', 'jobs.list', 'alerts.list', 'alerts.active', 'audit.list', 'session.whoami', 'mps.status', 'mig.layout', 'reports.query', 'reports.export', 'policy.get', 'store.status']);
const AUDIT_KEPT = 10_000;
/** No API method's params nest deeper than a few levels (policy.set: 4); deeper is refused before any schema reads it. */
const PARAMS_MAX_DEPTH = 16;

export class Dispatcher {
  private readonly handlers = new Map<ApiMethod, Handler<ApiMethod>>();
  private readonly audit: AuditEntry[] = [];
  private auditSeq = 0;
  private readonly auditListeners = new Set<(entry: AuditEntry) => void>();

  register<M extends ApiMethod>(method: M, handler: Handler<M>): void {
    if (this.handlers.has(method)) throw new Error(`A handler for ${method} is already registered.`);
    this.handlers.set(method, handler as unknown as Handler<ApiMethod>);
  }

  /** Run a request from any transport. Throws ApiError / ValidationError for the caller to see. */
  async dispatch(method: string, params: unknown, caller: Caller): Promise<unknown> {
    if (!isApiMethod(method)) throw new ApiError('invalid-request', `Unknown method ${show(method)}.`);
    const handler = this.handlers.get(method);
    let parsed: unknown = params;
    try {
      checkNesting(params, PARAMS_MAX_DEPTH, 'params');
      parsed = apiSchemas[method].parse(params ?? {}, 'params');
      if (!handler) throw new ApiError('unsupported', `${method} is not available in this engine yet.`);
      const result = await handler(parsed as ApiParams<ApiMethod>, caller);
      if (!READS.has(method)) this.record(caller, method, parsed, 'ok');
      return result;
    } catch (error) {
      if (!READS.has(method)) this.record(caller, method, parsed, toErrorBody(error).message);
      throw error;
    }
  }

  auditLog(limit = 200): AuditEntry[] {
    return this.audit.slice(-limit).reverse();
  }

  onAudit(listener: (entry: AuditEntry) => void): () => void {
    this.auditListeners.add(listener);
    return () => this.auditListeners.delete(listener);
  }

  private record(caller: Caller, what: ApiMethod, params: unknown, result: string): void {
    const known = Object.keys(apiSchemas[what].info.shape);
    const raw: AuditEntry = { id: ++this.auditSeq, at: Date.now(), who: caller.user, what, params, result };
    let entry: AuditEntry;
    try {
      entry = boundedAuditEntry(raw, known);
    } catch (error) {
      // the request's own answer must not become an audit failure: keep the row, without its params
      entry = boundedAuditEntry({ ...raw, params: { [NOT_KEPT]: { note: `could not be summarised: ${error instanceof Error ? error.message : String(error)}` } } });
    }
    this.audit.push(entry);
    if (this.audit.length > AUDIT_KEPT) this.audit.splice(0, this.audit.length - AUDIT_KEPT);
    for (const listener of this.auditListeners) listener(entry);
  }
}
