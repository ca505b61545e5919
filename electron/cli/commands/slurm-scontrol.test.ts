// What the prolog reads of Slurm's own words: `scontrol show job -d` (as Slurm 22.05 prints it) and `scontrol show node`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandHostlist, parseIndexList, parseShardsPerGpu, parseShowJob } from './slurm-scontrol.js';

const JOB = `JobId=2 JobName=job.sh
   UserId=gsx1(1001) GroupId=gsx1(1001) MCS_label=N/A
   Priority=4294901758 Nice=0 Account=(null) QOS=high
   JobState=RUNNING Reason=None Dependency=(null)
   Partition=gpu AllocNode:Sid=localhost:17743
   NodeList=n[1-2]
   JOB_GRES=shard:2
     Nodes=n1 CPU_IDs=1 Mem=0 GRES=shard:2(IDX:0)
     Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu:a100:1(IDX:1),shard:1(IDX:1)
   TresPerNode=gres:shard:2
`;

test("a job's QOS, partition, and this node's shards and GPU come from its own node line", () => {
  assert.deepEqual(parseShowJob(JOB, 'n1'), { qos: 'high', partition: 'gpu', gpus: [0], shards: 2, mpsPercent: null });
  assert.deepEqual(parseShowJob(JOB, 'n2'), { qos: 'high', partition: 'gpu', gpus: [1], shards: 1, mpsPercent: null });
});

test("a user's own words in the job (a name or comment holding QOS= or Partition=) never choose its QOS or partition", () => {
  const text = JOB.replace('JobName=job.sh', 'JobName=x QOS=top Partition=vip').replace('   TresPerNode', '   Comment=QOS=top Partition=vip\n   TresPerNode');
  assert.deepEqual(parseShowJob(text, 'n1'), { qos: 'high', partition: 'gpu', gpus: [0], shards: 2, mpsPercent: null });
});

test('(null) is no QOS; a gres/mps job has its share', () => {
  const text = JOB.replace('QOS=high', 'QOS=(null)').replace('GRES=shard:2(IDX:0)', 'GRES=mps:50(IDX:0)');
  assert.deepEqual(parseShowJob(text, 'n1'), { qos: null, partition: 'gpu', gpus: [0], shards: null, mpsPercent: 50 });
});

test("shards per GPU from a node's Gres (typed GPUs too); none without shards", () => {
  assert.equal(parseShardsPerGpu('NodeName=n1 Arch=x86_64\n   Gres=gpu:1,shard:4\n'), 4);
  assert.equal(parseShardsPerGpu('   Gres=gpu:a100:2,shard:a100:8\n'), 4);
  assert.equal(parseShardsPerGpu('   Gres=gpu:2\n'), null);
});

test('index and host lists as Slurm prints them', () => {
  assert.deepEqual(parseIndexList('0-2,5'), [0, 1, 2, 5]);
  assert.deepEqual(parseIndexList(''), []);
  assert.deepEqual(expandHostlist('n[01-03],gpu7'), ['n01', 'n02', 'n03', 'gpu7']);
});
