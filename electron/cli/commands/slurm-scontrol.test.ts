// What the prolog reads of Slurm's own words: `squeue --json` as Debian's Slurm 22.05 prints it (captured on the
// real rig: testing/slurm-captured.ts) and `scontrol show node`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIndexList, parseShardsPerGpu, parseSqueueJson, readJobFacts, type SlurmClient } from './slurm-scontrol.js';
import { SHOW_JOB_1, SQUEUE_JSON } from '../testing/slurm-captured.js';

/** Slurm as the rig printed it; any other command is a test failure. */
const captured: SlurmClient = (command, args) => {
  if (command === 'scontrol' && args.join(' ') === 'show job -d 1') return SHOW_JOB_1;
  if (command === 'squeue' && args.join(' ') === '--json -j 1') return SQUEUE_JSON; // 22.05 lists every job all the same
  throw new Error(`no captured output for ${command} ${args.join(' ')}`);
};

test("a job whose name and comment hold newlines copying Slurm's own lines (QOS=top, Partition=vip, a GPU line without shards, UserId=root) changes nothing the prolog reads (real 22.05 output)", () => {
  assert.match(SHOW_JOB_1, /^ {3}Priority=1 Nice=0 Account=\(null\) QOS=top$/m, "the capture holds the user's fake line");
  assert.deepEqual(readJobFacts('1', 'gspqa', captured), { uid: 1001, qos: 'scavenger', partition: 'gpu', account: 'lab', gpus: [0], shards: 1, mpsPercent: null });
});

test("each job of squeue --json's whole list by its own id: its QOS, partition, and this node's shards, gres/mps share or whole GPU (real 22.05 output)", () => {
  assert.deepEqual(parseSqueueJson(SQUEUE_JSON, '2', 'gspqa'), { uid: 1001, qos: 'high', partition: 'gpu', account: 'lab', gpus: [0], shards: 2, mpsPercent: null });
  assert.deepEqual(parseSqueueJson(SQUEUE_JSON, '3', 'gspqc'), { uid: 1001, qos: 'normal', partition: 'mps', account: 'lab', gpus: [0], shards: null, mpsPercent: 25 });
  assert.deepEqual(parseSqueueJson(SQUEUE_JSON, '4', 'gspqb'), { uid: 1001, qos: 'normal', partition: 'gpu', account: 'lab', gpus: [0], shards: null, mpsPercent: null });
});

test("a job over two nodes: this node's own gres detail, in job_resources' node order; no QOS without accounting", () => {
  const doc = { jobs: [{ job_id: 7, user_id: 1002, qos: '', partition: 'gpu', gres_detail: ['shard:2(IDX:0)', 'gpu:a100:1(IDX:1),shard:1(IDX:1)'], job_resources: { allocated_nodes: [{ nodename: 'n1' }, { nodename: 'n2' }] } }] };
  assert.deepEqual(parseSqueueJson(JSON.stringify(doc), '7', 'n1'), { uid: 1002, qos: null, partition: 'gpu', account: null, gpus: [0], shards: 2, mpsPercent: null });
  assert.deepEqual(parseSqueueJson(JSON.stringify(doc), '7', 'n2'), { uid: 1002, qos: null, partition: 'gpu', account: null, gpus: [1], shards: 1, mpsPercent: null });
});

test('squeue output that is not JSON, lacks the job or its user is an error naming the problem', () => {
  assert.throws(() => parseSqueueJson('JobId=1 QOS=high', '1', null), /squeue --json did not print JSON/);
  assert.throws(() => parseSqueueJson(SQUEUE_JSON, '99', null), /does not list job 99/);
  assert.throws(() => parseSqueueJson('{"jobs":[{"job_id":5,"user_id":"root"}]}', '5', null), /no numeric user_id/);
  assert.throws(() => parseSqueueJson('{"errors":[]}', '5', null), /no "jobs" list/);
});

test("shards per GPU from a node's Gres (typed GPUs too); none without shards", () => {
  assert.equal(parseShardsPerGpu('NodeName=n1 Arch=x86_64\n   Gres=gpu:1,shard:4\n'), 4);
  assert.equal(parseShardsPerGpu('   Gres=gpu:a100:2,shard:a100:8\n'), 4);
  assert.equal(parseShardsPerGpu('   Gres=gpu:2\n'), null);
});

test('index lists as Slurm prints them', () => {
  assert.deepEqual(parseIndexList('0-2,5'), [0, 1, 2, 5]);
  assert.deepEqual(parseIndexList(''), []);
});

test("an account the daemon would refuse (a newline, past 64 characters) is left out and kept aside for the prolog's log, so the job is still registered; a missing one is null", () => {
  const job = (account: unknown) => JSON.stringify({ jobs: [{ job_id: 8, user_id: 1002, account, qos: 'normal', partition: 'gpu', gres_detail: ['gpu:1(IDX:0)'] }] });
  assert.deepEqual([parseSqueueJson(job('vision-lab'), '8', null).account, 'accountLeftOut' in parseSqueueJson(job('vision-lab'), '8', null)], ['vision-lab', false]);
  for (const bad of ['lab\nQOS=top', 'a'.repeat(65), 'lab account']) {
    const facts = parseSqueueJson(job(bad), '8', null);
    assert.deepEqual([facts.account, facts.accountLeftOut, facts.qos], [null, bad, 'normal'], JSON.stringify(bad));
  }
  assert.equal(parseSqueueJson(job('(null)'), '8', null).account, null);
  assert.equal(parseSqueueJson(job(undefined), '8', null).account, null);
});
