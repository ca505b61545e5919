// A real Slurm for tests (root only), from Debian's packages: munge with its own key and socket, one
// slurmctld and two slurmd on one machine (nodes on 127.0.0.1 and 127.0.0.2, each its own port, spool and
// log), a dummy GPU device file per node in gres.conf (AutoDetect=off) with gres/shard, 4 shards per GPU;
// with `mpsNode`, a third node (127.0.0.3, partition "mps") whose GPU is shared by gres/mps, mps:100.
// With `accounting`, QOS and associations are real: slurmdbd over a MariaDB of the rig's own (slurm-accounting.ts),
// enforced as a lab would (AccountingStorageEnforce=associations,qos); without it every job's QOS is (null).
// Everything lives in one temp folder and is passed by flags and SLURM_CONF; nothing under /etc is touched.
// Slurm tracks processes with proctrack/linuxproc (no cgroups to share with the machine), so the daemon
// learns a task's job from `scontrol pidinfo`. Traps: the daemons are started as `slurmctld`/`slurmd` (by
// their *-wlm file names they drop every GRES); one sharing type per node.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SlurmAccounting, type SlurmAccountingOptions } from './slurm-accounting.js';

/** Whether this machine has the Slurm and munge daemons (Debian: slurmctld slurmd slurm-client munge). */
export function slurmMissing(): string | false {
  for (const program of ['slurmctld', 'slurmd', 'sbatch', 'scontrol', 'munged']) {
    if (spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } }).status !== 0) return `${program} is not installed (apt-get install slurmctld slurmd slurm-client munge)`;
  }
  return false;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface SlurmUser {
  name: string;
  uid: number;
  gid: number;
}

export interface SlurmRigOptions {
  /** Folder the rig lives in (made and removed by it; world-readable: jobs run as other users). */
  dir: string;
  /** Short and unique: node names and the cluster name are made from it. */
  tag: string;
  /** Scripts for Prolog=, Epilog=, TaskProlog= (absent: none). */
  prolog?: string;
  epilog?: string;
  taskProlog?: string;
  /** Shards per GPU (gres/shard). */
  shards?: number;
  /** Partitions beyond the default "gpu" (each over both nodes). */
  partitions?: string[];
  /** A third node, alone in partition "mps", its GPU shared by gres/mps (Count=100) instead of shards. */
  mpsNode?: boolean;
  /** slurmdbd with these QOS and users (the users may ask for every QOS; "normal" is their default). */
  accounting?: Omit<SlurmAccountingOptions, 'dir'>;
}

export class SlurmRig {
  readonly conf: string;
  readonly nodes: [string, string];
  /** The gres/mps node (mpsNode), or null. */
  readonly mpsNode: string | null;
  readonly logDir: string;
  readonly outDir: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly accounting: SlurmAccounting | null;
  private started = false;

  constructor(readonly options: SlurmRigOptions) {
    const { dir, tag } = options;
    this.nodes = [`gs${tag}a`, `gs${tag}b`];
    this.mpsNode = options.mpsNode ? `gs${tag}c` : null;
    for (const sub of ['munge', 'state', 'spool', 'log', 'dev', 'etc', 'out']) mkdirSync(join(dir, sub), { recursive: true });
    chmodSync(dir, 0o755);
    this.conf = join(dir, 'etc', 'slurm.conf');
    this.logDir = join(dir, 'log');
    this.outDir = join(dir, 'out');
    chmodSync(this.outDir, 0o1777); // each user's job writes its own output here
    this.env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', SLURM_CONF: this.conf };
    this.accounting = options.accounting ? new SlurmAccounting({ dir, ...options.accounting }) : null;
  }

  get cluster(): string {
    return `gs${this.options.tag}`;
  }

  /** Every node: the two shard nodes, and the mps node where there is one. */
  get allNodes(): string[] {
    return this.mpsNode ? [...this.nodes, this.mpsNode] : [...this.nodes];
  }

  /** munged, slurmctld and each slurmd; resolves once sinfo shows every node idle. */
  async start(): Promise<void> {
    const { dir, shards = 4 } = this.options;
    const munge = join(dir, 'munge');
    writeFileSync(join(munge, 'key'), randomBytes(1024), { mode: 0o600 });
    chmodSync(munge, 0o755); // clients of every user reach the socket
    execFileSync('munged', ['--key-file', join(munge, 'key'), '--socket', join(munge, 'sock'), '--pid-file', join(munge, 'pid'), '--log-file', join(munge, 'log'), '--seed-file', join(munge, 'seed'), '--force'], { env: this.env });
    const [ctldPort, portA, portB, portC, dbPort, dbdPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const host = hostname();
    const [a, b] = this.nodes;
    const c = this.mpsNode;
    for (const n of this.allNodes) {
      execFileSync('mknod', ['-m', '0666', join(dir, 'dev', `${n}-nvidia0`), 'c', '1', '3']); // a character device, as slurmd wants (null's numbers: harmless)
      mkdirSync(join(dir, 'spool', n), { recursive: true });
    }
    const script = (key: string, path: string | undefined): string => (path ? `${key}=${path}\n` : '');
    writeFileSync(
      this.conf,
      `ClusterName=${this.cluster}
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctldPort}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=${join(munge, 'sock')}
CredType=cred/munge
StateSaveLocation=${join(dir, 'state')}
SlurmdSpoolDir=${join(dir, 'spool')}/%n
SlurmctldPidFile=${join(dir, 'state', 'slurmctld.pid')}
SlurmdPidFile=${join(dir, 'spool')}/slurmd.%n.pid
SlurmctldLogFile=${join(this.logDir, 'slurmctld.log')}
SlurmdLogFile=${this.logDir}/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard${c ? ',mps' : ''}
${this.accounting ? `AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=${dbdPort}\nAccountingStoragePass=${join(munge, 'sock')}\nAccountingStorageEnforce=associations,qos\n` : 'AccountingStorageType=accounting_storage/none\n'}JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SlurmctldDebug=info
SlurmdDebug=info
${script('Prolog', this.options.prolog)}${script('Epilog', this.options.epilog)}${script('TaskProlog', this.options.taskProlog)}NodeName=${a} NodeAddr=127.0.0.1 NodeHostname=${host} Port=${portA} CPUs=2 RealMemory=1000 Gres=gpu:1,shard:${shards} State=UNKNOWN
NodeName=${b} NodeAddr=127.0.0.2 NodeHostname=${host} Port=${portB} CPUs=2 RealMemory=1000 Gres=gpu:1,shard:${shards} State=UNKNOWN
${c ? `NodeName=${c} NodeAddr=127.0.0.3 NodeHostname=${host} Port=${portC} CPUs=2 RealMemory=1000 Gres=gpu:1,mps:100 State=UNKNOWN\n` : ''}PartitionName=gpu Nodes=${a},${b} Default=YES MaxTime=INFINITE State=UP
${c ? `PartitionName=mps Nodes=${c} MaxTime=INFINITE State=UP\n` : ''}${(this.options.partitions ?? []).map((p) => `PartitionName=${p} Nodes=${a},${b} MaxTime=INFINITE State=UP\n`).join('')}`,
    );
    writeFileSync(
      join(dir, 'etc', 'gres.conf'),
      `AutoDetect=off\n${this.nodes.map((n) => `NodeName=${n} Name=gpu File=${join(dir, 'dev', `${n}-nvidia0`)}\nNodeName=${n} Name=shard Count=${shards} File=${join(dir, 'dev', `${n}-nvidia0`)}\n`).join('')}${c ? `NodeName=${c} Name=gpu File=${join(dir, 'dev', `${c}-nvidia0`)}\nNodeName=${c} Name=mps Count=100 File=${join(dir, 'dev', `${c}-nvidia0`)}\n` : ''}`,
    );
    this.started = true;
    if (this.accounting) {
      await this.accounting.start(this.env, { db: dbPort, dbd: dbdPort }, join(munge, 'sock'));
      this.accounting.configure(this.env, this.cluster);
    }
    execFileSync('slurmctld', ['-f', this.conf, '-i'], { env: this.env }); // by this name, not slurmctld-wlm
    for (const n of this.allNodes) execFileSync('slurmd', ['-f', this.conf, '-N', n], { env: this.env });
    for (let i = 0; i < 150; i++) {
      const idle = new Set(this.run('sinfo', ['-h', '-N', '-o', '%N %t']).trim().split('\n').filter((l) => /\sidle$/.test(l)).map((l) => l.split(/\s+/)[0])).size; // a node shows once per partition
      if (idle === this.allNodes.length) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`Slurm's nodes did not come up idle: ${this.run('sinfo', ['-N'])}\n${this.logs()}`);
  }

  /** A Slurm client command as root, with this rig's SLURM_CONF. */
  run(command: string, args: string[]): string {
    return execFileSync(command, args, { env: this.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** `sbatch --parsable` as `user`, with the rig's SLURM_CONF: the job id. */
  submit(user: SlurmUser, args: string[]): string {
    const out = execFileSync('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', '--', 'sbatch', '--parsable', ...args], { env: this.env, cwd: this.outDir, encoding: 'utf8' });
    return out.trim().split(';')[0];
  }

  /** The job's state (RUNNING, COMPLETED…); null once slurmctld forgot it. */
  state(jobId: string): string | null {
    try {
      return /JobState=(\S+)/.exec(this.run('scontrol', ['show', 'job', jobId]))?.[1] ?? null;
    } catch {
      return null;
    }
  }

  /** Waits for the job to leave PENDING/RUNNING/COMPLETING (its epilog done): its final state. */
  async finished(jobId: string, timeoutMs = 90_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const state = this.state(jobId);
      if (state !== null && !['PENDING', 'RUNNING', 'COMPLETING', 'CONFIGURING'].includes(state)) return state;
      if (Date.now() > end) throw new Error(`Slurm job ${jobId} still ${state} after ${timeoutMs / 1000} s\n${this.logs()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Node state as sinfo shows it (idle, mix, drain…). */
  nodeStates(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const line of this.run('sinfo', ['-h', '-N', '-p', 'gpu', '-o', '%N %T']).trim().split('\n')) {
      const [node, state] = line.trim().split(/\s+/);
      if (node) out[node] = state;
    }
    return out;
  }

  output(jobId: string): string {
    const file = join(this.outDir, `${jobId}.out`);
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  logs(): string {
    const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(-20).join('\n') : '');
    return ['slurmctld.log', ...this.allNodes.map((n) => `slurmd.${n}.log`), ...(this.accounting ? ['slurmdbd.log'] : [])].map((f) => `--- ${f}\n${read(join(this.logDir, f))}`).join('\n');
  }

  /** Cancel every job, stop the daemons (each by its pid file) and munged, and remove the folder. */
  async dispose(): Promise<void> {
    const { dir } = this.options;
    if (this.started) {
      try {
        this.run('scancel', ['--full', '--state=RUNNING']);
        this.run('scancel', ['--state=PENDING']);
      } catch {
        // slurmctld is gone already
      }
      for (let i = 0; i < 40; i++) {
        try {
          if (this.run('squeue', ['-h']).trim() === '') break;
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    // in stages, each stage's daemons at once (each takes 1-3 s to stop): slurmctld reports to slurmdbd as it stops, slurmdbd to MariaDB
    const [slurmdbd, mariadbd] = this.accounting?.pidFiles ?? [];
    const stages = [[...this.allNodes.map((n) => join(dir, 'spool', `slurmd.${n}.pid`)), join(dir, 'state', 'slurmctld.pid')], ...(slurmdbd ? [[slurmdbd]] : []), [...(mariadbd ? [mariadbd] : []), join(dir, 'munge', 'pid')]];
    for (const stage of stages) await Promise.all(stage.map((file) => stopByPidFile(file, file === mariadbd ? (this.accounting?.spawnedPid ?? 0) : 0)));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGTERM to the pid in `file` (or `fallback` where it has none), SIGKILL if it still runs after 4 s. */
async function stopByPidFile(file: string, fallback: number): Promise<void> {
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : fallback;
  if (!(pid > 1)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // gone
  }
  for (let i = 0; i < 40 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 100));
  try {
    if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
  } catch {
    // ended meanwhile
  }
}
