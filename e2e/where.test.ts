// The console's process table says where each process runs, as the engine read it from the process's own /proc.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();

describe('the process table\'s Where column', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  let inJob: number;
  let plain: number;

  before(async () => {
    h = await openConsoleHarness('a100-40gb');
    // a fakejob started as Slurm and sshd would start it: the engine finds these in /proc/PID/environ
    const a = h.driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '90'], {
      SLURM_JOB_ID: '31337',
      SSH_CONNECTION: '203.0.113.5 40100 203.0.113.1 22',
      SSH_TTY: '/dev/pts/4',
    });
    const b = h.driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '90'], { SLURM_JOB_ID: '', SSH_CONNECTION: '' });
    await Promise.all([a.ready, b.ready]);
    inJob = a.pid;
    plain = b.pid;
    await h.page.goto(h.web.url);
  });
  after(async () => h?.close());

  test('shows the Slurm job and ssh session of a process started in them, and a dash for one started in neither', async () => {
    await h.page.locator('.process-panel').scrollIntoViewIfNeeded();
    assert.equal(await h.page.locator('.process-table th.where').textContent(), 'Where');
    const where = (pid: number) => h.page.locator(`.process-table tr[data-pid="${pid}"] td.where`);
    await where(inJob).waitFor({ timeout: 10_000 });
    assert.equal(await where(inJob).innerText(), 'slurm 31337 · ssh 203.0.113.5:40100 pts/4');
    assert.equal(await where(plain).innerText(), '–');
    // the same context the engine publishes (and `gpushare ps --json` prints)
    const published = (await h.engine.call('snapshot.latest', {}))?.processes.find((p) => p.pid === inJob)?.context;
    assert.equal(published?.slurmJobId, '31337');
    await h.screenshot('console-where-column');
  });
});
