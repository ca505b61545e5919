// Any GPU process can grow what the root daemon copies from /proc (finding 8 of issue 24): mallory, with no gpushare
// call, starts GPU processes whose command lines and environments are megabytes long. alice's snapshot and job list
// still cost a few KB per process, and the daemon keeps answering.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import type { Snapshot } from '../../../shared/snapshot.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { paddedExec, type Padding } from '../testing/padded-exec.js';
import { isRoot, LabBox, type LabUser } from './testing/lab-box.js';

const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';
const SCENARIO = 'a100-40gb';
const MB = 1024 * 1024;
const HOSTILE = 8;
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;
const started: ChildProcess[] = [];

before(async () => {
  if (SKIP) return;
  box = new LabBox(`z${process.pid % 100000}`);
  alice = box.user('alice');
  mallory = box.user('mallory');
  await box.start({ rateHz: 2 }, SCENARIO);
});
after(async () => {
  if (SKIP) return;
  for (const child of started) child.kill('SIGKILL');
  await box.dispose();
});

/** A fakejob of `user`'s, outside gpushare, holding 1 MB behind a padded command line or environment; resolves once it holds it. */
async function paddedAs(user: LabUser, padding: Padding): Promise<ChildProcess> {
  const { argv, env } = paddedExec([box.fakejob, '--mem', '1M', 'hold', '--'], padding);
  const child = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', ...argv], {
    env: { PATH: '/usr/bin:/bin', GPUSHARE_FAKEGPU_STATE: join(box.dir, 'run', `sim-${SCENARIO}.state`), LD_LIBRARY_PATH: join(box.nativeCopy, 'fakegpu', 'build'), ...env },
    cwd: '/',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  started.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${user.name}'s padded fakejob exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line.includes('"event":"ready"') && resolve());
  });
  return child;
}

/** What the daemon has read through read(2) and the like, in bytes (/proc/PID/io rchar). */
const bytesRead = (): number => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${box.daemon!.pid}/io`, 'utf8'))?.[1] ?? NaN);
const daemonRss = (): number => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${box.daemon!.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;

test(`mallory's ${HOSTILE} GPU processes with 5.5 MB command lines and environments cost alice's snapshot and job list a few KB each`, { skip: SKIP }, async (t) => {
  const rssBefore = daemonRss();
  const hostile = await Promise.all(
    Array.from({ length: HOSTILE }, (_, i) => paddedAs(mallory, i % 2 === 0 ? { argBytes: 5.5 * MB } : { envBytes: 5.5 * MB, envAfter: { SSH_CONNECTION: `10.0.0.${i} 5000 10.0.0.1 22` } })),
  );
  const pids = new Set(hostile.map((c) => c.pid!));
  let snapshot: Snapshot | null = null;
  for (let tries = 0; tries < 100; tries++) {
    snapshot = await box.ok(alice, 'snapshot.latest', {});
    if (snapshot && [...pids].every((pid) => snapshot!.processes.some((p) => p.pid === pid))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(snapshot, 'the daemon answers alice');
  const rows = snapshot.processes.filter((p) => pids.has(p.pid));
  assert.equal(rows.length, HOSTILE, "every one of mallory's processes is listed");
  const jobs = (await box.ok(alice, 'jobs.list', {})).filter((j) => j.pid !== null && pids.has(j.pid));
  t.diagnostic(`alice's snapshot: ${jsonBytes(snapshot)} bytes; her job list's ${jobs.length} jobs of mallory's: ${jsonBytes(jobs)} bytes; daemon RSS ${Math.round(rssBefore / MB)} → ${Math.round(daemonRss() / MB)} MB`);

  for (const p of rows) {
    assert.equal(p.user, mallory.name);
    assert.ok(jsonBytes(p) <= 8192, `pid ${p.pid}'s row is at most 8 KB of JSON, not ${jsonBytes(p)}`);
    if (p.argvCut) assert.ok(p.argvCut.bytes > 5 * MB, `pid ${p.pid}'s whole command line, ${p.argvCut.bytes} bytes, is noted`);
  }
  assert.equal(rows.filter((p) => p.argvCut).length, HOSTILE / 2, 'the padded command lines are each noted as cut');
  assert.ok(jsonBytes(snapshot) <= 128 * 1024, `alice's snapshot is at most 128 KB of JSON, not ${jsonBytes(snapshot)}`);
  assert.equal(jobs.length, HOSTILE, "mallory's processes are on alice's job list");
  for (const job of jobs) assert.ok(jsonBytes(job.argv) <= 4096, `${job.id}'s argv is at most 4 KB of JSON, not ${jsonBytes(job.argv)}`);
  assert.equal(box.daemon!.exitCode, null, 'the daemon runs on');

  // as `gpushare ps` shows them: the cut marked with the whole size, in the text and in --json
  const ps = (args: string[]): string =>
    execFileSync(process.execPath, [CLI_PATH, 'ps', ...args], { env: { ...process.env, ...CLI_ENV, GPUSHARE_SOCKET: box.socketPath }, encoding: 'utf8', maxBuffer: 64 * MB });
  const cutPid = rows.find((p) => p.argvCut)!.pid;
  const text = ps([]).split('\n');
  assert.match(text.find((l) => l.trimStart().startsWith(`${cutPid} `)) ?? '', /\[cut: 5\.\dM\] \S*fakejob --mem 1M hold --/);
  const json = JSON.parse(ps(['--json'])) as Snapshot;
  assert.ok(json.processes.find((p) => p.pid === cutPid)?.argvCut?.bytes! > 5 * MB, 'ps --json has the whole size');
});

test("alice's whoami, which looks for other engines on the box, reads the start of each command line, never a whole one of mallory's", { skip: SKIP }, async (t) => {
  // the processes of the test before: 4 of mallory's command lines are 5.5 MB each
  const padded = started.filter((c) => c.exitCode === null && readFileSync(`/proc/${c.pid}/cmdline`).length > 5 * MB).length;
  assert.ok(padded >= 4, `mallory's padded processes still run (${padded})`);
  await box.ok(alice, 'session.whoami', {});
  const before = bytesRead();
  for (let i = 0; i < 3; i++) await box.ok(alice, 'session.whoami', {});
  const read = bytesRead() - before;
  t.diagnostic(`3 whoami with ${padded} command lines of 5.5 MB on the box: the daemon read ${read} bytes`);
  assert.ok(read < 5 * MB, `3 whoami read less than one of those command lines, not ${read} bytes`);
});
