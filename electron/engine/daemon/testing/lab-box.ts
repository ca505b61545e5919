// A lab box for tests (root only): users the test creates, a box daemon in its own process on
// simulated GPUs and a temporary socket, and clients that connect AS those users (setpriv), so
// every identity the daemon sees is the kernel's.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiMethod, ApiParams, ApiResults } from '../../../../shared/api.js';
import { CLI_ENV, CLI_PATH } from '../../../cli/testing/compiled-cli.js';
import type { FakegpuState } from '../../gpu/simulated-driver.js';
import { nativeDir } from '../../paths.js';

export const isRoot = (): boolean => process.getuid?.() === 0;

export interface LabUser {
  name: string;
  uid: number;
  gid: number;
}

export type CallOutcome<M extends ApiMethod> = { ok: true; result: ApiResults[M] } | { ok: false; error: { code: string; message: string } };

/** A request as the wire carries it. */
export interface WireRequest {
  method: ApiMethod;
  params: unknown;
}

// Sends each request in turn on one connection and prints the outcomes as one JSON line.
const CLIENT = `
const net = require('node:net');
const [path, raw] = process.argv.slice(1);
const requests = JSON.parse(raw === '-' ? require('node:fs').readFileSync(0, 'utf8') : raw);
const socket = net.connect(path);
const out = []; let buffer = ''; let next = 0;
const send = () => next < requests.length ? socket.write(JSON.stringify({ kind: 'request', id: next + 1, ...requests[next] }) + '\\n') : (process.stdout.write(JSON.stringify(out)), socket.end());
socket.on('connect', send);
socket.on('error', (e) => { process.stderr.write(String(e)); process.exit(3); });
socket.setEncoding('utf8');
socket.on('data', (d) => {
  buffer += d; let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffer.slice(0, i)); buffer = buffer.slice(i + 1);
    if (m.kind !== 'response') continue;
    out.push(m.ok ? { ok: true, result: m.result } : { ok: false, error: m.error });
    next++; send();
  }
});`;

// Subscribes to one event, sends the requests, and prints the first event heard after them.
const LISTENER = `
const net = require('node:net');
const [path, event, raw] = process.argv.slice(1);
const requests = JSON.parse(raw);
const socket = net.connect(path);
let buffer = ''; let answered = 0;
socket.on('connect', () => {
  socket.write(JSON.stringify({ kind: 'subscribe', events: [event] }) + '\\n');
  requests.forEach((r, i) => socket.write(JSON.stringify({ kind: 'request', id: i + 1, ...r }) + '\\n'));
});
socket.on('error', (e) => { process.stderr.write(String(e)); process.exit(3); });
socket.setEncoding('utf8');
socket.on('data', (d) => {
  buffer += d; let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffer.slice(0, i)); buffer = buffer.slice(i + 1);
    if (m.kind === 'response') answered++;
    else if (m.kind === 'event' && m.event === event && answered >= requests.length) { process.stdout.write(JSON.stringify(m.data)); socket.destroy(); }
  }
});`;

export class LabBox {
  readonly dir = mkdtempSync('/tmp/gpushare-lab-');
  readonly socketPath = join(this.dir, 'run', 'engine.sock');
  readonly configPath = join(this.dir, 'config.json');
  readonly dbPath = join(this.dir, 'lib', 'usage.db');
  /** A copy of the built native parts every user can read (the checkout may sit under /root). */
  readonly nativeCopy = join(this.dir, 'native');
  private readonly users: LabUser[] = [];
  private readonly groups: string[] = [];
  daemon: ChildProcess | null = null;
  output = '';

  constructor(readonly tag: string) {
    chmodSync(this.dir, 0o755);
    for (const part of ['fakegpu/build', 'fakegpu/scenarios', 'preload/build', 'nvml/build', 'spawn/build']) cpSync(join(nativeDir(), part), join(this.nativeCopy, part), { recursive: true });
    execFileSync('chmod', ['-R', 'a+rX', this.nativeCopy]);
  }

  group(name: string): string {
    const full = `gpst${this.tag}${name}`;
    execFileSync('groupadd', ['--system', full]);
    this.groups.push(full);
    return full;
  }

  user(name: string, groups: string[] = []): LabUser {
    const full = `gpst${this.tag}${name}`;
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ...(groups.length ? ['--groups', groups.join(',')] : []), full]);
    const user = { name: full, uid: Number(execFileSync('id', ['-u', full], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', full], { encoding: 'utf8' })) };
    this.users.push(user);
    return user;
  }

  /** Start `gpushare daemon` as root on this box's socket, store and config; resolves once it listens. */
  async start(config: unknown, scenario = 'h100x2-mig'): Promise<void> {
    writeFileSync(this.configPath, JSON.stringify(config));
    const env = { ...process.env, ...CLI_ENV, GPUSHARE_NATIVE_DIR: this.nativeCopy, XDG_RUNTIME_DIR: join(this.dir, 'root-rt') };
    const daemon = spawn(process.execPath, [CLI_PATH, 'daemon', '--socket', this.socketPath, '--db', this.dbPath, '--config', this.configPath, '--simulate', scenario], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.daemon = daemon;
    await new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer): void => {
        this.output += d.toString();
        if (this.output.includes('listening on')) resolve();
      };
      daemon.stdout!.on('data', seen);
      daemon.stderr!.on('data', seen);
      daemon.once('exit', (code) => reject(new Error(`gpushare daemon exited (${code}): ${this.output}`)));
    });
  }

  /** Requests in order on one connection made by `user` (null: root), as the kernel sees that user. */
  async calls(user: LabUser | null, requests: WireRequest[]): Promise<Array<CallOutcome<ApiMethod>>> {
    const json = JSON.stringify(requests);
    const onStdin = json.length > 64 * 1024; // past what one argument may hold
    const args = ['-e', CLIENT, this.socketPath, onStdin ? '-' : json];
    const [command, argv] = user ? ['setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', process.execPath, ...args]] : [process.execPath, args];
    return new Promise((resolve, reject) => {
      const child = execFile(command as string, argv as string[], { cwd: '/', maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`client as ${user?.name ?? 'root'} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as Array<CallOutcome<ApiMethod>>);
      });
      child.stdin?.end(onStdin ? json : undefined);
    });
  }

  /** The first `event` a connection made by `user` hears after its requests are answered (null: root). */
  async firstEvent(user: LabUser | null, event: string, requests: WireRequest[]): Promise<unknown> {
    const args = ['-e', LISTENER, this.socketPath, event, JSON.stringify(requests)];
    const [command, argv] = user ? ['setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', process.execPath, ...args]] : [process.execPath, args];
    return new Promise((resolve, reject) => {
      execFile(command as string, argv as string[], { cwd: '/', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`listener as ${user?.name ?? 'root'} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout));
      });
    });
  }

  async call<M extends ApiMethod>(user: LabUser | null, method: M, params: ApiParams<M>): Promise<CallOutcome<M>> {
    const [outcome] = await this.calls(user, [{ method, params }]);
    return outcome as CallOutcome<M>;
  }

  /** The result, or a thrown error with the engine's words. */
  async ok<M extends ApiMethod>(user: LabUser | null, method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
    const outcome = await this.call(user, method, params);
    if (!outcome.ok) throw new Error(`${method} as ${user?.name ?? 'root'}: ${outcome.error.code}: ${outcome.error.message}`);
    return outcome.result;
  }

  /** The simulated box's state, as its driver holds it (processes, checkpoints). */
  dump(scenario = 'h100x2-mig'): FakegpuState {
    const state = join(this.dir, 'run', `sim-${scenario}.state`);
    return JSON.parse(execFileSync(join(this.nativeCopy, 'fakegpu', 'build', 'fakegpu'), ['dump', '--state', state], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as FakegpuState;
  }

  /** A simulated GPU process `user` starts on their own, outside gpushare (unmanaged). */
  runAs(user: LabUser, fakejobArgs: string[], scenario = 'h100x2-mig'): ChildProcess {
    const env = { PATH: '/usr/bin:/bin', GPUSHARE_FAKEGPU_STATE: join(this.dir, 'run', `sim-${scenario}.state`), LD_LIBRARY_PATH: join(this.nativeCopy, 'fakegpu', 'build') };
    const child = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', this.fakejob, ...fakejobArgs], { env, cwd: '/', stdio: 'ignore' });
    child.on('error', () => undefined);
    return child;
  }

  /** Run `file` as `user` (setpriv, their groups) and return its stdout; throws with its stderr when it fails. */
  as(user: LabUser, file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
    return execFileSync('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', '--', file, ...args], {
      env: options.env ?? { PATH: '/usr/bin:/bin' },
      cwd: options.cwd ?? '/',
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 16 * 1024 * 1024,
    });
  }

  /** The simulated fakejob every user can run. */
  get fakejob(): string {
    return join(this.nativeCopy, 'fakegpu', 'build', 'fakejob');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const daemon = this.daemon;
    if (!daemon || daemon.exitCode !== null || daemon.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      daemon.once('exit', () => resolve());
      daemon.kill(signal);
    });
  }

  async dispose(): Promise<void> {
    await this.stop('SIGKILL');
    const quietly = (command: string, args: string[]): void => {
      try {
        execFileSync(command, args, { stdio: 'ignore' });
      } catch {
        // nothing left to kill or remove
      }
    };
    for (const user of this.users) quietly('pkill', ['-CONT', '-u', String(user.uid)]);
    for (const user of this.users) quietly('pkill', ['-KILL', '-u', String(user.uid)]);
    for (const user of this.users) quietly('userdel', [user.name]);
    for (const group of this.groups) quietly('groupdel', [group]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
