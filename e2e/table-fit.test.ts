// The process table clips a Command or Where cell only when its text overflows the column
// (a clip on every cell cost ~2 ms per update in bench/ui): text never spills into the next
// column, a cut text ends in an ellipsis, and the full text stays in the cell and its tooltip.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();

/** Every Command and Where cell: whether its text overflows its box, and whether it is clipped with an ellipsis. */
const cells = (h: ConsoleHarness) =>
  h.page.locator('.process-table td.command, .process-table td.where').evaluateAll((tds) =>
    tds.map((td) => {
      const style = td.ownerDocument.defaultView!.getComputedStyle(td);
      return {
        pid: td.parentElement?.getAttribute('data-pid'),
        column: td.classList.contains('command') ? 'command' : 'where',
        text: td.textContent,
        title: td.getAttribute('title'),
        overflows: td.scrollWidth > td.clientWidth,
        clipped: style.overflowX === 'hidden' && style.textOverflow === 'ellipsis',
      };
    }),
  );

describe('the process table clips only the cells that overflow', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  let inJob: number;
  let plain: number;

  before(async () => {
    h = await openConsoleHarness('a100-40gb');
    const a = h.driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '90'], {
      SLURM_JOB_ID: '4242424242',
      SSH_CONNECTION: '203.0.113.55 40100 203.0.113.1 22',
      SSH_TTY: '/dev/pts/14',
    });
    const b = h.driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '90'], { SLURM_JOB_ID: '', SSH_CONNECTION: '' });
    await Promise.all([a.ready, b.ready]);
    inJob = a.pid;
    plain = b.pid;
    await h.page.goto(h.web.url);
    await h.page.locator('.process-panel').scrollIntoViewIfNeeded();
    await h.page.locator(`.process-table tr[data-pid="${inJob}"] td.where`).waitFor({ timeout: 10_000 });
  });
  after(async () => h?.close());

  test('a long Where is cut with an ellipsis and keeps its whole text; a dash and short commands are not clipped; nothing spills', async () => {
    const shown = await eventually(async () => {
      const all = await cells(h);
      return all.some((c) => c.pid === String(inJob) && c.column === 'where' && c.clipped) ? all : null;
    }, 10_000, 'the long Where cell to be clipped');
    const where = (pid: number) => shown.find((c) => c.pid === String(pid) && c.column === 'where')!;
    assert.equal(where(inJob).text, 'slurm 4242424242 · ssh 203.0.113.55:40100 pts/14', 'the cell holds the whole text');
    assert.equal(where(inJob).title, where(inJob).text, 'and so does its tooltip');
    assert.ok(where(inJob).overflows, 'the text is wider than the 170 px column');
    assert.equal(where(plain).text, '–');
    assert.equal(where(plain).clipped, false, 'a dash fits: no clip');
    assert.ok(shown.filter((c) => c.column === 'command').every((c) => !c.clipped), `commands fit the wide column unclipped: ${JSON.stringify(shown.filter((c) => c.column === 'command' && c.clipped))}`);
    for (const c of shown) assert.ok(!c.overflows || c.clipped, `text overflowing its cell is clipped: ${JSON.stringify(c)}`);
  });

  test('a narrower window: commands that no longer fit get clipped, and none spills', async () => {
    await h.page.setViewportSize({ width: 1000, height: 1000 });
    const shown = await eventually(async () => {
      const all = await cells(h);
      return all.some((c) => c.column === 'command' && c.clipped) ? all : null;
    }, 10_000, 'a command cell to be clipped in a narrow window');
    for (const c of shown) assert.ok(!c.overflows || c.clipped, `text overflowing its cell is clipped: ${JSON.stringify(c)}`);
    assert.ok(shown.filter((c) => c.column === 'command').every((c) => c.text && c.title && c.title.endsWith(c.text.split(' ').slice(1).join(' '))), 'each command cell keeps its whole command');
  });
});
