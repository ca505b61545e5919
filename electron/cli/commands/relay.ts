// `gpushare relay --stdio`: the API between stdin/stdout and the box daemon's socket, as the user
// who runs it. What a lab's hub runs over `ssh BOX` where the box's sshd will not forward a socket:
// the daemon then sees this process, so the person's own uid, by the kernel's word.
import { connect } from 'node:net';
import { parseFlags, UsageError } from '../args.js';
import { daemonSocketPath } from '../engine-client.js';

export const relayUsage = `Usage: gpushare relay --stdio [--socket PATH]
  Relays the gpushare API between stdin/stdout and the box daemon's socket (default
  /run/gpushare/engine.sock), as you: \`ssh BOX gpushare relay --stdio\` is how \`gpushare lab\`
  reaches a box whose sshd does not forward sockets. It holds at most a few tens of KB in each
  direction: a side that does not read slows the other. Exits when either side closes.`;

export async function relayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { stdio: { type: 'boolean' }, socket: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`gpushare relay takes no arguments, got "${positionals[0]}".`);
  if (!values.stdio) throw new UsageError('gpushare relay relays over stdin/stdout only: give --stdio.');
  const path = values.socket ?? daemonSocketPath();
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? 'no socket there' : error.code === 'ECONNREFUSED' ? 'nothing listens' : error.code === 'EACCES' ? 'permission denied' : error.message;
      reject(new Error(`no gpushare daemon answers at ${path}: ${why}.`));
    });
  });
  // pipe() pauses the side that writes while the other has not taken what it was given: the buffers stay at their high-water marks
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
  return new Promise<number>((resolve) => {
    let done = false;
    const finish = (status: number): void => {
      if (done) return;
      done = true;
      socket.destroy();
      process.stdin.unpipe(socket);
      process.stdin.destroy(); // nothing more to relay: stdin must not keep the process alive
      resolve(status);
    };
    process.stdin.once('end', () => socket.end());
    socket.once('close', () => finish(0));
    socket.once('error', () => finish(1));
    process.stdout.once('error', () => finish(1)); // the hub went away
  });
}
