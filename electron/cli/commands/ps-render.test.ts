// `gpushare ps` text: the WHERE column says where each process runs, when any process has a context.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GpuProcessView, ProcessContext, Snapshot } from '../../../shared/snapshot.js';
import { renderSnapshot } from './ps-render.js';

const GiB = 1024 ** 3;
const none: ProcessContext = { container: null, containerUser: null, systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null };

function proc(pid: number, user: string, context: ProcessContext | null, argv: string[]): GpuProcessView {
  return {
    pid,
    gpuIndex: 0,
    gpuUuid: 'GPU-0',
    kind: 'compute',
    user,
    uid: null,
    command: argv[0],
    argv,
    startedAt: null,
    usedMemory: GiB * (10 - pid / 1000),
    smPercent: 10,
    memPercent: 1,
    gpuInstanceId: null,
    computeInstanceId: null,
    context,
  };
}

function snapshot(processes: GpuProcessView[]): Snapshot {
  return {
    seq: 1,
    takenAt: 0,
    intervalMs: null,
    nominalIntervalMs: 1000,
    driver: { driverVersion: '1', nvmlVersion: '1', cudaDriverVersion: null, simulated: true, scenario: 'scripted' },
    gpus: [],
    processes,
  };
}

test('ps shows each process\'s container (with who started it), Slurm job, kernel and unit in a WHERE column', () => {
  const text = renderSnapshot(
    snapshot([
      proc(1001, 'root', { ...none, container: { runtime: 'podman', id: 'f'.repeat(64), name: 'ada-notebook' }, containerUser: 'ada' }, ['python', 'a.py']),
      proc(1002, 'bob', { ...none, systemdUnit: 'slurmstepd.scope', slurmJobId: '4242' }, ['python', 'b.py']),
      proc(1003, 'cy', { ...none, jupyterKernel: { id: '9f1c2d3e-aaaa', notebook: 'work/train.ipynb' } }, ['python', '-m', 'ipykernel_launcher']),
      proc(1004, 'dee', { ...none, systemdUnit: 'trainer.service' }, ['trainer']),
      proc(1005, 'eve', null, ['plain']),
    ]),
    200,
  );
  const lines = text.split('\n').map((l) => l.trimStart());
  const header = lines.find((l) => l.startsWith('PID'))!;
  assert.match(header, /MEMORY\s+WHERE\s+COMMAND/);
  const row = (pid: number) => lines.find((l) => l.startsWith(String(pid)))!;
  assert.match(row(1001), /^1001\s+root\s.*podman ada-notebook by ada\s+python a\.py$/);
  assert.match(row(1002), /slurm 4242\s+python b\.py$/);
  assert.doesNotMatch(row(1002), /slurmstepd/, 'the job says more than the unit that runs every job');
  assert.match(row(1003), /kernel work\/train\.ipynb\s+python -m ipykernel_launcher$/);
  assert.match(row(1004), /trainer\.service\s+trainer$/);
  assert.match(row(1005), /\s-\s+plain$/);
});

test('ps has no WHERE column when no process has a context', () => {
  const text = renderSnapshot(snapshot([proc(1, 'ada', null, ['a']), proc(2, 'bob', { ...none }, ['b'])]), 200);
  const header = text.split('\n').map((l) => l.trimStart()).find((l) => l.startsWith('PID'))!;
  assert.doesNotMatch(header, /WHERE/);
  assert.match(header, /MEMORY\s+COMMAND/);
});

test('ps marks a command line shown only in part with its whole size, and counts the processes a snapshot left out', () => {
  const cut = { ...proc(1001, 'mallory', null, ['fakejob', '--mem', '1M', 'hold', '--', 'x'.repeat(4000)]), argvCut: { bytes: 5_895_053, args: 50 } };
  const whole = proc(1002, 'alice', null, ['python', 'train.py']);
  const snap = snapshot([cut, whole]);
  snap.gpus = [{ index: 0, lost: true, name: 'GPU', errors: [], unlisted: { processes: 1200, usedMemory: 1200 * 1024 ** 2 } } as unknown as Snapshot['gpus'][0]];
  const lines = renderSnapshot(snap, 120).split('\n');
  const row = lines.find((l) => l.includes('1001'))!;
  assert.match(row, /\[cut: 5\.6M\] fakejob --mem 1M hold -- xxx/, 'the mark comes first, where a clipped line still shows it');
  assert.ok(row.length <= 120);
  assert.doesNotMatch(lines.find((l) => l.includes('1002'))!, /cut/);
  assert.ok(lines.includes('[cut: SIZE]: a command line longer than shown; SIZE is the whole one.'));
  assert.ok(lines.some((l) => l.startsWith('GPU 0: 1200 more processes are not listed (1.2G of GPU memory)')), lines.join('\n'));
});
