// How the hub reaches one box: its daemon's socket directly, or over OpenSSH as the person
// (their keys, agent and ~/.ssh/config): the daemon's socket forwarded to a private local socket,
// or, where the box refuses to forward, `gpushare relay --stdio` run there. No port is opened and
// no token exists: on the box the daemon sees the person's own uid through the kernel.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { BoxRoute, BoxVia, LabBoxSpec } from '../../../shared/lab.js';
import { ensurePrivateDir } from '../paths.js';
import { streamClient, type BoxClient } from './box-client.js';

export interface BoxLink {
  client: BoxClient;
  via: BoxVia;
  /** Resolves once, when the link is gone, with why in words ("ssh: Connection refused"). */
  ended: Promise<string>;
  /** End it: the connection, and the ssh it runs over. */
  close(): void;
  /** The box's sshd said it forwards no sockets ("administratively prohibited"): the relay is the way there. */
  forwardingRefused?: boolean;
}

export interface LinkOptions {
  /** A 0700 directory of the person's for the forwarded sockets. */
  socketDir: string;
  /** The ssh program (default "ssh" on the PATH). */
  ssh?: string;
  /** Give up on one try after this long (default 15 s). */
  timeoutMs?: number;
  /** Skip forwarding: the box refused it before. */
  relayOnly?: boolean;
}

/** Why a try failed, in words; `forwardRefused`: the box's sshd will not forward sockets, the relay may still work. */
export class LinkError extends Error {
  constructor(
    message: string,
    readonly forwardRefused = false,
  ) {
    super(message);
  }
}

/** Connect to the box; the link is answered once the daemon answered session.whoami over it. */
export async function openBoxLink(box: LabBoxSpec, options: LinkOptions): Promise<BoxLink> {
  const route = box.route;
  if (route.kind === 'socket') return socketLink(route.path, 'socket', () => undefined, options);
  if (options.relayOnly) return relayLink(route, options);
  try {
    return await forwardLink(box.name, route, options);
  } catch (error) {
    if (!(error instanceof LinkError && error.forwardRefused)) throw error;
    // sshd refused the socket (forwarding off there), or nothing answers on it: the relay runs on the box and says which
    try {
      const link = await relayLink(route, options);
      // only a refusal is for good: a daemon that was not answering yet may answer through the tunnel next time
      link.forwardingRefused = /administratively prohibited/.test(error.message);
      return link;
    } catch (relayError) {
      if (relayError instanceof LinkError && /not found|No such file/.test(relayError.message)) throw new LinkError(`${error.message}; and no gpushare relay there: ${relayError.message}`);
      throw relayError;
    }
  }
}

/** The local end of a box's forwarded socket, in the person's private directory. */
export function forwardedSocketPath(socketDir: string, box: string): string {
  return join(socketDir, `${box}.${process.pid}.sock`); // a second hub of the person's (lab ps beside the console) has its own
}

/** ssh could not open the forwarded socket on the box: sshd refused it, or nothing listens there. */
const FORWARD_FAILED = /channel \d+: open failed/;

// LogLevel INFO: a person's LogLevel ERROR or QUIET would hide why a forwarded channel failed
const SSH_OPTIONS = ['-o', 'LogLevel=INFO', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=3'];

async function forwardLink(name: string, route: Extract<BoxRoute, { kind: 'ssh' }>, options: LinkOptions): Promise<BoxLink> {
  ensurePrivateDir(options.socketDir);
  const local = forwardedSocketPath(options.socketDir, name);
  removeStale(local);
  // the local socket is made 0600 (StreamLocalBindMask) in a 0700 directory: only the person can use it
  const ssh = spawnSsh(options, ['-N', '-o', 'ExitOnForwardFailure=yes', '-o', 'StreamLocalBindUnlink=yes', '-o', 'StreamLocalBindMask=0177', '-L', `${local}:${route.socket}`, '--', route.destination]);
  const stop = (): void => {
    ssh.child.kill('SIGTERM');
    removeStale(local);
  };
  // a tunnel that failed is gone before the relay is tried: never two sshes of one box at once
  const stopAndWait = async (): Promise<void> => {
    const exited = ssh.child.exitCode !== null || ssh.child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => ssh.child.once('exit', () => resolve()));
    stop();
    const late = setTimeout(() => ssh.child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(late);
  };
  try {
    await ssh.until(() => exists(local), options.timeoutMs ?? 15_000);
  } catch (error) {
    await stopAndWait();
    throw error;
  }
  try {
    return await socketLink(local, 'ssh-forward', stop, options, () => ssh.said());
  } catch (error) {
    await stopAndWait();
    // logged in, but the socket there did not answer through the tunnel: refused, or no daemon (the relay tells which)
    if (error instanceof LinkError) throw new LinkError(error.message, true);
    throw error;
  }
}

function relayLink(route: Extract<BoxRoute, { kind: 'ssh' }>, options: LinkOptions): Promise<BoxLink> {
  // ssh hands the remote command to the person's shell there: the socket path is quoted for it
  const ssh = spawnSsh(options, ['-T', '--', route.destination, `${route.gpushare} relay --stdio --socket ${shellQuote(route.socket)}`]);
  let settle: (why: string) => void = () => undefined;
  const ended = new Promise<string>((resolve) => (settle = resolve));
  const close = (): void => {
    ssh.child.kill('SIGTERM');
  };
  const client = streamClient(ssh.child.stdout!, ssh.child.stdin!, (reason) => settle(ssh.said() ?? reason), close);
  ssh.child.once('exit', () => setImmediate(() => settle(ssh.said() ?? 'ssh ended')));
  return answered({ client, via: 'ssh-relay', ended, close: () => client.close() }, options, () => ssh.said());
}

function socketLink(path: string, via: BoxVia, onClose: () => void, options: LinkOptions, sshSaid?: () => string | null): Promise<BoxLink> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const failed = (error: NodeJS.ErrnoException): void => reject(new LinkError(`${path}: ${socketProblem(path, error)}`));
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.removeListener('error', failed);
      let settle: (why: string) => void = () => undefined;
      const ended = new Promise<string>((r) => (settle = r));
      const close = (): void => {
        socket.destroy();
        onClose();
      };
      // the daemon going away closes the connection; what ssh says about it (a moment later) is the better reason
      const client = streamClient(socket, socket, (reason) => void sshWordsSoon(sshSaid).then((said) => settle(said ?? (reason === 'the connection closed' ? 'the daemon closed the connection' : reason))), close);
      answered({ client, via, ended, close: () => client.close() }, options, sshSaid).then(resolve, reject);
    });
  });
}

/** What ssh says within half a second, or null (no ssh, or it said nothing). */
async function sshWordsSoon(sshSaid: (() => string | null) | undefined): Promise<string | null> {
  if (!sshSaid) return null;
  for (let i = 0; i < 20 && sshSaid() === null; i++) await new Promise((r) => setTimeout(r, 25));
  return sshSaid();
}

/** The link once the daemon answered over it; a link that ends first fails with ssh's words. */
async function answered(link: BoxLink, options: LinkOptions, sshSaid?: () => string | null): Promise<BoxLink> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      link.client.call('session.whoami', {}),
      link.ended.then((why) => Promise.reject(new LinkError(why, FORWARD_FAILED.test(sshSaid?.() ?? '')))),
      new Promise((_r, reject) => (timer = setTimeout(() => reject(new LinkError(`no answer within ${(options.timeoutMs ?? 15_000) / 1000} s`)), options.timeoutMs ?? 15_000))),
    ]);
    return link;
  } catch (error) {
    link.close();
    if (error instanceof LinkError) throw error;
    // the request failed because the link closed: the reason the link gives is the one to show
    const why = await Promise.race([link.ended, new Promise<string>((r) => setTimeout(() => r((error as Error).message), 200))]);
    throw new LinkError(why, FORWARD_FAILED.test(sshSaid?.() ?? ''));
  } finally {
    clearTimeout(timer);
  }
}

interface SshProcess {
  child: ChildProcess;
  /** ssh's last words on stderr, cleaned ("ssh: Permission denied (publickey)"), or null. */
  said(): string | null;
  /** Wait until `ready()` holds, ssh exits (its last words), or the time is up. */
  until(ready: () => boolean, ms: number): Promise<void>;
}

const SETPRIV = '/usr/bin/setpriv';

/** ssh's stderr kept for the reason: at most this many bytes of its latest output. */
const SSH_STDERR_KEPT = 4096;

function spawnSsh(options: LinkOptions, args: string[]): SshProcess {
  const ssh = [options.ssh ?? 'ssh', ...SSH_OPTIONS, ...args];
  // ended with the hub, however it ends: an ssh -N left behind would hold a login and a socket open
  const command = existsSync(SETPRIV) ? [SETPRIV, '--pdeathsig', 'TERM', '--', ...ssh] : ssh;
  // the person's own environment on purpose: their agent (SSH_AUTH_SOCK), HOME and config reach ssh; the hub runs as the person, never as root
  const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: process.env });
  let stderr = '';
  let spawnError: string | null = null;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-SSH_STDERR_KEPT);
  });
  child.on('error', (error: NodeJS.ErrnoException) => {
    spawnError = error.code === 'ENOENT' ? `ssh: not found (install openssh-client)` : `ssh: ${error.message}`;
  });
  const said = (): string | null => spawnError ?? sshWords(stderr);
  return {
    child,
    said,
    until(ready, ms) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = setInterval(() => {
          if (ready()) finish(null);
          else if (child.exitCode !== null || child.signalCode !== null || spawnError) finish(said() ?? `ssh exited (${child.exitCode ?? child.signalCode})`);
          else if (Date.now() - started > ms) finish(`ssh: no connection within ${ms / 1000} s`);
        }, 25);
        const finish = (problem: string | null): void => {
          clearInterval(poll);
          if (problem === null) resolve();
          else reject(new LinkError(problem));
        };
      });
    },
  };
}

/** ssh's last meaningful line, as "ssh: …", without the "user@host: " it starts some with. */
export function sshWords(stderr: string): string | null {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^Warning: Permanently added/.test(l) && !/^Could not chdir to home directory/.test(l));
  const last = lines.at(-1);
  if (!last) return null;
  if (/^setpriv: failed to execute .*: No such file or directory/.test(last)) return 'ssh: not found (install openssh-client)';
  const words = last.replace(/^ssh: /, '').replace(/^[^\s@:]+@[^\s:]+: /, '').replace(/\.$/, '');
  // the box took the login but nothing answers on the daemon's socket there
  if (/^channel \d+: open failed: connect failed/.test(words)) return `ssh: no gpushare daemon answers on the box (${words})`;
  if (/^channel \d+: open failed: administratively prohibited/.test(words)) return `ssh: the box does not forward sockets (${words})`;
  // the relay's own words, from the box
  if (/^gpushare relay: /.test(words)) return words;
  return `ssh: ${words}`;
}

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function exists(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

/** What is at path when it is there and not a socket ('a directory', 'a file', …), else null. */
function notASocket(path: string): string | null {
  try {
    const stats = statSync(path);
    if (stats.isSocket()) return null;
    return stats.isDirectory() ? 'a directory' : stats.isFile() ? 'a file' : 'something else';
  } catch {
    return null;
  }
}

function removeStale(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // nothing there
  }
}

function socketProblem(path: string, error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return 'no socket there (no gpushare daemon runs)';
  if (error.code === 'ECONNREFUSED') {
    // the kernel refuses a directory or a plain file as it refuses a socket nobody listens on: a lab list's typo, not a stopped daemon
    const kind = notASocket(path);
    return kind ? `is ${kind}, not a socket (give the daemon's socket, like /run/gpushare/engine.sock)` : 'nothing listens (the daemon is not running)';
  }
  if (error.code === 'EACCES') return 'permission denied';
  return error.message;
}

