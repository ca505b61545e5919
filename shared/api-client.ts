// The client half of the wire protocol (request ids, responses, events), shared by the
// browser console's WebSocket transport and anything else that speaks RequestMessage.
import { followSnapshots } from './snapshot-follower.js';
import type { Snapshot } from './snapshot.js';
import type { SnapshotDelta } from './snapshot-delta.js';
import type { ApiErrorBody, ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, EventMessage, GpushareApi, RequestMessage, ResponseMessage, SubscribeMessage } from './api.js';

/** An API error as the engine reported it: `message` is written for a person. */
export class ApiCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }

  static from(body: ApiErrorBody): ApiCallError {
    return new ApiCallError(body.code, body.message);
  }
}

export interface MessageClient {
  readonly api: GpushareApi;
  /** Feed one parsed message from the engine. */
  receive(message: unknown): void;
  /** The connection is gone: every request still waiting fails with this reason. */
  failPending(reason: string): void;
}

type Waiter = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export interface MessageClientOptions {
  /**
   * The transport subscribes with snapshotDeltas: `snapshot.delta` events are applied here and every `snapshot`
   * listener hears the whole snapshot they make (a delta that does not fit makes this client ask for snapshot.latest).
   */
  snapshotDeltas?: boolean;
}

export function createMessageClient(send: (message: RequestMessage | SubscribeMessage) => void, options: MessageClientOptions = {}): MessageClient {
  let nextId = 1;
  const pending = new Map<number, Waiter>();
  const listeners = new Map<ApiEvent, Set<(data: unknown) => void>>();
  const emit = (event: ApiEvent, data: unknown): void => {
    for (const listener of listeners.get(event) ?? []) listener(data);
  };
  const snapshots = options.snapshotDeltas
    ? followSnapshots(
        () => api.call('snapshot.latest', {}),
        (snapshot) => emit('snapshot', snapshot),
      )
    : null;
  const api: GpushareApi = {
    call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        try {
          send({ kind: 'request', id, method, params });
        } catch (error) {
          pending.delete(id);
          reject(new ApiCallError('unavailable', `The engine cannot be reached (${error instanceof Error ? error.message : String(error)}).`));
        }
      });
    },
    on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (data: unknown) => void);
      return () => set.delete(listener as (data: unknown) => void);
    },
  };
  return {
    api,
    receive(raw) {
      const message = raw as ResponseMessage | EventMessage;
      if (message?.kind === 'event') {
        if (snapshots && message.event === 'snapshot') return snapshots.whole(message.data as Snapshot);
        if (snapshots && message.event === 'snapshot.delta') return snapshots.delta(message.data as SnapshotDelta);
        emit(message.event, message.data);
        return;
      }
      if (message?.kind !== 'response') return;
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(ApiCallError.from(message.error));
    },
    failPending(reason) {
      snapshots?.reset(); // the connection is gone: the next one starts from a whole snapshot
      for (const waiter of pending.values()) waiter.reject(new ApiCallError('unavailable', reason));
      pending.clear();
    },
  };
}
