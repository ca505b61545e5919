// One entry point for every command: validate against the API registry's schema, check who may call
// it, run the handler, write an audit entry (who, what, when, result) for each change asked; a user's
// refusals have a rate bound.
import { userInfo } from 'node:os';
import { API_METHODS, isApiMethod, isReadMethod, type ApiMethod, type ApiParams, type ApiResults } from '../../../shared/api.js';
import type { AuditEntry } from '../../../shared/jobs.js';
import { checkNesting, show } from '../../../shared/schema.js';
import { ApiError, toErrorBody } from './api-error.js';
import { AuditLog, REFUSAL_BURST, RefusalRate, type AuditPage, type AuditReader } from './audit-log.js';
import { boundedAuditEntry, NOT_KEPT } from './audit-summary.js';
import { requireCallerRight, type BoxRights, type JobOwners } from './rights.js';

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

/** Where audit.list pages from when the engine has a store (its whole retention, not only what is in memory); null: from memory. */
export type AuditSource = (page: AuditPage, reader: AuditReader) => Promise<AuditEntry[]> | null;

/** No API method's params nest deeper than a few levels (policy.set: 4); deeper is refused before any schema reads it. */
const PARAMS_MAX_DEPTH = 16;

export class Dispatcher {
  private readonly handlers = new Map<ApiMethod, Handler<ApiMethod>>();
  private readonly audit = new AuditLog();
  private readonly refusals = new RefusalRate();
  private auditSource: AuditSource | null = null;
  private rights: BoxRights;
  private jobOwners: JobOwners | null = null;

  /** `ownerUid`: the engine's own user, who reads every audit entry and whose refusals have no rate bound. */
  constructor(private readonly ownerUid: number = process.getuid?.() ?? -1) {
    this.rights = { engineUid: ownerUid, engineUser: ownerUid === (process.getuid?.() ?? -1) ? userInfo().username : `uid ${ownerUid}`, adminGroup: null };
  }

  /** Who administers the box (the daemon names a group); the registry's `who` of each method is checked against it. */
  useRights(rights: BoxRights): void {
    this.rights = rights;
  }

  /** Whose each job is, for the methods only a job's owner (or an administrator) may call. */
  useJobOwners(owners: JobOwners): void {
    this.jobOwners = owners;
  }

  register<M extends ApiMethod>(method: M, handler: Handler<M>): void {
    if (this.handlers.has(method)) throw new Error(`A handler for ${method} is already registered.`);
    this.handlers.set(method, handler as unknown as Handler<ApiMethod>);
  }

  /** Run a request from any transport. Throws ApiError / ValidationError for the caller to see. */
  async dispatch(method: string, params: unknown, caller: Caller): Promise<unknown> {
    if (!isApiMethod(method)) throw new ApiError('invalid-request', `Unknown method ${show(method)}.`);
    const handler = this.handlers.get(method);
    const read = isReadMethod(method);
    const bounded = !read && caller.uid !== this.ownerUid;
    if (bounded && !this.refusals.allows(caller.uid)) {
      // past the rate bound: refused unread, and only counted
      const error = new ApiError('rate-limited', `${method} was not looked at: ${caller.user} (uid ${caller.uid}) has had more than ${REFUSAL_BURST} requests refused lately; past that, one a second is heard. Try again in ${this.refusals.waitSeconds(caller.uid)} s. Nothing was changed.`);
      this.record(caller, method, null, error);
      throw error;
    }
    let parsed: unknown = params;
    try {
      checkNesting(params, PARAMS_MAX_DEPTH, 'params');
      parsed = API_METHODS[method].params.parse(params ?? {}, 'params');
      if (!handler) throw new ApiError('unsupported', `${method} is not available in this engine yet.`);
      requireCallerRight(API_METHODS[method].who, parsed, caller, this.rights, this.jobOwners);
      const result = await handler(parsed as ApiParams<ApiMethod>, caller);
      if (!read) this.record(caller, method, parsed, null);
      return result;
    } catch (error) {
      if (bounded) this.refusals.spend(caller.uid);
      if (!read) this.record(caller, method, parsed, error);
      throw error;
    }
  }

  /** The last `limit` entries kept in memory, newest first. */
  auditLog(limit = 200): AuditEntry[] {
    return this.audit.last(limit);
  }

  /** audit.list: one page, of the entries this caller may read (everyone's: an administrator or the engine's own user). */
  auditPage(page: AuditPage, caller: Caller): Promise<AuditEntry[]> | AuditEntry[] {
    const reader: AuditReader = { uid: caller.uid, user: caller.user, everyone: caller.admin || caller.uid === this.ownerUid };
    return this.auditSource?.(page, reader) ?? this.audit.page(page, reader);
  }

  /** Page audit.list from the store (null: from memory again). */
  useAuditSource(source: AuditSource | null): void {
    this.auditSource = source;
  }

  /** Hear each new entry, and each change of a summary of refusals (the same entry again). */
  onAudit(listener: (entry: AuditEntry) => void): () => void {
    return this.audit.onEntry(listener);
  }

  private record(caller: Caller, what: ApiMethod, params: unknown, error: unknown): void {
    const known = Object.keys(API_METHODS[what].params.info.shape);
    const result = error === null ? 'ok' : toErrorBody(error).message;
    const raw: AuditEntry = { id: 0, at: Date.now(), who: caller.user, uid: caller.uid, what, params, result };
    let bounded: AuditEntry;
    try {
      bounded = boundedAuditEntry(raw, known);
    } catch (failure) {
      // the request's own answer must not become an audit failure: keep the row, without its params
      bounded = boundedAuditEntry({ ...raw, params: { [NOT_KEPT]: { note: `could not be summarised: ${failure instanceof Error ? failure.message : String(failure)}` } } });
    }
    const { id: _id, ...row } = bounded;
    if (error === null) this.audit.accepted(row);
    else this.audit.refused({ ...row, uid: caller.uid }, toErrorBody(error).code);
  }
}
