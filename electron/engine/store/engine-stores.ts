// The stores a personal engine (gpushare serve, start, engine) opens: one behaviour for all of them.
// A usage database that cannot be opened does not stop the engine: it runs, says that usage is not
// being recorded, why and where (stderr, `gpushare status`, the console's banner), and retries.
import { JobStore } from './job-store.js';
import { UsageStore } from './usage-store.js';

export interface EngineStores {
  store: UsageStore;
  /** Managed jobs kept across engines; null when the database is not open (jobs then end with this engine). */
  jobStore: JobStore | null;
}

/** `say` hears each sentence for the person who started the engine (stderr). */
export async function openEngineStores(path: string, say: (line: string) => void, options: { flushIntervalMs?: number } = {}): Promise<EngineStores> {
  const store = await UsageStore.open({ path, whenUnopenable: 'record-later', onNotice: say, flushIntervalMs: options.flushIntervalMs });
  if (!store.status().recording) {
    say(`Jobs are not kept either: they will not outlive this engine.`);
    return { store, jobStore: null };
  }
  try {
    return { store, jobStore: await JobStore.open(store.path, { onNotice: say }) };
  } catch (error) {
    say(`Jobs are not kept this time (they will not outlive this engine): ${error instanceof Error ? error.message : String(error)}, ${path}.`);
    return { store, jobStore: null };
  }
}
