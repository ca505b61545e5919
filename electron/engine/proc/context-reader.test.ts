// The context reader over a fixture /proc and host root (runtime state files), and over the real /proc.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import * as cg from './testing/cgroup-fixtures.js';
import { ProcessContextReader } from './context-reader.js';
import { until } from '../../testing/until.js';

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A host with a rootless podman container of ada's, a docker container and a Kubernetes pod's container. */
function fixtureHost(): { proc: string; host: string; done: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'gpushare-context-'));
  const proc = join(root, 'proc');
  const host = join(root, 'host');
  put(join(host, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\nada:x:1000:1000::/home/ada:/bin/bash\n');
  put(join(proc, '101/cgroup'), cg.podmanRootlessV2);
  put(join(proc, '101/environ'), ['PATH=/usr/bin', 'container=podman', 'HOSTNAME=3f084b4c7b78', ''].join('\0'));
  put(join(host, 'home/ada/.local/share/containers/storage/overlay-containers/containers.json'), JSON.stringify([{ id: cg.PODMAN_ID, names: ['ada-notebook'] }]));
  put(join(proc, '102/cgroup'), cg.dockerV2Systemd);
  put(join(host, `var/lib/docker/containers/${cg.DOCKER_ID}/config.v2.json`), JSON.stringify({ ID: cg.DOCKER_ID, Name: '/trainer' }));
  put(join(proc, '103/cgroup'), cg.k8sContainerdV2);
  put(
    join(host, `run/containerd/io.containerd.runtime.v2.task/k8s.io/${cg.CONTAINERD_ID}/config.json`),
    JSON.stringify({ annotations: { 'io.kubernetes.cri.container-name': 'worker', 'io.kubernetes.cri.sandbox-name': 'train-0', 'io.kubernetes.cri.sandbox-namespace': 'ml' } }),
  );
  put(join(proc, '104/cgroup'), cg.slurmV1); // environ unreadable (absent): the cgroup alone still gives the job
  put(join(proc, '105/cgroup'), cg.dockerV2Systemd.replace(cg.DOCKER_ID, 'a'.repeat(64))); // no state on disk for it
  put(join(host, 'var/lib/docker/containers/' + 'b'.repeat(64) + '/config.v2.json'), '{broken');
  put(join(proc, '106/cgroup'), cg.dockerV2Systemd.replace(cg.DOCKER_ID, 'b'.repeat(64)));
  // rootful podman started from ada's login (sudo podman run): podman forks, so the container keeps her login uid
  put(join(proc, '107/cgroup'), cg.podmanRootfulV2);
  put(join(proc, '107/loginuid'), '1000');
  put(join(host, 'var/lib/containers/storage/overlay-containers/containers.json'), JSON.stringify([{ id: cg.PODMAN_ID, names: ['lab-shared'] }]));
  // docker's containers are dockerd's children: a login uid there is whoever started the daemon, not the container
  put(join(proc, '108/cgroup'), cg.dockerV2Systemd);
  put(join(proc, '108/loginuid'), '1000');
  put(join(proc, '109/cgroup'), cg.podmanRootfulV2);
  put(join(proc, '109/loginuid'), '4294967295'); // started by a service: no login
  // a Kubernetes container whose runtime state is not readable here: the kubelet's log directory names its pod
  put(join(proc, '110/cgroup'), cg.k8sCgroupfsV1.replaceAll(cg.CONTAINERD_ID, 'c'.repeat(64)));
  mkdirSync(join(host, `var/log/pods/ml_train-1_${cg.POD_UID}/worker`), { recursive: true });
  mkdirSync(join(host, 'var/log/pods/kube-system_coredns-5d78c9869d-abcde_11111111-2222-3333-4444-555555555555'), { recursive: true });
  return { proc, host, done: () => rmSync(root, { recursive: true, force: true }) };
}

test('a rootless podman process is shown with its container name and the user who started it', () => {
  const { proc, host, done } = fixtureHost();
  try {
    const reader = new ProcessContextReader({ procRoot: proc, hostRoot: host });
    assert.deepEqual(reader.lookup(101, 1, []), {
      container: { runtime: 'podman', id: cg.PODMAN_ID, name: 'ada-notebook' },
      containerUser: 'ada',
      systemdUnit: null,
      slurmJobId: null,
      jupyterKernel: null,
      sshSession: null,
    });
  } finally {
    done();
  }
});

test('a rootful podman container is shown with the login user who ran it; docker\'s and a service\'s are not', () => {
  const { proc, host, done } = fixtureHost();
  try {
    const reader = new ProcessContextReader({ procRoot: proc, hostRoot: host });
    const rootful = reader.lookup(107, 1, [])!;
    assert.equal(rootful.containerUser, 'ada');
    assert.equal(rootful.container?.name, 'lab-shared', "root's container storage, not ada's");
    assert.equal(reader.lookup(108, 1, [])!.containerUser, null);
    assert.equal(reader.lookup(109, 1, [])!.containerUser, null);
  } finally {
    done();
  }
});

test('docker and Kubernetes container names come from their local state; docker keeps no record of who started one', () => {
  const { proc, host, done } = fixtureHost();
  try {
    const reader = new ProcessContextReader({ procRoot: proc, hostRoot: host });
    const docker = reader.lookup(102, 1, [])!;
    assert.deepEqual(docker.container, { runtime: 'docker', id: cg.DOCKER_ID, name: 'trainer' });
    assert.equal(docker.containerUser, null);
    assert.deepEqual(reader.lookup(103, 1, [])!.container, { runtime: 'containerd', id: cg.CONTAINERD_ID, name: 'ml/train-0/worker' });
    assert.equal(reader.lookup(104, 1, [])!.slurmJobId, '123456');
    assert.deepEqual(reader.lookup(105, 1, [])!.container, { runtime: 'docker', id: 'a'.repeat(64), name: null }, 'no state file: shown by id');
    assert.deepEqual(reader.lookup(106, 1, [])!.container, { runtime: 'docker', id: 'b'.repeat(64), name: null }, 'a malformed state file: shown by id, never thrown');
    assert.deepEqual(reader.lookup(110, 1, [])!.container, { runtime: 'containerd', id: 'c'.repeat(64), name: 'pod ml/train-1' }, 'the pod, from /var/log/pods');
    assert.equal(reader.lookup(999, 1, []), null, 'a pid /proc does not show');
  } finally {
    done();
  }
});

test('read once per pid and start time: a steady process is not re-read, a reused pid is', () => {
  const { proc, host, done } = fixtureHost();
  try {
    const reader = new ProcessContextReader({ procRoot: proc, hostRoot: host });
    assert.equal(reader.lookup(104, 500, [])!.slurmJobId, '123456');
    put(join(proc, '104/cgroup'), cg.slurmV2);
    assert.equal(reader.lookup(104, 500, [])!.slurmJobId, '123456', 'same process: kept');
    assert.equal(reader.lookup(104, 900, [])!.slurmJobId, '98765', 'another start time: a new process under the old pid');
    reader.retainOnly(new Set([101]));
    assert.equal(reader.size, 0);
  } finally {
    done();
  }
});

test('the real /proc: a child started with a Slurm job, an ssh session and a kernel connection file is attributed', async (t) => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-f', '/tmp/jupyter/kernel-5a7e-11.json'], {
    env: { PATH: process.env.PATH, SLURM_JOB_ID: '4242', SSH_CONNECTION: '192.0.2.9 50022 192.0.2.1 22', JPY_SESSION_NAME: 'lab/probe.ipynb' },
    stdio: 'ignore',
  });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  const reader = new ProcessContextReader();
  // argv as the proc table reads it: the child's own command line
  const argv = await waitForExec(child.pid!);
  const context = reader.lookup(child.pid!, 1, argv);
  assert.ok(context);
  assert.equal(context.slurmJobId, '4242');
  assert.equal(context.sshSession, '192.0.2.9:50022');
  assert.deepEqual(context.jupyterKernel, { id: '5a7e-11', notebook: 'lab/probe.ipynb' });
});

/** The child's argv once it has exec'd node (before that /proc shows the parent's). */
async function waitForExec(pid: number): Promise<string[]> {
  const { readFileSync } = await import('node:fs');
  return until(`pid ${pid} to show its command line`, () => {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return argv.includes('-f') ? argv : undefined;
  }, { timeoutMs: 2_000, intervalMs: 10 });
}

/** A cgroup hierarchy this process may create groups in (root, and a writable v2 root or v1 controller), or why not. */
function writableHierarchy(): { root: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'creating cgroups needs root' };
  const candidates = existsSync('/sys/fs/cgroup/cgroup.controllers') ? ['/sys/fs/cgroup'] : ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/memory', '/sys/fs/cgroup/cpu'];
  for (const root of candidates) {
    const probe = join(root, `gpushare-probe-${process.pid}`);
    try {
      mkdirSync(probe);
      rmdirSync(probe);
      return { root };
    } catch {
      // read-only here (a container without cgroup delegation): try the next
    }
  }
  return { skip: `no writable cgroup hierarchy among ${candidates.join(', ')}` };
}

const hierarchy = writableHierarchy();

test('the kernel\'s own /proc/PID/cgroup: children moved into groups laid out as Docker, rootless podman and Slurm lay theirs out are attributed', { skip: 'skip' in hierarchy ? hierarchy.skip : false }, async (t) => {
  const root = join((hierarchy as { root: string }).root, `gpushare-test-${process.pid}`);
  const layouts = [
    `system.slice/docker-${cg.DOCKER_ID}.scope`,
    `user.slice/user-1000.slice/user@1000.service/user.slice/libpod-${cg.PODMAN_ID}.scope/container`,
    'slurm/uid_1000/job_777/step_0/task_0',
  ];
  const children = layouts.map(() => spawn('sleep', ['60'], { stdio: 'ignore' }));
  t.after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null)));
    // groups go deepest first, once their processes have exited
    const dirs = layouts.flatMap((layout) => layout.split('/').map((_, i, parts) => join(root, ...parts.slice(0, i + 1))));
    for (const dir of [...new Set(dirs)].sort((a, b) => b.length - a.length)) rmdirSync(dir);
    rmdirSync(root);
  });
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('spawn', resolve))));
  layouts.forEach((layout, i) => {
    mkdirSync(join(root, layout), { recursive: true });
    writeFileSync(join(root, layout, 'cgroup.procs'), String(children[i].pid));
  });
  const { host, done } = fixtureHost(); // for /etc/passwd: uid 1000 is ada
  t.after(done);
  const reader = new ProcessContextReader({ hostRoot: host });
  const [docker, podman, slurm] = children.map((child) => reader.lookup(child.pid!, 1, ['sleep', '60'])!);
  assert.deepEqual(docker.container, { runtime: 'docker', id: cg.DOCKER_ID, name: 'trainer' });
  assert.deepEqual(podman.container, { runtime: 'podman', id: cg.PODMAN_ID, name: 'ada-notebook' });
  assert.equal(podman.containerUser, 'ada');
  assert.equal(slurm.slurmJobId, '777');
  assert.equal(slurm.container, null);
});

test("a rootless user's container state in their home is read only as a small regular file, and a long name is cut to a line", () => {
  const { proc, host, done } = fixtureHost();
  try {
    const file = join(host, 'home/ada/.local/share/containers/storage/overlay-containers/containers.json');
    const nameOf = (): string | null => new ProcessContextReader({ procRoot: proc, hostRoot: host }).lookup(101, 1, [])!.container!.name;
    writeFileSync(file, JSON.stringify([{ id: cg.PODMAN_ID, names: ['n'.repeat(100_000)] }]));
    const long = nameOf()!;
    assert.ok(long.startsWith('nnnn') && long.endsWith('…'), 'a long name is shown, cut');
    assert.ok(Buffer.byteLength(JSON.stringify(long)) <= 256, `a name is at most 256 bytes of JSON, not ${Buffer.byteLength(JSON.stringify(long))}`);
    writeFileSync(file, JSON.stringify([{ id: cg.PODMAN_ID, names: ['ada-notebook'] }, ...Array.from({ length: 30_000 }, (_, i) => ({ id: String(i).padStart(64, '0'), names: ['x'.repeat(64)] }))]));
    assert.ok(statSync(file).size > 2 * 1024 * 1024);
    assert.equal(nameOf(), null, 'a list past 2 MB is not read: the container is shown by id');
    // what a user may put in its place: a read of either would never end
    rmSync(file);
    symlinkSync('/dev/zero', file);
    assert.equal(nameOf(), null, '/dev/zero is not read');
    rmSync(file);
    execFileSync('mkfifo', [file]);
    assert.equal(nameOf(), null, 'a FIFO is not read');
  } finally {
    done();
  }
});

test('an environment of megabytes: the variables after it are still found, and each is cut to a line', () => {
  const { proc, host, done } = fixtureHost();
  try {
    const environ = [`PAD=${'x'.repeat(6 * 1024 * 1024)}`, 'SSH_CONNECTION=10.0.0.7 52144 10.0.0.1 22', 'SSH_TTY=/dev/pts/3', `JPY_SESSION_NAME=${'é'.repeat(50_000)}.ipynb`, `SLURM_JOB_ID=${'7'.repeat(10_000)}`, ''];
    put(join(proc, '111/environ'), environ.join('\0'));
    put(join(proc, '111/cgroup'), `0::/user.slice/user-1000.slice/${'u'.repeat(3000)}.service\n`);
    const context = new ProcessContextReader({ procRoot: proc, hostRoot: host }).lookup(111, 1, ['python', '-f', '/run/user/1000/jupyter/kernel-9f1c.json'])!;
    assert.equal(context.sshSession, '10.0.0.7:52144 pts/3');
    assert.equal(context.jupyterKernel?.id, '9f1c');
    assert.ok(context.jupyterKernel?.notebook?.startsWith('ééé'), 'the notebook is read');
    for (const [what, text] of [['notebook', context.jupyterKernel!.notebook!], ['Slurm job', context.slurmJobId!], ['unit', context.systemdUnit!]] as const) {
      assert.ok(text.endsWith('…'), `the ${what} is cut`);
      assert.ok(Buffer.byteLength(JSON.stringify(text)) <= 256, `the ${what} is at most 256 bytes of JSON, not ${Buffer.byteLength(JSON.stringify(text))}`);
    }
  } finally {
    done();
  }
});
