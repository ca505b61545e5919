// The one API between the engine and its clients (the console over IPC or WebSocket,
// the CLI over the unix socket). Every request is checked against these schemas first.
import { PRIORITIES, SHARING_MODES, type Alert, type AuditEntry, type JobView } from './jobs.js';
import { array, boolean, nullable, number, object, oneOf, optional, string, union, type Infer, type Schema } from './schema.js';
import type { Snapshot } from './snapshot.js';

const jobId = string({ pattern: /^(j\d+|p\d+)$/, describe: 'a job id like "j12" (managed) or "p4242" (a process)' });
const gpuIndex = number({ integer: true, min: 0, max: 63 });
const bytes = number({ integer: true, min: 0, unit: 'bytes' });

export const apiSchemas = {
  'snapshot.latest': object({}),
  'jobs.list': object({ includeFinished: optional(boolean()) }),
  'jobs.submit': object({
    argv: array(string({ min: 1 }), { min: 1, max: 4096 }),
    cwd: optional(string({ min: 1 })),
    gpu: union(gpuIndex, oneOf(['auto'] as const), 'a GPU index or "auto"'),
    priority: optional(oneOf(PRIORITIES)),
    memoryQuotaBytes: optional(nullable(bytes)),
    memoryRequestBytes: optional(nullable(bytes)),
    mode: optional(oneOf(['shared', 'exclusive'] as const)),
  }),
  'jobs.setPriority': object({ job: jobId, priority: oneOf(PRIORITIES) }),
  'jobs.setQuota': object({ job: jobId, bytes: nullable(bytes) }),
  'jobs.setMode': object({
    job: jobId,
    mode: oneOf(SHARING_MODES),
    mpsSharePercent: optional(number({ integer: true, min: 1, max: 100, unit: '%' })),
    migSlice: optional(string({ pattern: /^MIG-/, describe: 'a MIG slice UUID ("MIG-…")' })),
  }),
  'jobs.place': object({ job: jobId, gpu: gpuIndex }),
  'jobs.suspend': object({ job: jobId }),
  'jobs.resume': object({ job: jobId }),
  'jobs.park': object({ job: jobId }),
  'jobs.unpark': object({ job: jobId }),
  'jobs.terminate': object({ job: jobId }),
  'alerts.list': object({}),
  'audit.list': object({ limit: optional(number({ integer: true, min: 1, max: 10_000 })) }),
  'sampler.setRate': object({ hz: number({ min: 0.2, max: 10, unit: 'Hz' }) }),
} satisfies Record<string, Schema<unknown>>;

export type ApiMethod = keyof typeof apiSchemas;
export type ApiParams<M extends ApiMethod> = Infer<(typeof apiSchemas)[M]>;

export interface ApiResults {
  'snapshot.latest': Snapshot | null;
  'jobs.list': JobView[];
  'jobs.submit': JobView;
  'jobs.setPriority': JobView;
  'jobs.setQuota': JobView;
  'jobs.setMode': JobView;
  'jobs.place': JobView;
  'jobs.suspend': JobView;
  'jobs.resume': JobView;
  'jobs.park': JobView;
  'jobs.unpark': JobView;
  'jobs.terminate': JobView;
  'alerts.list': Alert[];
  'audit.list': AuditEntry[];
  'sampler.setRate': { hz: number };
}

/** What the engine pushes to every client. */
export interface ApiEvents {
  snapshot: Snapshot;
  jobs: JobView[];
  alert: Alert;
}
export type ApiEvent = keyof ApiEvents;

export const isApiMethod = (name: unknown): name is ApiMethod => typeof name === 'string' && Object.hasOwn(apiSchemas, name);

/** The typed surface every transport offers the renderer and the CLI. */
export interface GpushareApi {
  call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]>;
  on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void;
}

// Wire messages (JSON), the same on the unix socket, the WebSocket and Electron IPC.
export interface RequestMessage {
  kind: 'request';
  id: number;
  method: string;
  params: unknown;
}
export type ResponseMessage =
  | { kind: 'response'; id: number; ok: true; result: unknown }
  | { kind: 'response'; id: number; ok: false; error: ApiErrorBody };
export interface EventMessage {
  kind: 'event';
  event: ApiEvent;
  data: unknown;
}

export interface ApiErrorBody {
  /** "invalid-request", "not-found", "forbidden", "conflict", "unsupported", "internal". */
  code: string;
  message: string;
}
/** A client asks for events (the console wants all; a CLI command usually none). */
export interface SubscribeMessage {
  kind: 'subscribe';
  events: ApiEvent[];
}
export const API_EVENTS: readonly ApiEvent[] = ['snapshot', 'jobs', 'alert'];
