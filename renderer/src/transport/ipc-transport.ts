// Electron: the preload script's two narrow functions, turned into the typed API.
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, GpushareApi } from '../../../shared/api.js';
import { ApiCallError } from '../../../shared/api-client.js';
import type { GpushareBridge } from '../../../shared/bridge.js';
import type { ConsoleTransport } from './transport.js';

export function ipcTransport(bridge: GpushareBridge): ConsoleTransport {
  const api: GpushareApi = {
    async call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
      const answer = await bridge.call(method, params);
      if (!answer.ok) throw ApiCallError.from(answer.error);
      return answer.result as ApiResults[M];
    },
    on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void {
      return bridge.on(event, listener as (data: unknown) => void);
    },
  };
  return {
    kind: 'desktop',
    api,
    onConnection(listener) {
      listener('open', null); // the engine lives in the same app
      return () => undefined;
    },
  };
}
