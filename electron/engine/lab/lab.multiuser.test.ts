// A lab of boxes on this machine, each as real as it can be here (testing/ssh-lab.ts): its own mount
// namespace with its own daemon at /run/gpushare/engine.sock on its own simulated scenario, its own
// sshd on its own loopback address. The hub reaches them over ssh as the person; one box refuses to
// forward sockets (the hub relays through `gpushare relay --stdio` there); one destination has no key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, type ChildProcess } from 'node:child_process';
import type { JobView } from '../../../shared/jobs.js';
import type { LabSnapshot } from '../../../shared/lab.js';
import { forwardedSocketPath } from './box-link.js';
import { LabHub } from './lab-hub.js';
import { LOGIN_PATH } from '../scheduler/job-env.js';
import { processEnvironment } from '../../testing/proc-environ.js';
import { parseLabText } from './lab-list.js';
import { SshLab, sshLabMissing, type LabPerson, type SshBox } from './testing/ssh-lab.js';

const missing = sshLabMissing();
if (missing) console.log(`# lab.multiuser skipped: ${missing}`);

/** Poll `check` on the hub's lab until it holds, at most `ms`; the last lab is in the failure. */
async function until(hub: LabHub, what: string, check: (lab: LabSnapshot) => boolean, ms = 30_000): Promise<LabSnapshot> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lab = hub.snapshot();
    if (check(lab)) return lab;
    if (Date.now() > deadline) throw new Error(`waited ${ms / 1000} s for ${what}; boxes: ${JSON.stringify(lab.boxes.map((b) => ({ name: b.name, connection: b.connection, seq: b.snapshot?.seq })))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const boxOf = (lab: LabSnapshot, name: string) => lab.boxes.find((b) => b.name === name)!;
const uidOf = (pid: number): number => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
const train = (fakejob: string, seconds = 300, mem = '1G'): string[] => [fakejob, '--mem', mem, 'train', '--kernel-ms', '5', '--duration', String(seconds)];

describe('a lab of boxes over ssh', { skip: missing ?? false }, () => {
  let lab: SshLab;
  let alice: LabPerson;
  let bob: LabPerson;
  let box1: SshBox;
  let box2: SshBox;
  let hub: LabHub;
  const strays: ChildProcess[] = [];

  before(async () => {
    lab = new SshLab();
    alice = lab.person('alice');
    bob = lab.person('bob');
    box1 = await lab.box('box1', { scenario: 'a100-40gb' });
    box2 = await lab.box('box2', { scenario: 'h100x2-mig' });
    await lab.box('box3', { scenario: 'a100-40gb', forwarding: false });
    // box4: box1's address as bob, whose authorized key is not alice's
    const files = lab.writeClientFiles(alice, [{ name: 'box4', ssh: `${bob.name}@box1` }]);
    hub = new LabHub(parseLabText(files.rootLab, readFileSync(files.rootLab, 'utf8')), { socketDir: join(lab.dir, 'root-client', 'sockets'), ssh: files.rootSsh, firstRetryMs: 300, maxRetryMs: 1000 });
    hub.start();
  });

  after(async () => {
    hub?.close();
    for (const child of strays) child.kill('SIGKILL');
    await lab?.dispose();
  });

  test("the hub sees every box's GPUs and processes, each box knowing the person by the kernel's word; a box that refuses the key is down with ssh's words", async () => {
    const procs = lab.boxes.map((box) => box.spawnAs(bob, train(lab.fakejob, 300, '2G')));
    strays.push(...procs);
    const seen = await until(hub, "bob's process on every box", (l) => lab.boxes.every((box, i) => boxOf(l, box.name).snapshot?.processes.some((p) => p.pid === procs[i]!.pid)));
    assert.deepEqual(lab.boxes.map((b) => boxOf(seen, b.name).snapshot!.gpus.length), [1, 2, 1]);
    for (const [i, box] of lab.boxes.entries()) {
      const view = boxOf(seen, box.name);
      assert.equal(view.connection.state, 'connected');
      assert.equal(view.caller?.user, alice.name, `${box.name} takes the hub's connection to be alice's`);
      assert.equal(view.caller?.uid, alice.uid);
      assert.equal(view.snapshot!.processes.find((p) => p.pid === procs[i]!.pid)?.user, bob.name);
      assert.equal(view.snapshot!.driver.scenario, box.options.scenario);
    }
    assert.deepEqual(lab.boxes.map((b) => (boxOf(seen, b.name).connection as { via: string }).via), ['ssh-forward', 'ssh-forward', 'ssh-relay']);
    const sockets = join(lab.dir, 'root-client', 'sockets');
    assert.equal(statSync(sockets).mode & 0o777, 0o700, 'the forwarded sockets lie in a 0700 directory');
    for (const name of ['box1', 'box2']) assert.equal(statSync(forwardedSocketPath(sockets, name)).mode & 0o777, 0o600, `${name}'s forwarded socket is 0600`);
    const down = await until(hub, 'box4 down', (l) => boxOf(l, 'box4').connection.state === 'down');
    assert.equal((boxOf(down, 'box4').connection as { lastError: string }).lastError, 'box4: ssh: Permission denied (publickey)');
  });

  test("`gpushare run --box` starts the job on that box as the person, in the box's environment for them; a working directory missing there is refused", async () => {
    const shell = { LAB_TEST_SECRET: 'x', VIRTUAL_ENV: '/opt/venv-here', LANG: 'C.UTF-8', TERM: 'xterm-here', WANDB_MODE: 'offline' };
    const out = await lab.cliAs(alice, ['run', '--box', 'box2', '--env', 'WANDB_MODE', '--wait', '3', '--json', '--', ...train(lab.fakejob)], { env: shell });
    assert.equal(out.status, 0, out.stderr);
    const job = JSON.parse(out.stdout) as JobView;
    assert.equal(job.state, 'running');
    assert.equal(job.owner, alice.name);
    assert.equal(uidOf(job.pid!), alice.uid, "the job's process runs as alice");
    assert.equal(readlinkSync(`/proc/${job.pid}/ns/mnt`), box2.mountNamespace, 'the job runs in box2');
    const environ = processEnvironment(job.pid!);
    assert.deepEqual(
      Object.fromEntries(['HOME', 'USER', 'LOGNAME', 'SHELL', 'PATH', 'LANG', 'TERM', 'WANDB_MODE'].map((k) => [k, environ[k]])),
      { HOME: alice.home, USER: alice.name, LOGNAME: alice.name, SHELL: '/bin/sh', PATH: LOGIN_PATH, LANG: 'C.UTF-8', TERM: 'xterm-here', WANDB_MODE: 'offline' },
      "box2's login environment for alice (its passwd), what ssh carries, and what --env named",
    );
    for (const name of ['LAB_TEST_SECRET', 'VIRTUAL_ENV', 'XDG_RUNTIME_DIR', 'GPUSHARE_LAB_FILE']) assert.equal(environ[name], undefined, `${name} stays on alice's machine`);
    await until(hub, "alice's job in the hub's view of box2", (l) => boxOf(l, 'box2').jobs.some((j) => j.id === job.id && j.state === 'running'));

    const here = join(lab.dir, 'only-here');
    mkdirSync(join(here, 'work'), { recursive: true });
    chownSync(join(here, 'work'), alice.uid, alice.gid);
    box1.hide(here);
    const refused = await lab.cliAs(alice, ['run', '--box', 'box1', '--', ...train(lab.fakejob)], { cwd: join(here, 'work') });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, new RegExp(`^gpushare run: box1: .*working directory ${join(here, 'work')}.* does not exist`, 'i'));
  });

  test("`gpushare run --box` gives the job XDG_RUNTIME_DIR where the box has the person's /run/user/UID, as pam_systemd gives an ssh login", async () => {
    const runtimeDir = `/run/user/${alice.uid}`;
    // as pam_systemd makes it at login, in box2's own /run (a tmpfs of its namespace)
    execFileSync('nsenter', ['-t', String(box2.pid), '-m', '--', 'sh', '-c', `mkdir -p -m 755 /run/user && install -d -m 700 -o ${alice.uid} -g ${alice.gid} ${runtimeDir}`]);
    const out = await lab.cliAs(alice, ['run', '--box', 'box2', '--wait', '3', '--json', '--', ...train(lab.fakejob, 20)]);
    assert.equal(out.status, 0, out.stderr);
    const job = JSON.parse(out.stdout) as JobView;
    try {
      assert.equal(job.state, 'running');
      assert.equal(processEnvironment(job.pid!).XDG_RUNTIME_DIR, runtimeDir, "box2's runtime directory for alice, not one from her machine");
    } finally {
      await hub.client('box2')!.call('jobs.terminate', { job: job.id }); // the later tests count alice's processes
      await until(hub, `${job.id} gone from box2`, (l) => !boxOf(l, 'box2').snapshot?.processes.some((p) => p.pid === job.pid));
    }
  });

  test("an action on another person's job is refused by that box, naming the owner", async () => {
    const submitted = await box1.execAs(bob, [lab.gpushare, 'run', '--wait', '0', '--json', '--', ...train(lab.fakejob)]);
    assert.equal(submitted.status, 0, submitted.stderr);
    const job = JSON.parse(submitted.stdout) as JobView;
    const client = hub.client('box1');
    assert.ok(client, 'box1 is connected');
    await assert.rejects(client.call('jobs.terminate', { job: job.id }), (error: Error & { code?: string }) => error.code === 'forbidden' && error.message.includes(bob.name));
    const still = await until(hub, `${job.id} still on box1`, (l) => boxOf(l, 'box1').jobs.some((j) => j.id === job.id));
    assert.notEqual(boxOf(still, 'box1').jobs.find((j) => j.id === job.id)!.state, 'finished');
  });

  test('`gpushare lab where` names a box that can start the job, and the job starts there', async () => {
    const where = await lab.cliAs(alice, ['lab', 'where', '--mem', '50G', '--json']);
    assert.equal(where.status, 0, where.stderr);
    const answer = JSON.parse(where.stdout) as { places: Array<{ box: string; gpus: number[] }>; notNow: Array<{ box: string; reason: string }> };
    assert.deepEqual(answer.places.map((p) => [p.box, p.gpus]), [['box2', [0]]], 'only box2 has a GPU with 50G free (GPU 1 is in MIG mode)');
    assert.deepEqual(answer.notNow.map((n) => n.box), ['box1', 'box3', 'box4']);
    assert.match(answer.notNow[0]!.reason, /no GPU has 50G free now/);
    const out = await lab.cliAs(alice, ['run', '--box', answer.places[0]!.box, '--mem', '50G', '--wait', '3', '--json', '--', ...train(lab.fakejob)]);
    assert.equal(out.status, 0, out.stderr);
    const job = JSON.parse(out.stdout) as JobView;
    assert.deepEqual([job.state, job.gpu], ['running', 0]);
    assert.equal(readlinkSync(`/proc/${job.pid}/ns/mnt`), box2.mountNamespace);

    const ps = await lab.cliAs(alice, ['lab', 'ps']);
    assert.equal(ps.status, 0, ps.stderr);
    assert.match(ps.stdout, /^box1 \(ssh box1\): connected over ssh \(forwarded socket\) — simulated GPUs/m);
    assert.match(ps.stdout, /^box3 \(ssh box3\): connected over ssh \(gpushare relay\)/m);
    // down, or already trying again (the one-shot hub's backoff may have come round): either way with the last error
    assert.match(ps.stdout, /^box4 \(ssh .*@box1\): (down since|reconnecting \(down since) .*: box4: ssh: Permission denied \(publickey\)$/m);
    assert.match(ps.stdout, new RegExp(`^\\s+${alice.name}\\s+1\\s+2\\s`, 'm'), "alice's totals: one GPU, two processes (both on box2's GPU 0)");
  });

  test('`gpushare lab where` names a MIG slice where only a slice has the room, and its run line starts the job in that slice', async () => {
    // the roomiest slice against every whole GPU, with the jobs of the tests before on them
    const roomiestOf = (l: LabSnapshot) => boxOf(l, 'box2').snapshot?.gpus[1]?.migSlices.reduce((a, b) => ((b.memoryTotal ?? 0) - (b.memoryUsed ?? 0) > (a.memoryTotal ?? 0) - (a.memoryUsed ?? 0) ? b : a));
    const requestOf = (l: LabSnapshot): number => Math.floor(((roomiestOf(l)?.memoryTotal ?? 0) - (roomiestOf(l)?.memoryUsed ?? 0)) / 2 ** 20) - 256;
    // a whole GPU's free memory less what running managed jobs declared and have not allocated (alice's 50G job holds 1G)
    const promised = (b: LabSnapshot['boxes'][number], gpu: number): number => b.jobs.filter((j) => j.managed && j.state === 'running' && j.gpu === gpu).reduce((sum, j) => sum + Math.max(0, (j.memoryQuotaBytes ?? 0) - (j.usedMemory ?? 0)), 0);
    const wholeFree = (l: LabSnapshot) => l.boxes.flatMap((b) => (b.snapshot?.gpus ?? []).filter((g) => !g.migEnabled).map((g) => [b.name, g.index, ((g.memoryFree ?? 0) - promised(b, g.index)) / 2 ** 20] as const));
    const lab0 = await until(hub, 'a MIG slice roomier than every whole GPU', (l) => roomiestOf(l) !== undefined && wholeFree(l).length === 3 && wholeFree(l).every(([, , free]) => free < requestOf(l)));
    const roomiest = roomiestOf(lab0)!;
    const slices = boxOf(lab0, 'box2').snapshot!.gpus[1]!.migSlices;
    const requestMiB = requestOf(lab0);
    const where = await lab.cliAs(alice, ['lab', 'where', '--mem', `${requestMiB}M`, '--json']);
    assert.equal(where.status, 0, where.stderr);
    const answer = JSON.parse(where.stdout) as { places: Array<{ box: string; gpus: number[]; slice: { uuid: string; profile: string; gpuInstanceId: number } | null; run: string[] }> };
    assert.deepEqual(answer.places.map((p) => [p.box, p.gpus, p.slice?.uuid]), [['box2', [1], roomiest.uuid]]);
    const out = await lab.cliAs(alice, ['run', ...answer.places[0]!.run, '--wait', '3', '--json', '--', ...train(lab.fakejob)]);
    assert.equal(out.status, 0, out.stderr);
    const job = JSON.parse(out.stdout) as JobView;
    assert.deepEqual([job.state, job.gpu, job.mode, job.migSlice], ['running', 1, 'mig', roomiest.uuid]);
    assert.equal(readlinkSync(`/proc/${job.pid}/ns/mnt`), box2.mountNamespace);
    const ran = async (): Promise<boolean> => box2.kernelRecords(1, roomiest.gpuInstanceId).some((r) => r.pid === job.pid);
    for (let i = 0; i < 100 && !(await ran()); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(await ran(), "its kernels ran in the slice's GPU instance (the simulated driver's record)");
    for (const other of slices.filter((s) => s.uuid !== roomiest.uuid)) assert.ok(!box2.kernelRecords(1, other.gpuInstanceId).some((r) => r.pid === job.pid), `none in ${other.profileName}`);
  });

  test("a box whose daemon dies is down within 5 s while the others keep updating, and comes back when it restarts, the hub running on", async () => {
    await until(hub, 'every box but box4 connected', (l) => l.boxes.filter((b) => b.name !== 'box4').every((b) => b.connection.state === 'connected' && b.snapshot));
    const before = hub.snapshot();
    const seqBefore = (name: string): number => boxOf(before, name).snapshot!.seq;
    await box1.killDaemon();
    const killedAt = Date.now();
    const down = await until(hub, 'box1 down', (l) => boxOf(l, 'box1').connection.state === 'down' || boxOf(l, 'box1').connection.state === 'reconnecting', 5000);
    assert.ok(Date.now() - killedAt <= 5000);
    assert.match((boxOf(down, 'box1').connection as { lastError: string }).lastError, /^box1: (the daemon closed the connection|gpushare relay: no gpushare daemon answers at \/run\/gpushare\/engine\.sock)/);
    const others = await until(hub, 'box2 and box3 updating after box1 died', (l) => ['box2', 'box3'].every((n) => boxOf(l, n).connection.state === 'connected' && boxOf(l, n).snapshot!.seq >= seqBefore(n) + 2));
    assert.notEqual(boxOf(others, 'box1').connection.state, 'connected');
    await box1.startDaemon();
    const restartedAt = Date.now();
    const back = await until(hub, 'box1 back', (l) => boxOf(l, 'box1').connection.state === 'connected' && (boxOf(l, 'box1').snapshot?.takenAt ?? 0) > restartedAt);
    assert.equal(boxOf(back, 'box1').caller?.user, alice.name);
    const forwarding = readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${forwardedSocketPath(join(lab.dir, 'root-client', 'sockets'), 'box1')}:`);
        } catch {
          return false;
        }
      });
    // (none when box1 came back through the relay: its daemon was not listening yet when the tunnel was tried)
    assert.equal(forwarding.length, (boxOf(back, 'box1').connection as { via: string }).via === 'ssh-forward' ? 1 : 0, "the ssh of the lost link ended with it: only the live link's forwards box1's socket");
  });
});
