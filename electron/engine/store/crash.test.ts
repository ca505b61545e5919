// A crash (SIGKILL) while ingesting loses at most the last second of samples, and nothing before it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { CHILD_BASE, CHILD_TICK_MS } from './testing/synthetic.js';
import { UsageStore } from './usage-store.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const child = fileURLToPath(new URL('./testing/ingest-child.js', import.meta.url));

for (const killAt of [137, 263]) {
  test(`SIGKILL during ingest loses at most the last second (killed after tick ${killAt})`, async () => {
    const path = join(dir, `usage-${killAt}.db`);
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT; // a plain process, not a test file reporting to this runner
    const proc = spawn(process.execPath, [child, path], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let last = -1;
    const lines = createInterface({ input: proc.stdout! });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
    const drained = new Promise((resolve) => lines.once('close', resolve)); // every tick it printed before it died
    await new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        last = Number(line);
        if (last === killAt) resolve();
      });
    });
    proc.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    await drained;

    const store = await UsageStore.open({ path, now: () => CHILD_BASE });
    const row = (await store.db.get<{ n: number; newest: number | null }>('SELECT count(*) AS n, max(t) AS newest FROM samples'))!;
    await store.close();
    const survived = row.newest === null ? -1 : (row.newest - CHILD_BASE) / CHILD_TICK_MS;
    const lostMs = (last - survived) * CHILD_TICK_MS;
    console.log(`killed after tick ${killAt}: ingested ticks 0..${last}, ${row.n} survived (0..${survived}); lost the last ${lostMs} ms`);
    assert.equal(row.n, survived + 1, 'every tick before the newest survivor is there');
    assert.ok(survived >= 0, 'something was written');
    assert.ok(lostMs <= 1000, `lost ${lostMs} ms of samples`);
  });
}
