// Enrolment against the box daemon, as root with users the test creates: mallory tries to join alice's
// job every way a process can (claiming alice's pid in the message, sharing her process group, an
// environment naming her gate slot, park file and job) and never does; 10,000 enrolment requests from one
// user are answered or refused without the daemon holding more for them; a process that forks children
// that enrol in a loop is one job. Counts attempts and what came of them, never a latency.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { isRoot, LabBox, type LabUser } from '../daemon/testing/lab-box.js';
import { MAX_ENROLLED_JOBS_PER_USER } from './enrolment.js';

const SCENARIO = 'h100x2-mig';
const MiB = 1024 ** 2;
const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;
let carol: LabUser;
const children: ChildProcess[] = [];

before(async () => {
  if (SKIP) return;
  box = new LabBox(`e${process.pid % 10000}`);
  alice = box.user('alice');
  mallory = box.user('mallory');
  carol = box.user('carol');
  await box.start({ rateHz: 5, policy: { limits: [{ user: carol.name, maxMemory: '256M' }] } }, SCENARIO);
});
after(async () => {
  if (SKIP) return;
  for (const c of children) kill({ child: c } as Run);
  await box.dispose();
});

const probe = () => join(box.nativeCopy, 'preload', 'build', 'preload_probe');
const library = () => join(box.nativeCopy, 'preload', 'build', 'libgpushare-preload.so');
const state = () => join(box.dir, 'run', `sim-${SCENARIO}.state`);

/** The environment a user's own session gives a CUDA program with the library loaded (enrol --shell). */
function sessionEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    GPUSHARE_FAKEGPU_STATE: state(),
    LD_LIBRARY_PATH: join(box.nativeCopy, 'fakegpu', 'build'),
    LD_PRELOAD: library(),
    GPUSHARE_DAEMON_SOCKET: box.socketPath,
    GPUSHARE_ENROL_WAIT_MS: '3000', // two busy cores: no flake from the 50 ms default
    GPUSHARE_PRELOAD_DEBUG: '1',
    ...extra,
  };
}

interface Run {
  child: ChildProcess;
  out: string;
  err: string;
  exited: Promise<number | null>;
}

/** argv run by root's `sh -c` in a session of its own (setpriv inside drops to a user). */
function run(script: string, env: Record<string, string>): Run {
  const child = spawn('setsid', ['sh', '-c', script], { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const r: Run = { child, out: '', err: '', exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  child.stdout!.on('data', (d: Buffer) => (r.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (r.err += d.toString()));
  return r;
}

/** Its whole session (setsid made sh its leader): the probes hold its pipes open. */
function kill(r: Run): void {
  try {
    process.kill(-r.child.pid!, 'SIGKILL');
  } catch {
    // gone
  }
}

const as = (user: LabUser, command: string) => `setpriv --reuid ${user.uid} --regid ${user.gid} --init-groups -- ${command}`;

async function until<T>(what: string, step: () => Promise<T | undefined | false> | T | undefined | false, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await step();
    if (value !== undefined && value !== false) return value;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const jobs = async (): Promise<JobView[]> => box.ok(null, 'jobs.list', {});
const enrolledAs = (err: string): string[] => [...err.matchAll(/enrolled as (j\d+) \(slot (\d+)\)/g)].map((m) => m[1]);
const slotsIn = (err: string): number[] => [...err.matchAll(/gated: slot (\d+)/g)].map((m) => Number(m[1]));

/** Answers of `count` raw enrolment requests made by `user`'s one process (`parallel` connections at once). */
function rawRequests(user: LabUser, count: number, parallel: number, message: string): Promise<{ granted: string[]; refused: Record<string, number> }> {
  const script = `
import socket, sys, json, array, threading
path, count, parallel, message = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].encode() + b"\\n"
granted, refused, lock, left = [], {}, threading.Lock(), [count]
def one():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path); s.sendall(message)
        data, anc, flags, addr = s.recvmsg(4096, socket.CMSG_SPACE(16 * 4))
        for level, kind, fds in anc:
            a = array.array('i'); a.frombytes(fds[:len(fds) - len(fds) % 4])
            for fd in a: __import__('os').close(fd)
        m = json.loads(data.split(b"\\n")[0] or b"{}")
        key = m.get("job") if m.get("ok") else (m.get("code") or (m.get("error") or {}).get("code") or "closed")
    except Exception as e:
        key = "error:" + type(e).__name__
    finally:
        s.close()
    with lock:
        (granted.append(key) if key and key.startswith("j") and key[1:].isdigit() else refused.__setitem__(key, refused.get(key, 0) + 1))
def worker():
    while True:
        with lock:
            if left[0] == 0: return
            left[0] -= 1
        one()
threads = [threading.Thread(target=worker) for _ in range(parallel)]
[t.start() for t in threads]; [t.join() for t in threads]
print(json.dumps({"granted": granted, "refused": refused}))
`;
  return new Promise((resolve, reject) => {
    const child = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', '--', '/usr/bin/python3', '-c', script, box.socketPath, String(count), String(parallel), message], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`raw client failed (${code}): ${err}`))));
  });
}

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

test('mallory never joins alice\'s enrolled job: not by naming her pid, sharing her process group, or an environment naming her slot, park file and job', { skip: SKIP }, async () => {
  // alice's notebook-like process holds 256 MiB under a 300 MiB quota; with mallory's process in her job it would be refused
  const a = run(as(alice, `${probe()} alloc:${256 * MiB} sleep:120000000`), sessionEnv());
  const aliceJob = await until('alice enrolled', () => enrolledAs(a.err)[0]);
  const aliceSlot = slotsIn(a.err)[0];
  const view = (await jobs()).find((j) => j.id === aliceJob)!;
  assert.equal(view.owner, alice.name);
  assert.ok(view.enrolled, 'marked enrolled');
  await box.ok(null, 'jobs.setQuota', { job: aliceJob, bytes: 300 * MiB });
  const gen = (await box.ok(null, 'jobs.list', {})).length; // any number: the generation is what mallory would guess
  let attempts = 0;
  let joined = 0;
  let ownJobs = 0; // attempts that enrolled, into a job of mallory's own: the mechanism ran and chose hers
  const judge = async (r: Run): Promise<void> => {
    attempts++;
    await until(`attempt ${attempts} decided`, () => /"op":"alloc"/.test(r.out));
    const alloc = JSON.parse(r.out.split('\n').find((l) => l.includes('"op":"alloc"'))!) as { code: number };
    if (enrolledAs(r.err).includes(aliceJob) || slotsIn(r.err).includes(aliceSlot) || alloc.code !== 0) joined++;
    const listed = await box.ok(null, 'jobs.list', { includeFinished: true });
    if (enrolledAs(r.err).some((id) => listed.find((j) => j.id === id)?.owner === mallory.name)) ownJobs++; // (alice's own probe may share the session's stderr)
    kill(r);
    await r.exited;
  };
  // 1. the message names alice's pid and job: the engine reads only the socket's credentials
  const claim = await rawRequests(mallory, 20, 4, JSON.stringify({ kind: 'enrol', pid: a.child.pid, job: aliceJob, uid: alice.uid }));
  attempts += 20;
  joined += claim.granted.filter((j) => j === aliceJob).length;
  const all = await box.ok(null, 'jobs.list', { includeFinished: true });
  for (const j of new Set(claim.granted)) assert.equal(all.find((v) => v.id === j)?.owner, mallory.name, `${j} is mallory's own`);
  // 2. in alice's process group and session (root started both in one session)
  const shared = run(`${as(alice, `${probe()} alloc:${MiB} sleep:120000000`)} >/dev/null 2>&1 & sleep 1; ${as(mallory, `${probe()} alloc:${64 * MiB} sleep:120000000`)}`, sessionEnv());
  await judge(shared);
  // 3. an environment naming alice's gate slot, generation, park file and job id
  for (const extra of <Array<Record<string, string>>>[
    { GPUSHARE_GATE: join(box.dir, 'run', 'gate'), GPUSHARE_GATE_SLOT: String(aliceSlot), GPUSHARE_GATE_GEN: String(gen) },
    { GPUSHARE_GATE: join(box.dir, 'run', 'gate'), GPUSHARE_GATE_SLOT: String(aliceSlot) },
    { GPUSHARE_PARK_FILE: join(box.dir, 'run', 'park', aliceJob) },
    { GPUSHARE_JOB_ID: aliceJob, GPUSHARE_GATE: join(box.dir, 'run', 'gate'), GPUSHARE_GATE_SLOT: String(aliceSlot) },
  ]) {
    await judge(run(as(mallory, `${probe()} alloc:${64 * MiB} sleep:120000000`), sessionEnv(extra)));
  }
  assert.equal(attempts, 25);
  assert.equal(ownJobs, 4, 'the process-group attempt and the three environments without a job id enrolled as mallory\'s own jobs');
  assert.equal(joined, 0, `attempts that joined alice's job: ${joined} of ${attempts}`);
  const after = (await jobs()).find((j) => j.id === aliceJob)!;
  assert.equal(after.owner, alice.name);
  assert.notEqual(after.state, 'finished');
});

test('10,000 enrolment requests from one user are answered or refused, and the daemon holds nothing more for them', { skip: SKIP }, async () => {
  const daemonPid = box.daemon!.pid!;
  await rawRequests(mallory, 200, 16, '{"kind":"enrol"}'); // warm: the first job, the code paths
  const before = rssOf(daemonPid);
  const { granted, refused } = await rawRequests(mallory, 10_000, 32, '{"kind":"enrol"}');
  const answered = granted.length + Object.values(refused).reduce((a, b) => a + b, 0);
  assert.equal(answered, 10_000, `every request had an outcome: ${JSON.stringify(refused)}`);
  assert.ok(granted.length > 0, 'requests were answered');
  assert.equal(new Set(granted).size, 1, `one process asking again and again is one job: ${[...new Set(granted)].join(' ')}`);
  const mine = (await jobs()).filter((j) => j.enrolled && j.owner === mallory.name);
  assert.ok(mine.length <= MAX_ENROLLED_JOBS_PER_USER, `at most ${MAX_ENROLLED_JOBS_PER_USER} enrolled jobs: ${mine.length}`);
  const whoami = await box.ok(mallory, 'session.whoami', {});
  assert.equal(whoami.connections?.open, 1, 'only this connection is still held');
  const grown = rssOf(daemonPid) - before;
  assert.ok(grown < 64 * MiB, `the daemon grew by ${(grown / MiB).toFixed(1)} MiB over 10,000 requests`);
});

test('a process that forks children that enrol, in a loop, is one job', { skip: SKIP }, async () => {
  const script = `
import os, socket, sys, json, time
path = sys.argv[1]
reads = []
for i in range(40):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); s.sendall(b'{"kind":"enrol"}\\n')
        data = s.recvmsg(4096, 256)[0]
        os.write(w, data.split(b"\\n")[0] + b"\\n"); os.close(w)
        time.sleep(60); os._exit(0)
    os.close(w); reads.append(r)
jobs = [json.loads(os.read(r, 4096).split(b"\\n")[0]).get("job") for r in reads]
print(json.dumps(jobs)); sys.stdout.flush()
os.killpg(0, 9)
`;
  const out = await new Promise<string>((resolve) => {
    const child = spawn('setsid', ['setpriv', '--reuid', String(mallory.uid), '--regid', String(mallory.gid), '--init-groups', '--', '/usr/bin/python3', '-c', script, box.socketPath], { cwd: '/', stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.once('close', () => resolve(text));
  });
  const answered = JSON.parse(out.trim().split('\n')[0]) as Array<string | null>;
  assert.equal(answered.length, 40);
  assert.equal(answered.filter((j) => j === null).length, 0, `every child enrolled: ${out}`);
  assert.equal(new Set(answered).size, 1, `one job for all the forks: ${[...new Set(answered)].join(' ')}`);
});

test('the lab policy\'s memory limit is an enrolled job\'s hard quota: what its owner has left beside their running jobs', { skip: SKIP }, async () => {
  const first = run(as(carol, `${probe()} alloc:${200 * MiB} alloc:${100 * MiB} sleep:120000000`), sessionEnv());
  await until('both allocations answered', () => first.out.split('\n').filter((l) => l.includes('"op":"alloc"')).length === 2);
  const codes = (r: Run) => r.out.split('\n').filter((l) => l.includes('"op":"alloc"')).map((l) => (JSON.parse(l) as { code: number }).code);
  assert.deepEqual(codes(first), [0, 2], 'within 256M: 200M yes, 100M more no');
  const job = (await jobs()).find((j) => j.id === enrolledAs(first.err)[0])!;
  assert.equal(job.memoryQuotaBytes, 256 * MiB);
  assert.equal(job.memoryQuotaFromPolicy, true);
  const second = run(as(carol, `${probe()} alloc:${MiB} sleep:120000000`), sessionEnv());
  await until('its allocation answered', () => second.out.includes('"op":"alloc"'));
  assert.deepEqual(codes(second), [2], 'a second job of hers has nothing left');
  kill(first);
  kill(second);
});
