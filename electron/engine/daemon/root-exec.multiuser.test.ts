// The box daemon runs as root, and a hostile user (mallory, created by the test) tries to make it
// run her code as root, read another user's files, or hand her a file she does not own. Nothing she
// controls — her environment, her working directory, her log folder — reaches anything still root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { copyApp } from '../../cli/app-copy.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { untilWith } from '../../testing/until.js';
import { isRoot, LabBox, type LabUser } from './testing/lab-box.js';

const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';

/** Every variable glibc's secure mode removes (elf/dl-support, sysdeps/generic/unsecvars.h, x86_64's extra, the malloc tunables' old names). */
export const GLIBC_UNSECURE = [
  'GCONV_PATH', 'GETCONF_DIR', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LD_AUDIT', 'LD_DEBUG', 'LD_DEBUG_OUTPUT', 'LD_DYNAMIC_WEAK', 'LD_HWCAP_MASK',
  'LD_LIBRARY_PATH', 'LD_ORIGIN_PATH', 'LD_PRELOAD', 'LD_PROFILE', 'LD_SHOW_AUXV', 'LD_USE_LOAD_BIAS', 'LOCALDOMAIN', 'LOCPATH', 'MALLOC_TRACE',
  'NIS_PATH', 'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS', 'TMPDIR', 'TZDIR', 'LD_PREFER_MAP_32BIT_EXEC',
  'MALLOC_CHECK_', 'MALLOC_TOP_PAD_', 'MALLOC_PERTURB_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_MAX_', 'MALLOC_ARENA_MAX', 'MALLOC_ARENA_TEST',
] as const;
/** What the daemon's own helpers read (node, the guardian, fakegpu, MPS): none may come from a user. */
const OUR_HELPERS_READ = ['PATH', 'NODE_OPTIONS', 'NODE_PATH', 'ELECTRON_RUN_AS_NODE', 'GPUSHARE_FAKEGPU_STATE', 'GPUSHARE_CUDA_LIB', 'GPUSHARE_NATIVE_DIR', 'CUDA_VISIBLE_DEVICES', 'CUDA_MPS_PIPE_DIRECTORY', 'CUDA_MPS_LOG_DIRECTORY'] as const;
/** The engine sets these for every job itself: a job never sees the caller's. */
const ENGINE_SETS = new Set(['LD_PRELOAD', 'GPUSHARE_FAKEGPU_STATE', 'GPUSHARE_CUDA_LIB', 'GPUSHARE_NATIVE_DIR', 'CUDA_VISIBLE_DEVICES', 'CUDA_MPS_PIPE_DIRECTORY', 'CUDA_MPS_LOG_DIRECTORY']);

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;
/** mallory's own folder, where she plants what she likes. */
let plant: string;
let records: string;

before(async () => {
  if (SKIP) return;
  box = new LabBox(String(process.pid % 100000));
  alice = box.user('alice');
  mallory = box.user('mallory');
  plant = join(box.dir, 'mallory');
  records = join(plant, 'records');
  for (const sub of ['', 'lib', 'bin', 'ld-debug']) mkdirSync(join(plant, sub), { mode: 0o755 });
  copyFileSync(join(box.nativeCopy, 'spawn', 'build', 'env_recorder.so'), join(plant, 'lib', 'evil.so'));
  // a program root might look up on her PATH: it records who ran it, then does the real thing
  for (const name of ['setpriv', 'nvidia-smi', 'nvidia-cuda-mps-control', 'sqlite3', 'fakegpu', 'node', 'env', 'sh']) {
    writeFileSync(join(plant, 'bin', name), `#!/bin/sh\necho "$(/usr/bin/id -ru) $(/usr/bin/id -u) $$ shim:${name}" >> "${records}"\nexec /usr/bin/${name} "$@"\n`, { mode: 0o755 });
  }
  writeFileSync(join(plant, 'evil.js'), `require('fs').appendFileSync(${JSON.stringify(records)}, process.getuid() + ' ' + process.geteuid() + ' ' + process.pid + ' node:NODE_OPTIONS\\n');\n`);
  writeFileSync(records, '', { mode: 0o666 });
  chmodSync(records, 0o666);
  for (const path of ['', 'lib', 'bin', 'ld-debug', 'lib/evil.so', 'evil.js', 'records', ...readdirSync(join(plant, 'bin')).map((b) => `bin/${b}`)]) chownSync(join(plant, path), mallory.uid, mallory.gid);
  await box.start({ rateHz: 5 });
});
after(async () => {
  if (!SKIP) await box.dispose();
});

/** mallory's environment: every variable above, each pointing at something of hers. */
function hostileEnvironment(): Record<string, string> {
  const lib = join(plant, 'lib');
  const evil = join(lib, 'evil.so');
  const forged = join(plant, 'forged');
  const values: Record<string, string> = {
    GCONV_PATH: lib, GETCONF_DIR: lib, GLIBC_TUNABLES: 'glibc.malloc.perturb=0', HOSTALIASES: join(plant, 'hosts'), LD_AUDIT: evil, LD_DEBUG: 'statistics',
    LD_DEBUG_OUTPUT: join(plant, 'ld-debug', 'out'), LD_DYNAMIC_WEAK: '1', LD_HWCAP_MASK: '0', LD_LIBRARY_PATH: lib, LD_ORIGIN_PATH: lib, LD_PRELOAD: evil,
    LD_PROFILE: 'libgpst-nothing.so.0', LD_SHOW_AUXV: '1', LD_USE_LOAD_BIAS: '0', LOCALDOMAIN: 'gpst.invalid', LOCPATH: lib, MALLOC_TRACE: join(plant, 'mtrace'),
    NIS_PATH: lib, NLSPATH: `${lib}/%N`, RESOLV_HOST_CONF: join(plant, 'host.conf'), RES_OPTIONS: 'ndots:1', TMPDIR: plant, TZDIR: lib, LD_PREFER_MAP_32BIT_EXEC: '0',
    MALLOC_CHECK_: '0', MALLOC_TOP_PAD_: '131072', MALLOC_PERTURB_: '0', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_MAX_: '65536',
    MALLOC_ARENA_MAX: '8', MALLOC_ARENA_TEST: '8',
    PATH: `${join(plant, 'bin')}:/usr/bin:/bin`, NODE_OPTIONS: `--require=${join(plant, 'evil.js')}`, NODE_PATH: lib, ELECTRON_RUN_AS_NODE: '1',
    GPUSHARE_FAKEGPU_STATE: forged, GPUSHARE_CUDA_LIB: forged, GPUSHARE_NATIVE_DIR: plant, CUDA_VISIBLE_DEVICES: '7', CUDA_MPS_PIPE_DIRECTORY: plant, CUDA_MPS_LOG_DIRECTORY: plant,
    GPST_ENV_RECORD: records,
  };
  for (const name of [...GLIBC_UNSECURE, ...OUR_HELPERS_READ]) assert.ok(name in values, `${name} is planted`);
  return values;
}

interface Record_ {
  ruid: number;
  euid: number;
  pid: number;
  what: string;
  names: string[];
}

/** Every process that loaded her library, ran her PATH shims or her NODE_OPTIONS since the file was emptied. */
function recorded(): Record_[] {
  return readFileSync(records, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [ruid, euid, pid, what, ...names] = line.split(' ');
    return { ruid: Number(ruid), euid: Number(euid), pid: Number(pid), what, names };
  });
}

/** What root saw: records of uid 0, and LD_DEBUG_OUTPUT files root wrote. */
function seenByRoot(): string[] {
  const records_ = recorded().filter((r) => r.ruid === 0 || r.euid === 0).map((r) => `pid ${r.pid} (${r.what}) ran as uid ${r.ruid}/${r.euid} with ${r.names.filter((n) => hostileNames.has(n)).join(' ')}`);
  const debugDir = join(plant, 'ld-debug');
  const debug = readdirSync(debugDir).filter((f) => statSync(join(debugDir, f)).uid === 0).map((f) => `LD_DEBUG_OUTPUT file ${f} written by root`);
  return [...records_, ...debug];
}
const hostileNames = new Set<string>([...GLIBC_UNSECURE, ...OUR_HELPERS_READ]);

function forget(): void {
  writeFileSync(records, '');
  for (const f of readdirSync(join(plant, 'ld-debug'))) rmSync(join(plant, 'ld-debug', f), { force: true });
}

const until = untilWith({ intervalMs: 100, timeoutMs: 20_000, detail: () => box.output });

const job = async (id: string): Promise<JobView> => (await box.ok(null, 'jobs.list', { includeFinished: true })).find((j) => j.id === id)!;
const ended = (id: string) => until(`${id} to end`, async () => ((await job(id)).state === 'finished' || (await job(id)).state === 'failed' ? job(id) : undefined));
const entries = (env: Record<string, string>) => Object.entries(env).map(([k, v]) => `${k}=${v}`);

/** The job ran as mallory with her variables (all but those the engine sets), and no root process saw any. */
function assertOnlyMalloryRan(done: JobView): void {
  assert.equal(done.state, 'finished', `${done.id}: ${done.history.at(-1)?.reason}`);
  assert.deepEqual(seenByRoot(), [], 'no process running as root saw what mallory set');
  const theJob = recorded().find((r) => r.pid === done.pid && r.what === realpathSync('/bin/true'));
  assert.ok(theJob, `the job itself (pid ${done.pid}) loaded her LD_AUDIT library: her environment reaches her job. Records:\n${readFileSync(records, 'utf8')}`);
  assert.deepEqual([theJob.ruid, theJob.euid], [mallory.uid, mallory.uid]);
  const missing = [...hostileNames].filter((n) => !ENGINE_SETS.has(n) && !theJob.names.includes(n));
  assert.deepEqual(missing, [], 'every variable of hers but those the engine sets reached her job');
}

test('a job submitted on the socket with every variable glibc drops for setuid programs (and those our helpers read) runs as mallory with them; no root process sees one', { skip: SKIP }, async () => {
  forget();
  const submitted = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/true'], cwd: plant, gpu: 0, env: entries(hostileEnvironment()) });
  assertOnlyMalloryRan(await ended(submitted.id));
});

test('`gpushare run` from a shell with that environment: no root process sees it', { skip: SKIP }, async () => {
  // her gpushare: this checkout's where she can read it, else a copy of the compiled CLI she can (a checkout under a 0700 home)
  const readable = (() => {
    try {
      box.as(mallory, '/usr/bin/test', ['-r', CLI_PATH, '-a', '-x', process.execPath]);
      return true;
    } catch {
      return false;
    }
  })();
  let cli = { path: CLI_PATH, env: CLI_ENV as Record<string, string> };
  if (!readable) {
    const copy = join(box.dir, 'cli-copy');
    copyApp(copy);
    cli = { path: join(copy, 'electron', 'cli', 'gpushare.js'), env: {} };
  }
  forget();
  const env = { ...hostileEnvironment(), ...cli.env, GPUSHARE_DAEMON_SOCKET: box.socketPath, HOME: plant };
  // the test's own setpriv runs as root: it gets a clean environment, and env(1) applies hers once she is mallory
  const asMallory = ['--reuid', String(mallory.uid), '--regid', String(mallory.gid), '--init-groups', '--', '/usr/bin/env', '-i', ...entries(env)];
  const out = await new Promise<string>((resolve, reject) => {
    execFile('/usr/bin/setpriv', [...asMallory, process.execPath, cli.path, 'run', '--json', '--gpu', '0', '--', '/bin/true'], { env: { PATH: '/usr/bin:/bin' }, cwd: plant, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`gpushare run as mallory failed: ${stderr}`)) : resolve(stdout),
    );
  });
  const submitted = JSON.parse(out.slice(out.indexOf('{'))) as JobView;
  assertOnlyMalloryRan(await ended(submitted.id));
});

test('an MPS-mode job with that environment: its MPS daemon and the job start, and no root process sees it', { skip: SKIP }, async () => {
  forget();
  const submitted = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/true'], cwd: plant, gpu: 0, mode: 'mps', mpsSharePercent: 50, env: entries(hostileEnvironment()) });
  assertOnlyMalloryRan(await ended(submitted.id));
});

test('MIG-mode jobs with that environment, alone in a slice and as an MPS client of the slice: no root process sees it', { skip: SKIP }, async () => {
  const applied = await box.ok(null, 'mig.apply', { gpu: 1, layout: ['3g.40gb@4', '3g.40gb@0'] });
  assert.ok(applied.applied, applied.blockers.join('; '));
  const slices = (await box.ok(null, 'mig.layout', { gpu: 1 })).slices.map((s) => s.uuids[0]);
  forget();
  const alone = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/true'], cwd: plant, gpu: 'auto', mode: 'mig', migSlice: slices[0], env: entries(hostileEnvironment()) });
  assertOnlyMalloryRan(await ended(alone.id));
  forget();
  const client = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/true'], cwd: plant, gpu: 'auto', mode: 'mig', migSlice: slices[1], mpsSharePercent: 50, env: entries(hostileEnvironment()) });
  assertOnlyMalloryRan(await ended(client.id));
});

test("a working directory mallory swaps for a symlink to alice's private folder while her job is queued: the job fails saying she cannot enter it, and reads nothing of alice's", { skip: SKIP }, async () => {
  // her project is open to anyone already inside; her 0700 home is what keeps it from others
  const aliceHome = join(box.dir, 'alice');
  const project = join(aliceHome, 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'secret.txt'), 'alice only\n');
  chmodSync(aliceHome, 0o700);
  chmodSync(project, 0o755);
  chmodSync(join(project, 'secret.txt'), 0o644);
  for (const path of [aliceHome, project, join(project, 'secret.txt')]) chownSync(path, alice.uid, alice.gid);
  mkdirSync(join(plant, 'real'));
  chownSync(join(plant, 'real'), mallory.uid, mallory.gid);
  const work = join(plant, 'work');
  box.as(mallory, '/bin/ln', ['-s', join(plant, 'real'), work]);
  // her first job holds GPU 0 alone, so the second waits in the queue
  const holder = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/sleep', '600'], cwd: plant, gpu: 0, mode: 'exclusive', env: ['PATH=/usr/bin:/bin'] });
  await until(`${holder.id} running`, async () => (await job(holder.id)).state === 'running');
  const spy = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/sh', '-c', 'pwd; ls; cat secret.txt'], cwd: work, gpu: 0, env: ['PATH=/usr/bin:/bin'] });
  await box.ok(null, 'jobs.list', {}); // a tick later it still waits
  assert.equal((await job(spy.id)).state, 'queued');
  box.as(mallory, '/bin/ln', ['-sfn', project, work]);
  await box.ok(mallory, 'jobs.terminate', { job: holder.id });
  const done = await ended(spy.id);
  const log = existsSync(done.logPath!) ? readFileSync(done.logPath!, 'utf8') : '';
  assert.doesNotMatch(log, /alice only|secret\.txt|\/project\n/, `alice's file is not in mallory's log:\n${log}`);
  assert.equal(done.state, 'failed', log);
  assert.equal(
    done.history.at(-1)?.reason,
    `could not start: ${mallory.name} (uid ${mallory.uid}) cannot enter the working directory ${work} at launch: Permission denied. Nothing was started.`,
    log,
  );
});

test('a program mallory removes while her job is queued: the job fails saying she cannot run it, in one sentence', { skip: SKIP }, async () => {
  const script = join(plant, 'train.sh');
  writeFileSync(script, '#!/bin/sh\necho trained\n', { mode: 0o755 });
  chownSync(script, mallory.uid, mallory.gid);
  const holder = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/sleep', '600'], cwd: plant, gpu: 0, mode: 'exclusive', env: ['PATH=/usr/bin:/bin'] });
  await until(`${holder.id} running`, async () => (await job(holder.id)).state === 'running');
  const queued = await box.ok(mallory, 'jobs.submit', { argv: [script], cwd: plant, gpu: 0, env: ['PATH=/usr/bin:/bin'] });
  box.as(mallory, '/bin/rm', [script]);
  await box.ok(mallory, 'jobs.terminate', { job: holder.id });
  const done = await ended(queued.id);
  assert.equal(done.history.at(-1)?.reason, `could not start: ${mallory.name} (uid ${mallory.uid}) cannot run ${script} at launch: No such file or directory. Nothing was started.`);
});

test("a root-only file mallory moves into her log folder under her next job's log name stays root's and unread; her job's log is a new file, and her log folder is not hers to write", { skip: SKIP }, async () => {
  const probe = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/true'], cwd: plant, gpu: 0, env: ['PATH=/usr/bin:/bin'] });
  const first = await ended(probe.id);
  const folder = join(first.logPath!, '..');
  const next = `j${Number(probe.id.slice(1)) + 1}`;
  // a root-only file somewhere she can rename it from (her own folder: root left it there)
  const secret = join(plant, 'root-secret');
  writeFileSync(secret, 'root only\n', { mode: 0o600 });
  const planted = (() => {
    try {
      box.as(mallory, '/bin/mv', [secret, join(folder, `${next}.log`)]);
      return true;
    } catch (error) {
      return (error as { stderr?: string }).stderr ?? String(error);
    }
  })();
  const submitted = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/echo', 'my own output'], cwd: plant, gpu: 0, env: ['PATH=/usr/bin:/bin'] });
  assert.equal(submitted.id, next);
  const done = await ended(submitted.id);
  const where = planted === true ? join(folder, `${next}.log`) : secret;
  const stats = statSync(where);
  const canRead = (() => {
    try {
      return box.as(mallory, '/bin/cat', [where]);
    } catch {
      return null;
    }
  })();
  assert.equal(canRead?.includes('root only') ?? false, false, 'mallory cannot read the root-only file through her log');
  assert.deepEqual([stats.uid, stats.mode & 0o777], [0, 0o600], 'the planted file is still root\'s, 0600');
  assert.notEqual(planted, true, 'her log folder is not hers to write: the file could not be moved in');
  assert.equal(done.state, 'finished', done.history.at(-1)?.reason);
  const log = statSync(done.logPath!);
  assert.deepEqual([log.uid, log.mode & 0o777], [mallory.uid, 0o600]);
  assert.equal(box.as(mallory, '/bin/cat', [done.logPath!]), 'my own output\n');
  const dir = statSync(folder);
  assert.equal(dir.uid, 0, 'her log folder is the daemon\'s');
  assert.equal(dir.mode & 0o022, 0, 'only the daemon writes in it');
  rmSync(where, { force: true });
});

test('an argument, environment entry or working directory with a NUL byte is refused at submit with a clear error, and nothing is queued', { skip: SKIP }, async () => {
  const before = (await box.ok(null, 'jobs.list', { includeFinished: true })).length;
  const refusals = await box.calls(mallory, [
    { method: 'jobs.submit', params: { argv: ['/bin/echo', 'a\0b'], cwd: plant, gpu: 0, env: ['PATH=/usr/bin:/bin'] } },
    { method: 'jobs.submit', params: { argv: ['/bin/true'], cwd: plant, gpu: 0, env: ['PATH=/usr/bin:/bin', 'LD_AUDIT=\0x'] } },
    { method: 'jobs.submit', params: { argv: ['/bin/true'], cwd: `${plant}\0/..`, gpu: 0, env: ['PATH=/usr/bin:/bin'] } },
  ]);
  for (const outcome of refusals) {
    assert.deepEqual(outcome.ok ? 'ok' : [outcome.error.code, outcome.error.message], ['invalid-request', 'An argument, an environment entry or the working directory contains a NUL byte, which no program can be given. Nothing was started.']);
  }
  assert.equal((await box.ok(null, 'jobs.list', { includeFinished: true })).length, before);
});
