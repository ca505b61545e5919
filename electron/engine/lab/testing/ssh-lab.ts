// A lab of boxes on this machine for tests (root only), each as real as it can be here: its own
// mount namespace (`unshare -m`, a private tmpfs on /run) holding its own box daemon at the default
// /run/gpushare/engine.sock on its own simulated scenario, and its own Debian sshd on its own
// loopback address (127.0.0.2, 127.0.0.3, …). Users, their keys and the host keys are made here;
// dispose() leaves nothing behind: processes, users, files.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { copyApp } from '../../../cli/app-copy.js';
import { CLI_ENV, CLI_PATH } from '../../../cli/testing/compiled-cli.js';
import { nativeDir } from '../../paths.js';

export const isRoot = (): boolean => process.getuid?.() === 0;

/** Why this machine cannot run the lab tests, or null. */
export function sshLabMissing(): string | null {
  if (!isRoot()) return 'needs root (users, namespaces, sshd)';
  for (const program of ['/usr/sbin/sshd', '/usr/bin/ssh', '/usr/bin/ssh-keygen', '/usr/bin/unshare', '/usr/bin/nsenter', '/usr/bin/setpriv']) {
    if (!existsSync(program)) return `${program} is missing (apt-get install openssh-server openssh-client util-linux)`;
  }
  return null;
}

export interface LabPerson {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export interface BoxOptions {
  scenario: string;
  /** The box's sshd forwards unix sockets (default true); false: the hub must use `gpushare relay --stdio`. */
  forwarding?: boolean;
  /** The daemon's /etc/gpushare/config.json content. */
  config?: unknown;
}

const run = (command: string, args: string[]): string => execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export class SshLab {
  readonly dir = mkdtempSync('/tmp/gpushare-sshlab-');
  /** Native parts every user can read (the checkout may sit under /root). */
  readonly nativeCopy = join(this.dir, 'native');
  /** The `gpushare` command every user on every box can run (a script: node and the CLI). */
  readonly gpushare = join(this.dir, 'bin', 'gpushare');
  readonly people: LabPerson[] = [];
  readonly boxes: SshBox[] = [];
  private readonly tag = Math.random().toString(36).slice(2, 6);

  constructor() {
    chmodSync(this.dir, 0o755);
    for (const part of ['fakegpu/build', 'fakegpu/scenarios', 'preload/build', 'nvml/build', 'spawn/build']) cpSync(join(nativeDir(), part), join(this.nativeCopy, part), { recursive: true });
    mkdirSync(join(this.dir, 'authorized'), { mode: 0o755 });
    mkdirSync(join(this.dir, 'bin'), { mode: 0o755 });
    writeFileSync(this.gpushare, `#!/bin/sh\nexec ${process.execPath} ${this.cliPath()} "$@"\n`, { mode: 0o755 });
    run('chmod', ['-R', 'a+rX', this.dir]);
  }

  /** The CLI as every user can read it: the checkout's when it is open to others, else a copy of the compiled tree. */
  private cliPath(): string {
    try {
      run('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', 'test', '-r', CLI_PATH]);
      run('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', 'test', '-r', join(CLI_ENV.GPUSHARE_DIST, 'electron', 'cli', 'main.js')]);
      return `${CLI_PATH}`;
    } catch {
      const app = join(this.dir, 'app');
      copyApp(app);
      return join(app, 'electron', 'cli', 'gpushare.js');
    }
  }

  /** The fakejob every user can run. */
  get fakejob(): string {
    return join(this.nativeCopy, 'fakegpu', 'build', 'fakejob');
  }

  /** A person with a home, a shell and an ssh key of their own, allowed in on every box. */
  person(short: string, options: { key?: boolean } = {}): LabPerson {
    const name = `gplab${this.tag}${short}`;
    const home = join(this.dir, 'home', name);
    mkdirSync(join(this.dir, 'home'), { recursive: true, mode: 0o755 });
    run('useradd', ['--system', '--create-home', '--home-dir', home, '--shell', '/bin/sh', name]);
    run('usermod', ['-p', '*', name]); // no password, but not locked: sshd lets a locked account in by no key
    const person = { name, uid: Number(run('id', ['-u', name])), gid: Number(run('id', ['-g', name])), home };
    this.people.push(person);
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    mkdirSync(join(home, '.config', 'gpushare'), { recursive: true, mode: 0o755 });
    if (options.key !== false) {
      run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', join(home, '.ssh', 'id_ed25519')]);
      writeFileSync(join(this.dir, 'authorized', name), readFileSync(join(home, '.ssh', 'id_ed25519.pub')), { mode: 0o644 });
    }
    run('chown', ['-R', `${person.uid}:${person.gid}`, home]);
    return person;
  }

  /** A box: its namespace, daemon and sshd, started. */
  async box(name: string, options: BoxOptions): Promise<SshBox> {
    const box = new SshBox(this, name, 2 + this.boxes.length, options);
    this.boxes.push(box);
    await box.start();
    return box;
  }

  /**
   * The person's own ssh config, known hosts and lab list (every box by its alias), owned by them;
   * and the same for root's in-process hub (a copy of their key, in files root owns: ssh refuses a
   * config another user owns). Returns the root-owned ssh config.
   */
  writeClientFiles(person: LabPerson, extraBoxes: Array<{ name: string; ssh?: string; socket?: string; gpushare?: string }> = []): { rootSsh: string; rootLab: string } {
    const known = this.boxes.map((b) => `[${b.address}]:${b.port} ${readFileSync(join(b.dir, 'host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}`).join('\n') + '\n';
    const config = (key: string, knownFile: string): string =>
      this.boxes.map((b) => `Host ${b.name}\n  HostName ${b.address}\n  Port ${b.port}\n  User ${person.name}\n  IdentityFile ${key}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${knownFile}\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n`).join('\n');
    const lab = JSON.stringify({ boxes: [...this.boxes.map((b) => ({ name: b.name, ssh: b.name, gpushare: this.gpushare })), ...extraBoxes] }, null, 2);
    writeFileSync(join(person.home, '.ssh', 'known_hosts'), known, { mode: 0o644 });
    writeFileSync(join(person.home, '.ssh', 'config'), config('~/.ssh/id_ed25519', '~/.ssh/known_hosts'), { mode: 0o600 });
    writeFileSync(join(person.home, '.config', 'gpushare', 'lab.json'), lab, { mode: 0o644 });
    run('chown', ['-R', `${person.uid}:${person.gid}`, person.home]);
    const rootDir = join(this.dir, 'root-client');
    mkdirSync(rootDir, { recursive: true, mode: 0o700 });
    cpSync(join(person.home, '.ssh', 'id_ed25519'), join(rootDir, 'id'));
    chownSync(join(rootDir, 'id'), 0, 0);
    chmodSync(join(rootDir, 'id'), 0o600);
    writeFileSync(join(rootDir, 'known_hosts'), known);
    writeFileSync(join(rootDir, 'ssh_config'), config(join(rootDir, 'id'), join(rootDir, 'known_hosts')), { mode: 0o600 });
    const rootSsh = join(rootDir, 'ssh');
    writeFileSync(rootSsh, `#!/bin/sh\nexec /usr/bin/ssh -F ${join(rootDir, 'ssh_config')} "$@"\n`, { mode: 0o700 });
    writeFileSync(join(rootDir, 'lab.json'), lab);
    return { rootSsh, rootLab: join(rootDir, 'lab.json') };
  }

  /** Run `gpushare ARGS` as the person, in their own environment (HOME, their ssh config and lab list); never throws. */
  cliAs(person: LabPerson, args: string[], options: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<{ status: number; stdout: string; stderr: string }> {
    const env = { PATH: '/usr/bin:/bin', HOME: person.home, USER: person.name, LOGNAME: person.name, XDG_RUNTIME_DIR: join(person.home, 'rt'), GPUSHARE_LAB_FILE: join(this.dir, 'no-admin-lab.json'), ...CLI_ENV, ...options.env };
    mkdirSync(join(person.home, 'rt'), { recursive: true, mode: 0o700 });
    chownSync(join(person.home, 'rt'), person.uid, person.gid);
    return new Promise((resolve) => {
      const child = spawn('setpriv', ['--reuid', String(person.uid), '--regid', String(person.gid), '--init-groups', '--', this.gpushare, ...args], { env, cwd: options.cwd ?? person.home, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ status: code ?? -1, stdout, stderr });
      });
    });
  }

  async dispose(): Promise<void> {
    for (const box of this.boxes) await box.dispose();
    const quietly = (command: string, args: string[]): void => {
      try {
        execFileSync(command, args, { stdio: 'ignore' });
      } catch {
        // nothing left to kill or remove
      }
    };
    for (const p of this.people) quietly('pkill', ['-KILL', '-u', String(p.uid)]);
    for (const p of this.people) quietly('userdel', [p.name]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A free TCP port on this address (the box's sshd listens there). */
function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export class SshBox {
  readonly dir: string;
  readonly address: string;
  port = 0;
  /** The process that holds the box's mount namespace (sleep, in a private /run). */
  private holder: ChildProcess | null = null;
  daemon: ChildProcess | null = null;
  private sshd: ChildProcess | null = null;
  output = '';

  constructor(
    private readonly lab: SshLab,
    readonly name: string,
    index: number,
    readonly options: BoxOptions,
  ) {
    this.dir = join(lab.dir, 'boxes', name);
    this.address = `127.0.0.${index}`;
    mkdirSync(join(this.dir, 'lib'), { recursive: true, mode: 0o755 });
  }

  get pid(): number {
    return this.holder!.pid!;
  }

  /** The box's mount namespace, as /proc names it: a process of the box shows the same. */
  get mountNamespace(): string {
    return readlinkSync(`/proc/${this.pid}/ns/mnt`);
  }

  async start(): Promise<void> {
    this.port = await freePort(this.address);
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(this.dir, 'host_key')]);
    writeFileSync(join(this.dir, 'config.json'), JSON.stringify(this.options.config ?? {}));
    const holder = spawn('unshare', ['-m', '--propagation', 'private', '--', 'sh', '-c', 'mount -t tmpfs -o mode=755 tmpfs /run && mkdir -m 755 /run/sshd && echo ready && exec sleep 1000000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.holder = holder;
    await waitFor(holder, 'ready', `${this.name}'s namespace`);
    const people = this.lab.people.map((p) => p.name).join(' ');
    writeFileSync(
      join(this.dir, 'sshd_config'),
      [
        `ListenAddress ${this.address}:${this.port}`,
        `HostKey ${join(this.dir, 'host_key')}`,
        'PidFile none',
        `AuthorizedKeysFile ${join(this.lab.dir, 'authorized', '%u')}`,
        '# the keys lie under /tmp, which everyone may write: StrictModes would refuse them',
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin no',
        `AllowStreamLocalForwarding ${this.options.forwarding === false ? 'no' : 'yes'}`,
        'X11Forwarding no',
        `AllowUsers ${people}`,
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    this.sshd = spawn('nsenter', ['-t', String(this.pid), '-m', '--', '/usr/sbin/sshd', '-D', '-e', '-f', join(this.dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.sshd.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    await this.startDaemon();
    await this.until(() => this.listening(), `${this.name}'s sshd to listen on ${this.address}:${this.port}`);
  }

  private listening(): boolean {
    try {
      const hex = this.port.toString(16).toUpperCase().padStart(4, '0');
      const addr = this.address.split('.').reverse().map((n) => Number(n).toString(16).toUpperCase().padStart(2, '0')).join('');
      return readFileSync('/proc/net/tcp', 'utf8').includes(`${addr}:${hex} 00000000:0000 0A`);
    } catch {
      return false;
    }
  }

  private async until(ok: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (ok()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`waited 20 s for ${what}: ${this.output}`);
  }

  /** `gpushare daemon` as root inside the box's namespace, at the default socket; resolves once it listens. */
  async startDaemon(): Promise<void> {
    const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, GPUSHARE_NATIVE_DIR: this.lab.nativeCopy, XDG_RUNTIME_DIR: join(this.dir, "root-rt") };
    delete env.GPUSHARE_DAEMON_SOCKET;
    delete env.GPUSHARE_SOCKET;
    const daemon = spawn('nsenter', ['-t', String(this.pid), '-m', '--', process.execPath, CLI_PATH, 'daemon', '--db', join(this.dir, 'lib', 'usage.db'), '--config', join(this.dir, 'config.json'), '--simulate', this.options.scenario], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.daemon = daemon;
    await waitFor(daemon, 'listening on', `${this.name}'s daemon`, (d) => (this.output += d));
  }

  /** Stop the daemon (SIGKILL: as if it died). */
  async killDaemon(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const daemon = this.daemon;
    if (!daemon || daemon.exitCode !== null || daemon.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      daemon.once('exit', () => resolve());
      daemon.kill(signal);
    });
  }

  /** Run a command inside the box as a person (their uid, groups), with the box's simulated GPUs in reach. */
  spawnAs(person: LabPerson, argv: string[]): ChildProcess {
    const env = { PATH: '/usr/bin:/bin', HOME: person.home, GPUSHARE_FAKEGPU_STATE: `/run/gpushare/sim-${this.options.scenario}.state`, LD_LIBRARY_PATH: join(this.lab.nativeCopy, 'fakegpu', 'build') };
    const child = spawn('nsenter', ['-t', String(this.pid), '-m', '--', 'setpriv', '--reuid', String(person.uid), '--regid', String(person.gid), '--init-groups', '--', ...argv], { env, cwd: '/', stdio: 'ignore' });
    child.on('error', () => undefined);
    return child;
  }

  /** The same, to its end: its status and output. */
  execAs(person: LabPerson, argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
    const env = { PATH: '/usr/bin:/bin', HOME: person.home, ...CLI_ENV };
    return new Promise((resolve) => {
      const child = spawn('nsenter', ['-t', String(this.pid), '-m', '--', 'setpriv', '--reuid', String(person.uid), '--regid', String(person.gid), '--init-groups', '--', ...argv], { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
    });
  }

  /** The simulated driver's execution record of one GPU (one GPU instance of it with `gi`), as fakegpu prints it. */
  kernelRecords(device: number, gi?: number): Array<{ pid: number; enqueueNs: number; startNs: number; endNs: number }> {
    const args = ['execlog', '--state', `/run/gpushare/sim-${this.options.scenario}.state`, '--device', String(device), ...(gi === undefined ? [] : ['--mig', String(gi)])];
    return execFileSync('nsenter', ['-t', String(this.pid), '-m', '--', join(this.lab.nativeCopy, 'fakegpu', 'build', 'fakegpu'), ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { pid: number; enqueueNs: number; startNs: number; endNs: number });
  }

  /** Hide `dir` inside the box (an empty tmpfs over it): a path that exists here and not there. */
  hide(dir: string): void {
    run('nsenter', ['-t', String(this.pid), '-m', '--', 'mount', '-t', 'tmpfs', '-o', 'mode=755', 'tmpfs', dir]);
  }

  async dispose(): Promise<void> {
    await this.killDaemon();
    for (const child of [this.sshd, this.holder]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        });
      }
    }
  }
}

function waitFor(child: ChildProcess, word: string, what: string, also: (text: string) => void = () => undefined): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer): void => {
      output += d.toString();
      also(d.toString());
      if (output.includes(word)) resolve();
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${output}`)));
  });
}

