// Attribution parsers on /proc/PID/cgroup as Docker, Podman, systemd, Slurm and Kubernetes write it (v1 and v2).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeContext } from '../../../shared/process-context.js';
import * as cg from './testing/cgroup-fixtures.js';
import {
  containerdContainerName,
  containerFromEnv,
  dockerContainerName,
  jupyterKernelOf,
  parseCgroup,
  parseEnviron,
  podmanContainerName,
  sshSessionOf,
} from './process-context.js';

test('Docker: the systemd driver scope (v2) and the cgroupfs path (v1) both give the container id', () => {
  const v2 = parseCgroup(cg.dockerV2Systemd);
  assert.deepEqual(v2.container, { runtime: 'docker', id: cg.DOCKER_ID });
  assert.equal(v2.systemdUnit, null, "the container's own scope is not reported as a unit");
  assert.equal(v2.containerOwnerUid, null);
  const v1 = parseCgroup(cg.dockerV1Cgroupfs);
  assert.deepEqual(v1.container, { runtime: 'docker', id: cg.DOCKER_ID });
  assert.equal(v1.systemdUnit, null, "a hybrid host's unified line names the shim's unit, not the container process's");
  assert.equal(v1.slurmJobId, null);
});

test('Podman: rootful under machine.slice has no owner; rootless names the user manager uid; conmon is no container', () => {
  const rootful = parseCgroup(cg.podmanRootfulV2);
  assert.deepEqual(rootful.container, { runtime: 'podman', id: cg.PODMAN_ID });
  assert.equal(rootful.containerOwnerUid, null);
  const rootless = parseCgroup(cg.podmanRootlessV2);
  assert.deepEqual(rootless.container, { runtime: 'podman', id: cg.PODMAN_ID });
  assert.equal(rootless.containerOwnerUid, 1000);
  const conmon = parseCgroup(cg.podmanConmonV2);
  assert.equal(conmon.container, null);
  assert.equal(conmon.systemdUnit, null);
});

test('systemd: a system service, a user service and login sessions (v2, and v1 where only name=systemd knows)', () => {
  assert.equal(parseCgroup(cg.systemServiceV2).systemdUnit, 'jupyterhub.service');
  assert.equal(parseCgroup(cg.userServiceV2).systemdUnit, 'trainer.service');
  assert.equal(parseCgroup(cg.userSessionV2).systemdUnit, 'session-7.scope');
  const v1 = parseCgroup(cg.userSessionV1);
  assert.equal(v1.systemdUnit, 'session-3.scope');
  assert.equal(v1.container, null);
  assert.equal(parseCgroup(cg.userServiceV2).containerOwnerUid, null, 'an owner is only reported for a container');
});

test('Slurm: job_<id> under slurm/uid_<u>/ (v1, in the memory hierarchy) and under slurmstepd.scope (v2)', () => {
  const v1 = parseCgroup(cg.slurmV1);
  assert.equal(v1.slurmJobId, '123456');
  assert.equal(v1.systemdUnit, 'slurmd.service');
  assert.equal(v1.container, null);
  const v2 = parseCgroup(cg.slurmV2);
  assert.equal(v2.slurmJobId, '98765');
  assert.equal(parseCgroup('0::/user.slice/user-1000.slice/job_55/session-2.scope\n').slurmJobId, null, 'job_ outside a slurm path is no job');
});

test('Kubernetes: containerd scope under a pod slice (v2) and the cgroupfs pod path (v1)', () => {
  const v2 = parseCgroup(cg.k8sContainerdV2);
  assert.deepEqual(v2.container, { runtime: 'containerd', id: cg.CONTAINERD_ID });
  assert.equal(v2.kubernetesPod, cg.POD_UID);
  const v1 = parseCgroup(cg.k8sCgroupfsV1);
  assert.deepEqual(v1.container, { runtime: 'containerd', id: cg.CONTAINERD_ID });
  assert.equal(v1.kubernetesPod, cg.POD_UID);
});

test('a process in the root cgroup everywhere, or an empty or garbled file, is attributed to nothing', () => {
  for (const text of [cg.rootOnlyV1, '', 'garbage\n\n::\n']) {
    assert.deepEqual(parseCgroup(text), { container: null, containerOwnerUid: null, systemdUnit: null, slurmJobId: null, kubernetesPod: null });
  }
});

test('environ: NUL-separated pairs split at the first =, values may hold = and be empty', () => {
  const env = parseEnviron(['A=1', 'B=x=y', 'EMPTY=', 'noequals', '=bad', ''].join('\0'));
  assert.deepEqual([...env], [['A', '1'], ['B', 'x=y'], ['EMPTY', '']]);
});

test('SSH session from SSH_CONNECTION and SSH_TTY; none without SSH_CONNECTION', () => {
  assert.equal(sshSessionOf(new Map([['SSH_CONNECTION', '10.0.0.7 52144 10.0.0.1 22'], ['SSH_TTY', '/dev/pts/3']])), '10.0.0.7:52144 pts/3');
  assert.equal(sshSessionOf(new Map([['SSH_CONNECTION', 'fe80::1 40000 fe80::2 22']])), 'fe80::1:40000');
  assert.equal(sshSessionOf(new Map([['SSH_TTY', '/dev/pts/3']])), null);
});

test('Jupyter kernel: id from the connection file in argv (-f path, -f=path), notebook from JPY_SESSION_NAME', () => {
  const argv = ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '/home/ada/.local/share/jupyter/runtime/kernel-9f1c2d3e-aaaa-bbbb-cccc-0123456789ab.json'];
  const env = new Map([['JPY_SESSION_NAME', '/home/ada/work/train.ipynb']]);
  assert.deepEqual(jupyterKernelOf(argv, env), { id: '9f1c2d3e-aaaa-bbbb-cccc-0123456789ab', notebook: '/home/ada/work/train.ipynb' });
  assert.deepEqual(jupyterKernelOf(['python', '-m', 'ipykernel', '-f=/run/user/1000/jupyter/kernel-v2-77.json'], new Map()), { id: 'v2-77', notebook: null });
  assert.equal(jupyterKernelOf(['python', 'train.py', '-f', 'data.json'], env), null, 'a -f that is no kernel connection file');
  assert.equal(jupyterKernelOf(['python', 'train.py'], env), null);
});

test('a container seen only in the environment needs the runtime marker and a short-id host name', () => {
  assert.deepEqual(containerFromEnv(new Map([['container', 'podman'], ['HOSTNAME', '3f084b4c7b78']])), { runtime: 'podman', id: '3f084b4c7b78' });
  assert.equal(containerFromEnv(new Map([['container', 'podman'], ['HOSTNAME', 'labbox']])), null);
  assert.equal(containerFromEnv(new Map([['HOSTNAME', '3f084b4c7b78']])), null);
});

test('container names from the runtimes\' local state: docker config.v2.json, podman containers.json, containerd CRI annotations', () => {
  assert.equal(dockerContainerName(JSON.stringify({ ID: cg.DOCKER_ID, Name: '/trainer', Config: { Labels: {} } })), 'trainer');
  const podman = JSON.stringify([{ id: 'ffff', names: ['other'] }, { id: cg.PODMAN_ID, names: ['notebook-ada'], image: 'x' }]);
  assert.equal(podmanContainerName(podman, cg.PODMAN_ID), 'notebook-ada');
  assert.equal(podmanContainerName(podman, 'abcdef123456'), null);
  const cri = { annotations: { 'io.kubernetes.cri.container-name': 'worker', 'io.kubernetes.cri.sandbox-name': 'train-0', 'io.kubernetes.cri.sandbox-namespace': 'ml' } };
  assert.equal(containerdContainerName(JSON.stringify(cri)), 'ml/train-0/worker');
  assert.equal(containerdContainerName(JSON.stringify({ annotations: { 'nerdctl/name': 'bench' } })), 'bench');
  assert.equal(containerdContainerName(JSON.stringify({})), null);
  assert.throws(() => dockerContainerName('{not json'), SyntaxError);
});

test('one line for a context: container (with its starter), Slurm job, kernel, unit only when nothing better, ssh', () => {
  assert.equal(describeContext(null), '');
  assert.equal(
    describeContext({ container: { runtime: 'podman', id: cg.PODMAN_ID, name: null }, containerUser: 'ada', systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null }),
    `podman ${cg.PODMAN_ID.slice(0, 12)} by ada`,
  );
  assert.equal(
    describeContext({ container: null, containerUser: null, systemdUnit: 'slurmd.service', slurmJobId: '42', jupyterKernel: { id: 'abcdef0123', notebook: null }, sshSession: '10.0.0.7:5 pts/1' }),
    'slurm 42 · kernel abcdef01 · ssh 10.0.0.7:5 pts/1',
  );
  assert.equal(describeContext({ container: null, containerUser: null, systemdUnit: 'session-7.scope', slurmJobId: null, jupyterKernel: null, sshSession: null }), 'session-7.scope');
});
