// Electron: the preload script's two narrow functions, turned into the typed API.
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, GpushareApi } from '../../../shared/api.js';
import { ApiCallError } from '../../../shared/api-client.js';
import type { ConnectionMessage, GpushareBridge } from '../../../shared/bridge.js';
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
      // the engine runs in its own process: the main process says when the window's connection opens or ends
      let heard = false;
      const off = bridge.on('connection', (data) => {
        heard = true;
        const { state, detail } = data as Omit<ConnectionMessage, 'kind'>;
        listener(state, detail);
      });
      if (!heard) listener('connecting', null);
      return off;
    },
  };
}
