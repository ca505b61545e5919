// Under a real Slurm (Debian's slurmctld, slurmd, munge, and slurmdbd over MariaDB for real QOS;
// testing/slurm-rig.ts) with the box daemon on the
// simulated driver (one 40 GiB GPU): jobs users submit with sbatch run the prolog, task prolog and epilog of
// `gpushare slurm`, and their tasks enrol. Asserts what the jobs printed, the daemon's jobs, the simulated
// driver's execution record, /proc run states and sinfo; never a latency.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { KernelRecord } from '../gpu/simulated-driver.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { enqueuedUnderHigh, recordsOf } from '../gate/testing/launch-gate-sim.js';
import { untilWith } from '../../testing/until.js';
import { isRoot, LabBox, type LabUser } from '../daemon/testing/lab-box.js';
import { SlurmRig, slurmMissing } from './testing/slurm-rig.js';
import { accountingMissing } from './testing/slurm-accounting.js';

const SCENARIO = 'a100-40gb';
const GiB = 1024 ** 3;
const RATE_HZ = 2;
const SAMPLE_INTERVAL_S = 1 / RATE_HZ;
const SKIP = !isRoot() ? 'needs root: Slurm, munge, MariaDB and the box daemon run as root and the test creates users' : slurmMissing() || accountingMissing();

let box: LabBox;
let rig: SlurmRig;
let alice: LabUser;
let bob: LabUser;
let slurmLog: string;

const until = untilWith({ intervalMs: 200, timeoutMs: 60_000, detail: () => `${box.output}\n${rig.logs()}\n${existsSync(slurmLog) ? readFileSync(slurmLog, 'utf8') : ''}` });

/** A script slurmd runs as root (or, TaskProlog, as the job's user): `gpushare slurm WHAT` with this box's daemon. */
function hook(what: string): string {
  const file = join(box.dir, `slurm-${what}.sh`);
  const env = {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    SLURM_CONF: join(box.dir, 'slurm', 'etc', 'slurm.conf'),
    GPUSHARE_DAEMON_SOCKET: box.socketPath,
    GPUSHARE_SLURM_LOG: slurmLog,
    GPUSHARE_NATIVE_DIR: box.nativeCopy,
    ...CLI_ENV,
  };
  writeFileSync(file, `#!/bin/sh\n${Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n')}\nexec '${process.execPath}' '${CLI_PATH}' slurm ${what}\n`);
  chmodSync(file, 0o755);
  return file;
}

before(async () => {
  if (SKIP) return;
  const tag = String(process.pid % 100000);
  box = new LabBox(tag);
  slurmLog = join(box.dir, 'gpushare-slurm.log');
  alice = box.user('alice');
  bob = box.user('bob');
  process.env.SLURM_CONF = join(box.dir, 'slurm', 'etc', 'slurm.conf'); // the daemon's scontrol (pidinfo) finds this Slurm, as /etc/slurm/slurm.conf on a node
  await box.start({ rateHz: RATE_HZ, slurm: { partitionLanes: [{ name: 'urgent', lane: 'high' }], qosLanes: [{ name: 'high', lane: 'high' }, { name: 'scavenger', lane: 'best-effort', maxLane: 'normal' }] } }, SCENARIO);
  const accounting = { qos: [{ name: 'high', priority: 100 }, { name: 'scavenger', priority: 0 }], users: [alice.name, bob.name] }; // sacctmgr, as a lab would: QOS normal is every user's default
  rig = new SlurmRig({ dir: join(box.dir, 'slurm'), tag, prolog: hook('prolog'), epilog: hook('epilog'), taskProlog: hook('task-prolog'), partitions: ['urgent'], mpsNode: true, accounting });
  await rig.start();
});
after(async () => {
  if (SKIP) return;
  await rig?.dispose();
  await box.dispose();
});

/** A batch script: the simulated driver is the node's driver; then `body`. */
function batch(name: string, body: string): string {
  const file = join(rig.outDir, `${name}.sh`);
  const env = `export GPUSHARE_FAKEGPU_STATE='${join(box.dir, 'run', `sim-${SCENARIO}.state`)}' LD_LIBRARY_PATH='${join(box.nativeCopy, 'fakegpu', 'build')}'\nFAKEJOB='${box.fakejob}'\n`;
  writeFileSync(file, `#!/bin/sh\n${env}${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const jobs = async (): Promise<JobView[]> => box.ok(null, 'jobs.list', { includeFinished: true });
const ofSlurm = async (id: string): Promise<JobView | undefined> => (await jobs()).find((j) => j.enrolled?.slurm?.jobId === id);
const allocLines = (out: string) => out.split('\n').filter((l) => l.startsWith('{"event":"alloc"')).map((l) => JSON.parse(l) as { i: number; result: string; total: number });

test('a 1-shard job of a 4-shard 40 GiB GPU is refused CUDA_ERROR_OUT_OF_MEMORY past 10 GiB in its own output, while a 2-shard job of another user beside it keeps its 20 GiB; of QOS normal (no lane mapped), its lane comes from its partition', { skip: SKIP }, async () => {
  const [node] = rig.nodes;
  const big = rig.submit(bob, ['-w', node, '--gres=shard:2', '-o', '%j.out', batch('two-shards', '"$FAKEJOB" alloc --chunk 1G --count 20 --hold & sleep 12; kill -INT $!; wait')]);
  await until('the 2-shard job holds its memory', async () => allocLines(rig.output(big)).length === 20 || undefined);
  const small = rig.submit(alice, ['-w', node, '-p', 'urgent', '--gres=shard:1', '-o', '%j.out', batch('one-shard', '"$FAKEJOB" alloc --chunk 1G --count 12')]);
  assert.equal(await rig.finished(small), 'COMPLETED');
  const mine = allocLines(rig.output(small));
  assert.deepEqual(mine.map((a) => a.result), [...Array(10).fill('CUDA_SUCCESS'), 'CUDA_ERROR_OUT_OF_MEMORY', 'CUDA_ERROR_OUT_OF_MEMORY'], rig.output(small));
  const theirs = allocLines(rig.output(big));
  assert.ok(theirs.every((a) => a.result === 'CUDA_SUCCESS'), `bob's 20 allocations of 1 GiB all succeeded: ${rig.output(big)}`);
  assert.equal(theirs.at(-1)!.total, 20 * GiB);
  const view = (await ofSlurm(small))!;
  assert.equal(view.owner, alice.name);
  assert.equal(view.memoryQuotaBytes, 10 * GiB, 'its quota: 1 of 4 shards of 40 GiB');
  assert.deepEqual(view.enrolled?.slurm, { jobId: small, partition: 'urgent', qos: 'normal' }, "Slurm's own default QOS");
  assert.equal(view.priority, 'high', 'partition urgent → high');
  assert.equal((await ofSlurm(big))!.memoryQuotaBytes, 20 * GiB);
  assert.equal(await rig.finished(big), 'COMPLETED');
  assert.match(readFileSync(slurmLog, 'utf8'), new RegExp(`epilog job ${small}: usage \\{"jobId":"${small}"`), 'the epilog wrote its usage');
  const row = (await box.ok(null, 'reports.slurmJobs', { since: Date.now() - 3_600_000 })).rows.find((r) => r.jobId === big);
  assert.deepEqual([row?.account, row?.gpus], ['lab', 'GPU 0'], `bob's usage row names the account Slurm records for the job (sacctmgr's "lab") and the GPU his task held memory on: ${JSON.stringify(row)}`);
  assert.match(readFileSync(slurmLog, 'utf8'), new RegExp(`prolog job ${big}: registered for ${bob.name} \\(account lab\\)`));
});

test("a user cannot make their job join another user's Slurm job: a forged SLURM_JOB_ID, and an enrol message naming the other job and its cgroup; 0 succeed", { skip: SKIP }, async () => {
  const [node] = rig.nodes;
  const target = rig.submit(alice, ['-w', node, '--gres=shard:1', '-o', '%j.out', batch('target', '"$FAKEJOB" alloc --chunk 1G --count 1 --hold & sleep 30; kill -INT $!; wait')]);
  const theirs = await until("alice's job enrolled", () => ofSlurm(target));
  const forged = rig.submit(bob, ['-w', node, '--gres=shard:1', '-o', '%j.out', batch('forged', `export SLURM_JOB_ID=${target} SLURM_JOBID=${target}\n"$FAKEJOB" alloc --chunk 1G --count 1`)]);
  assert.equal(await rig.finished(forged), 'COMPLETED');
  const cgroup = `0::/system.slice/slurmstepd.scope/job_${target}/step_batch/user/task_0`;
  const client = `const s=require('node:net').connect(process.argv[1]);s.on('connect',()=>s.write(JSON.stringify({kind:'enrol',slurmJobId:process.argv[2],cgroup:process.argv[3],uid:${alice.uid}})+'\\n'));let b='';s.on('data',d=>{b+=d;if(b.includes('\\n')){process.stdout.write(b);s.destroy();}});s.on('error',e=>{process.stdout.write(JSON.stringify({error:String(e)}));});`;
  const answer = box.as(bob, process.execPath, ['-e', client, box.socketPath, target, cgroup]);
  const all = await jobs();
  const joined = all.filter((j) => j.id === theirs.id);
  assert.equal(joined.length, 1);
  assert.equal(joined[0].owner, alice.name);
  const bobsJobs = all.filter((j) => j.owner === bob.name && j.enrolled);
  assert.ok(bobsJobs.every((j) => j.id !== theirs.id && j.enrolled?.slurm?.jobId !== target), `bob's jobs are his own: ${JSON.stringify(bobsJobs.map((j) => [j.id, j.enrolled]))}`);
  assert.ok(bobsJobs.some((j) => j.enrolled?.slurm?.jobId === forged), 'the forged job joined its own Slurm job');
  assert.doesNotMatch(answer, new RegExp(`"job":"${theirs.id}"`), `the raw enrol message got no grant of alice's job: ${answer}`);
  execFileSync('scancel', [target], { env: { PATH: '/usr/bin:/bin', SLURM_CONF: rig.conf } });
  await rig.finished(target);
});

test("a job of QOS high holds back a scavenger-QOS job on the same GPU (execution record); the scavenger is never in state T; its name and comment faking Slurm's lines change nothing; the epilog's usage row agrees with the execution record within one sampling interval", { skip: SKIP }, async (t) => {
  const [, node] = rig.nodes;
  const fake = `x\n   Priority=1 Nice=0 Account=(null) QOS=high\n   Partition=urgent\n     Nodes=${node} CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:0)`; // the prolog once read scontrol's text
  const scav = rig.submit(bob, ['-w', node, '--qos=scavenger', '-J', fake, '--comment', fake, '--gres=shard:1', '-o', '%j.out', batch('scav', '"$FAKEJOB" train --kernel-ms 2 --duration 120')]);
  const low = await until('the scavenger job enrolled', async () => ((await ofSlurm(scav))?.pid ? ofSlurm(scav) : undefined));
  assert.deepEqual(low.enrolled?.slurm, { jobId: scav, partition: 'gpu', qos: 'scavenger' }, 'Slurm\'s QOS and partition, not the ones its name and comment spell');
  assert.equal(low.priority, 'best-effort', 'QOS scavenger → best-effort');
  assert.equal(low.memoryQuotaBytes, 10 * GiB, 'its shard quota stands');
  const dragged = await box.call(bob, 'jobs.setPriority', { job: low.id, priority: 'high' });
  assert.ok(!dragged.ok && /QOS scavenger caps it at normal/.test(dragged.error.message), `its owner cannot drag it past its QOS's cap: ${JSON.stringify(dragged)}`);
  assert.equal((await ofSlurm(scav))!.priority, 'best-effort', 'nothing was changed');
  const urgent = rig.submit(alice, ['-w', node, '--qos=high', '--gres=shard:1', '-o', '%j.out', batch('urgent', '"$FAKEJOB" train --kernel-ms 4 --duration 12')]);
  const high = await until('the QOS-high job enrolled', async () => ((await ofSlurm(urgent))?.pid ? ofSlurm(urgent) : undefined));
  assert.deepEqual([high.priority, high.enrolled?.slurm?.qos], ['high', 'high'], 'QOS high → high');
  const runStates: string[] = [];
  for (let i = 0; i < 30 && existsSync(`/proc/${high.pid}`); i++) {
    runStates.push(readFileSync(`/proc/${low.pid}/stat`, 'latin1').split(') ')[1][0]);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(existsSync(`/proc/${high.pid}`), 'the QOS-high job still runs');
  // ended while held back, as at a time limit: the epilog still runs, and its last tick missed no kernel
  const killedAtNs = Number(process.hrtime.bigint()); // CLOCK_MONOTONIC, the execution record's clock
  rig.run('scancel', [scav]);
  assert.equal(await rig.finished(scav), 'CANCELLED');
  assert.equal(await rig.finished(urgent), 'COMPLETED');
  const log = JSON.parse(`[${execFileSync(join(box.nativeCopy, 'fakegpu', 'build', 'fakegpu'), ['execlog', '--state', join(box.dir, 'run', `sim-${SCENARIO}.state`), '--device', '0'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim().split('\n').join(',')}]`) as KernelRecord[];
  assert.ok(recordsOf(log, high.pid!).length > 0, 'the QOS-high job ran kernels');
  assert.ok(recordsOf(log, low.pid!).length > 0, 'the scavenger job ran kernels');
  // over its whole life: scancel's SIGTERM is caught by fakejob's handler, the shell's death ends the step
  // (proctrack/linuxproc), and the epilog runs while the task still waits at the gate; it keeps its lane until it exits
  const lows = recordsOf(log, low.pid!);
  assert.deepEqual(enqueuedUnderHigh(recordsOf(log, high.pid!), lows), [], 'no scavenger kernel was enqueued under a QOS-high one, before the cancel or after it');
  assert.ok(lows.filter((r) => r.enqueueNs >= killedAtNs).length <= 1, 'after the cancel, at most the launch it was held in');
  assert.ok(runStates.length > 0 && !runStates.some((s) => s === 'T' || s === 't'), `the scavenger was never stopped: ${runStates.join('')}`);
  const lines = readFileSync(slurmLog, 'utf8').split('\n');
  const usage = lines.find((l) => l.includes(`epilog job ${scav}: usage `));
  assert.ok(usage, `the scavenger's epilog wrote its usage: ${lines.join('\n')}`);
  const row = JSON.parse(usage!.slice(usage!.indexOf('usage ') + 6)) as { smSeconds: number; gatedSeconds: number; gpuSeconds: number };
  assert.ok(row.gatedSeconds > 0, `its time gated is counted: ${usage}`);
  const busySeconds = recordsOf(log, low.pid!).reduce((s, r) => s + (r.endNs - r.startNs), 0) / 1e9;
  t.diagnostic(`usage row: ${row.smSeconds.toFixed(3)} SM-seconds, ${row.gpuSeconds.toFixed(3)} GPU-seconds, ${row.gatedSeconds.toFixed(3)} s gated; execution record: ${busySeconds.toFixed(3)} s busy`);
  assert.ok(Math.abs(row.smSeconds - busySeconds) <= SAMPLE_INTERVAL_S, `SM-seconds ${row.smSeconds} vs the execution record's ${busySeconds} s busy: within one sampling interval (${SAMPLE_INTERVAL_S} s)`);
  const csv = execFileSync(process.execPath, [CLI_PATH, 'report', '--by', 'slurm-job', '--since', '1h', '--db', box.dbPath], { encoding: 'utf8', env: { ...process.env, ...CLI_ENV } });
  const [header, ...rows] = csv.trim().split('\n');
  assert.match(header, /^JobID,User,Partition,QOS,Start,End,GPUHours,SMHours,MemoryGiBHours,PeakMemoryGiB,GatedSeconds,ParkedSeconds,Account,GPUs$/);
  const listed = rows.map((r) => r.split(',')).find((c) => c[0] === scav);
  assert.ok(listed, `report --by slurm-job lists Slurm job ${scav}: ${csv}`);
  assert.deepEqual([listed![1], listed![2], listed![3], listed![12], listed![13]], [bob.name, 'gpu', 'scavenger', 'lab', 'GPU 0']);
  assert.ok(Math.abs(Number(listed![7]) * 3600 - busySeconds) <= SAMPLE_INTERVAL_S + 0.01, `its SM-hours (${listed![7]}) are the epilog's row`);
});

interface FakegpuDaemon {
  running: boolean;
  pipeDir: string;
  clients: Array<{ pid: number; share: number }>;
}
/** GPU 0's simulated MPS daemon, as the fakegpu state holds it. */
const mpsDaemon = (): FakegpuDaemon =>
  (JSON.parse(execFileSync(join(box.nativeCopy, 'fakegpu', 'build', 'fakegpu'), ['mps', '--state', join(box.dir, 'run', `sim-${SCENARIO}.state`), 'status'], { encoding: 'utf8' })) as FakegpuDaemon[])[0];

test("a job given --gres=mps:25 on the mps node runs as a client of its GPU's MPS daemon at 25 %: its task prolog exported the daemon's pipe and the share, gpushare shows it in mode mps, and the daemon stops after its epilog", { skip: SKIP }, async () => {
  assert.equal(mpsDaemon().running, false, 'no MPS daemon before the job');
  const id = rig.submit(alice, ['-p', 'mps', '-w', rig.mpsNode!, '--gres=mps:25', '-o', '%j.out', batch('mps', 'echo "share=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE pipe=$CUDA_MPS_PIPE_DIRECTORY"\n"$FAKEJOB" train --kernel-ms 2 --duration 10')]);
  const view = await until('the mps job enrolled', async () => ((await ofSlurm(id))?.pid ? ofSlurm(id) : undefined));
  assert.deepEqual([view.owner, view.mode, view.mpsSharePercent, view.mpsClientPriority], [alice.name, 'mps', 25, 'normal'], 'its client priority: its lane at the prolog');
  const daemon = mpsDaemon();
  assert.equal(daemon.running, true, "the prolog started GPU 0's daemon");
  await untilWith({ intervalMs: 200, timeoutMs: 20_000, detail: () => `daemon ${JSON.stringify(mpsDaemon())}; the job printed: ${rig.output(id)}; ${readFileSync(slurmLog, 'utf8')}` })('the task is a client of the daemon at 25 %', async () => mpsDaemon().clients.some((c) => c.pid === view.pid && c.share === 25) || undefined);
  assert.equal(await rig.finished(id), 'COMPLETED');
  assert.match(rig.output(id), new RegExp(`^share=25 pipe=${daemon.pipeDir}$`, 'm'), 'the task prolog exported the running daemon\'s pipe and the share');
  assert.match(readFileSync(slurmLog, 'utf8'), new RegExp(`prolog job ${id}: registered for ${alice.name} \\(account lab\\): GPU 0, no memory quota, lane normal \\(the default\\), MPS client at 25 % of the GPU's SMs \\(gres/mps\\)`));
  await until('the daemon stopped after the epilog', async () => !mpsDaemon().running || undefined);
});

test('with the gpushare daemon stopped a job still runs and completes; the prolog exits 0 and says why in its log; no node is drained', { skip: SKIP }, async () => {
  await box.stop();
  const id = rig.submit(alice, ['--gres=shard:1', '-o', '%j.out', batch('unmanaged', 'echo ran; "$FAKEJOB" alloc --chunk 1G --count 12')]);
  assert.equal(await rig.finished(id), 'COMPLETED');
  assert.match(rig.output(id), /^ran$/m);
  assert.equal(allocLines(rig.output(id)).filter((a) => a.result === 'CUDA_SUCCESS').length, 12, 'unmanaged: no quota');
  assert.match(readFileSync(slurmLog, 'utf8'), new RegExp(`prolog job ${id}: not managed by gpushare, runs as Slurm started it: No gpushare engine answers at ${box.socketPath}`));
  const states = rig.nodeStates();
  for (const node of rig.nodes) assert.doesNotMatch(states[node], /drain|down/i, `${node}: ${states[node]}`);
});
