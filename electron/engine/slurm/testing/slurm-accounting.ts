// Slurm accounting for tests (root only), from Debian's packages: a MariaDB of the test's own (its datadir,
// socket and pid under the rig's folder, run as the mysql user, TCP on a loopback port) and a slurmdbd over it,
// so QOS and associations are real: sacctmgr makes the cluster, a "lab" account, the QOS and the users.
// slurmdbd finds its slurmdbd.conf beside SLURM_CONF's slurm.conf (0600, owned by SlurmUser root, as it insists).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/** Why this machine cannot run Slurm accounting (Debian: slurmdbd mariadb-server), or false. */
export function accountingMissing(): string | false {
  for (const program of ['mariadb-install-db', 'mariadbd', 'mariadb-admin', 'slurmdbd', 'sacctmgr']) {
    if (spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore', env: { PATH } }).status !== 0) return `${program} is not installed (apt-get install slurmdbd mariadb-server)`;
  }
  if (spawnSync('id', ['-u', 'mysql'], { stdio: 'ignore', env: { PATH } }).status !== 0) return 'no mysql user (apt-get install mariadb-server makes it)';
  return false;
}

export interface SlurmQos {
  name: string;
  /** Slurm's own QOS priority (its scheduling order, not gpushare's lane). */
  priority: number;
}

export interface SlurmAccountingOptions {
  /** The rig's folder: MariaDB lives in its mariadb/, slurmdbd's conf in its etc/ beside slurm.conf. */
  dir: string;
  /** QOS beyond Slurm's own "normal"; every user may ask for each, "normal" stays the default. */
  qos: SlurmQos[];
  /** Users (by name) associated with the "lab" account. */
  users: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class SlurmAccounting {
  private readonly dbDir: string;
  private readonly runDir: string;
  private mariadbPid = 0;
  private readonly password = randomBytes(16).toString('hex');

  constructor(readonly options: SlurmAccountingOptions) {
    this.dbDir = join(options.dir, 'mariadb', 'data');
    this.runDir = join(options.dir, 'mariadb', 'run');
  }

  /** The pid files to stop by, in order: slurmdbd before the database it writes to. */
  get pidFiles(): string[] {
    return [join(this.options.dir, 'state', 'slurmdbd.pid'), join(this.runDir, 'mariadbd.pid')];
  }

  get mariadbLog(): string {
    return join(this.runDir, 'mariadbd.err');
  }

  get slurmdbdLog(): string {
    return join(this.options.dir, 'log', 'slurmdbd.log');
  }

  /** MariaDB on 127.0.0.1:dbPort, then slurmdbd on 127.0.0.1:dbdPort; slurm.conf (SLURM_CONF) must already name dbdPort. */
  async start(env: NodeJS.ProcessEnv, ports: { db: number; dbd: number }, mungeSocket: string): Promise<void> {
    const mysql = { uid: Number(execFileSync('id', ['-u', 'mysql'], { encoding: 'utf8', env: { PATH } })), gid: Number(execFileSync('id', ['-g', 'mysql'], { encoding: 'utf8', env: { PATH } })) };
    for (const d of [this.dbDir, this.runDir]) {
      mkdirSync(d, { recursive: true });
      chownSync(d, mysql.uid, mysql.gid);
    }
    chmodSync(this.dbDir, 0o700);
    execFileSync('mariadb-install-db', ['--no-defaults', `--datadir=${this.dbDir}`, '--user=mysql', '--auth-root-authentication-method=socket', '--skip-test-db', '--skip-name-resolve'], { env: { PATH }, cwd: '/', stdio: 'ignore', timeout: 60_000 });
    const init = join(this.runDir, 'init.sql');
    writeFileSync(init, `CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '${this.password}';\nGRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';\n`, { mode: 0o600 });
    chownSync(init, mysql.uid, mysql.gid);
    const mariadbd = spawn(
      'mariadbd',
      ['--no-defaults', `--datadir=${this.dbDir}`, '--user=mysql', `--socket=${join(this.runDir, 'mariadbd.sock')}`, `--pid-file=${join(this.runDir, 'mariadbd.pid')}`, `--log-error=${this.mariadbLog}`, '--bind-address=127.0.0.1', `--port=${ports.db}`, '--skip-name-resolve', `--init-file=${init}`, '--skip-log-bin', '--innodb-buffer-pool-size=64M', '--innodb-flush-log-at-trx-commit=0', '--innodb-use-native-aio=0'],
      { env: { PATH }, cwd: '/', stdio: 'ignore', detached: true },
    );
    mariadbd.unref();
    this.mariadbPid = mariadbd.pid ?? 0;
    await this.until('MariaDB answers', () => spawnSync('mariadb-admin', ['--no-defaults', `--socket=${join(this.runDir, 'mariadbd.sock')}`, 'ping'], { env: { PATH }, stdio: 'ignore', timeout: 5000 }).status === 0, () => this.tail(this.mariadbLog));
    const dbdConf = join(this.options.dir, 'etc', 'slurmdbd.conf');
    writeFileSync(
      dbdConf,
      `AuthType=auth/munge
AuthInfo=socket=${mungeSocket}
DbdAddr=127.0.0.1
DbdHost=${hostname()}
DbdPort=${ports.dbd}
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=${ports.db}
StorageUser=slurm
StoragePass=${this.password}
PidFile=${this.pidFiles[0]}
LogFile=${this.slurmdbdLog}
DebugLevel=info
`,
      { mode: 0o600 },
    );
    chmodSync(dbdConf, 0o600);
    execFileSync('slurmdbd', [], { env, stdio: 'ignore', timeout: 30_000 });
    await this.until('slurmdbd answers', () => spawnSync('sacctmgr', ['-n', 'show', 'cluster'], { env, stdio: 'ignore', timeout: 5000 }).status === 0, () => this.tail(this.slurmdbdLog));
  }

  /** The cluster, the QOS, a "lab" account and its users, as an administrator would with `sacctmgr -i`. */
  configure(env: NodeJS.ProcessEnv, cluster: string): void {
    const sacctmgr = (...args: string[]): string => execFileSync('sacctmgr', ['-i', ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    sacctmgr('add', 'cluster', cluster);
    const { qos, users } = this.options;
    for (const q of qos) sacctmgr('add', 'qos', q.name, `Priority=${q.priority}`);
    sacctmgr('add', 'account', 'lab', `Cluster=${cluster}`, 'Description=lab', 'Organization=lab');
    if (users.length > 0) sacctmgr('add', 'user', users.join(','), 'Account=lab', `Cluster=${cluster}`, `QOS=${['normal', ...qos.map((q) => q.name)].join(',')}`, 'DefaultQOS=normal');
  }

  /** MariaDB's pid where its pid file is not written yet (a start that failed early). */
  get spawnedPid(): number {
    return this.mariadbPid;
  }

  private tail(file: string): string {
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-15).join('\n') : `(no ${file})`;
  }

  private async until(what: string, ready: () => boolean, detail: () => string): Promise<void> {
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(200)) if (ready()) return;
    throw new Error(`${what}: not within 30 s\n${detail()}`);
  }
}
