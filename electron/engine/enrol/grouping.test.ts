// Grouping from /proc, on a /proc written by the test: a notebook kernel (and its subprocesses) is one
// group named by JPY_SESSION_NAME; a Slurm job, a systemd service, a container each one; a login
// session's scope is no group (its processes are grouped by their own tree); every key holds the uid.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DOCKER_ID, dockerV2Systemd } from '../proc/testing/cgroup-fixtures.js';
import { kernelGroup, readEnrolling, requestedDevice } from './grouping.js';

const root = mkdtempSync(join(tmpdir(), 'gpushare-grouping-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Fake {
  pid: number;
  ppid: number;
  comm?: string;
  argv?: string[];
  env?: Record<string, string>;
  cgroup?: string;
  pgid?: number;
  sid?: number;
}

/** A /proc of these processes (owner: this test's uid, start time 1000 + pid). */
function proc(name: string, processes: Fake[]): string {
  const dir = join(root, name);
  for (const p of processes) {
    const d = join(dir, String(p.pid));
    mkdirSync(d, { recursive: true });
    const fields = ['S', p.ppid, p.pgid ?? p.pid, p.sid ?? p.pid, ...Array(15).fill(0), 1000 + p.pid];
    writeFileSync(join(d, 'stat'), `${p.pid} (${p.comm ?? 'python3'}) ${fields.join(' ')}\n`);
    writeFileSync(join(d, 'cmdline'), (p.argv ?? ['python3']).join('\0') + '\0');
    writeFileSync(join(d, 'environ'), Object.entries(p.env ?? {}).map(([k, v]) => `${k}=${v}\0`).join(''));
    writeFileSync(join(d, 'cgroup'), p.cgroup ?? '0::/user.slice/user-1000.slice/session-4.scope\n');
  }
  return dir;
}

const uid = process.getuid?.() ?? 0;

test('a notebook kernel\'s subprocess belongs to the kernel, named by its notebook', () => {
  const dir = proc('kernel', [
    { pid: 100, ppid: 1, argv: ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '/run/user/1000/jupyter/kernel-1.json'], env: { JPY_SESSION_NAME: '/home/ann/work/train.ipynb' } },
    { pid: 101, ppid: 100, argv: ['python3', '-c', 'import torch'] },
  ]);
  const child = readEnrolling(101, dir)!;
  assert.deepEqual(child.ancestors.map((a) => a.pid), [100]);
  assert.deepEqual(kernelGroup(child, dir), { key: `notebook:${uid}:100:1100`, kind: 'notebook', name: 'train.ipynb' });
  assert.deepEqual(kernelGroup(readEnrolling(100, dir)!, dir)?.key, `notebook:${uid}:100:1100`, 'the kernel itself: the same group');
});

test('a Slurm job, a systemd service and a container are one group each; a login session\'s scope is none', () => {
  const dir = proc('cgroups', [
    { pid: 200, ppid: 1, cgroup: '0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n' },
    { pid: 201, ppid: 1, cgroup: '0::/system.slice/inference.service\n' },
    { pid: 202, ppid: 1, cgroup: dockerV2Systemd },
    { pid: 203, ppid: 1 },
    { pid: 204, ppid: 1, cgroup: '0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-terminal.scope\n' },
  ]);
  const group = (pid: number) => kernelGroup(readEnrolling(pid, dir)!, dir);
  assert.deepEqual(group(200), { key: `slurm:${uid}:4242`, kind: 'slurm', name: 'slurm job 4242' });
  assert.deepEqual(group(201), { key: `unit:${uid}:inference.service`, kind: 'unit', name: 'inference.service' });
  assert.equal(group(202)?.key, `container:${uid}:${DOCKER_ID}`);
  assert.equal(group(203), null, 'a login session is not one job');
  assert.equal(group(204), null, "a user's terminal is not one job");
});

test('the environment is read only for a kernel\'s name and the GPU asked for', () => {
  const dir = proc('env', [{ pid: 300, ppid: 1, env: { CUDA_VISIBLE_DEVICES: 'GPU-1234,1', JPY_SESSION_NAME: 'x.ipynb' } }]);
  assert.equal(requestedDevice(300, dir), 'GPU-1234');
  assert.equal(kernelGroup(readEnrolling(300, dir)!, dir), null, 'JPY_SESSION_NAME alone, without a kernel process, groups nothing');
});
