// A child process for the crash test: ingests a synthetic stream (tick i at BASE + i × 10 ms,
// one process per tick) into the store at argv[2], printing each tick's number once recorded,
// until it is killed.
import { CHILD_BASE, CHILD_TICK_MS, fakeGpu, fakeTicks } from './synthetic.js';
import { UsageStore } from '../usage-store.js';

const path = process.argv[2];
if (path) {
  const store = await UsageStore.open({ path, now: () => CHILD_BASE, flushIntervalMs: Number(process.argv[3] ?? 250) });
  const gpus = [fakeGpu(0)];
  const tick = fakeTicks(CHILD_TICK_MS);
  let i = 0;
  setInterval(() => {
    store.ingest(tick(CHILD_BASE + i * CHILD_TICK_MS, gpus, [{ pid: 4242, gpu: 0, user: 'crash', sm: 100, mem: 2 ** 30 }]));
    process.stdout.write(`${i}\n`);
    i++;
  }, CHILD_TICK_MS);
}
