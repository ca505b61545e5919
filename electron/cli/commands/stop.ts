// `gpushare stop`: stops your personal engine as Ctrl-C on `gpushare serve` would, and waits
// (bounded) until its socket no longer answers. The box daemon is an admin's to stop.
import { readProcStatus } from '../../engine/proc/proc-status.js';
import { UsageError } from '../args.js';
import { callWithin, EngineRequestError, EngineUnavailableError, findEngine, socketAnswers } from '../engine-client.js';

export const stopUsage = `Usage: gpushare stop
  Stops your personal engine (\`gpushare serve\`, \`start\`, \`engine\`) as Ctrl-C would: it resumes
  what it suspended and restores parked jobs first; managed jobs keep running and the next engine
  re-adopts them. Waits until its socket no longer answers (at most 30 s). Looks at $GPUSHARE_SOCKET
  alone when it is set. The box daemon is stopped by an admin: systemctl stop gpushare.`;

const SOCKET_CLOSE_LIMIT_MS = 30_000;
const EXIT_LIMIT_MS = 10_000;
const POLL_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function stopCommand(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new UsageError(`gpushare stop takes no arguments, got "${argv[0]}".`);

  let found;
  try {
    found = await findEngine({ personalFirst: true }); // what stop stops is a personal engine
  } catch (error) {
    if (!(error instanceof EngineUnavailableError)) throw error;
    process.stderr.write(`No gpushare engine is running: nothing to stop (tried ${error.tried.join('; ')}).\n`);
    return 1;
  }
  const { client, socket } = found;
  let pid: number;
  try {
    const me = await callWithin(client, 'session.whoami', {});
    if (me.engine.kind === 'daemon') {
      const personal = socket.source === 'daemon' ? 'You have no personal engine running, and the' : 'The';
      process.stderr.write(`${personal} box daemon is stopped by an admin: systemctl stop gpushare.\n`);
      return 1;
    }
    pid = (await callWithin(client, 'engine.stop', {})).pid;
  } catch (error) {
    if (error instanceof EngineRequestError || error instanceof EngineUnavailableError) {
      process.stderr.write(`Could not stop the engine at ${socket.path}: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    client.close();
  }

  const closedBy = Date.now() + SOCKET_CLOSE_LIMIT_MS;
  while (await socketAnswers(socket.path)) {
    if (Date.now() > closedBy) {
      process.stderr.write(`Asked the engine (pid ${pid}) to stop, but its socket ${socket.path} still answers after ${SOCKET_CLOSE_LIMIT_MS / 1000} s.\n`);
      return 1;
    }
    await sleep(POLL_MS);
  }
  const exitedBy = Date.now() + EXIT_LIMIT_MS;
  while (running(pid) && Date.now() < exitedBy) await sleep(POLL_MS);
  const exited = running(pid) ? `; its process (pid ${pid}) has not exited yet` : ' and its process has exited';
  process.stdout.write(`Stopped your personal engine (pid ${pid}): its socket ${socket.path} no longer answers${exited}. Managed jobs keep running; the next engine re-adopts them.\n`);
  return 0;
}

/** Alive and not a zombie (a zombie has exited: only its parent has not collected it yet). */
function running(pid: number): boolean {
  const status = readProcStatus(pid);
  return status !== null && status.state !== 'Z' && status.state !== 'X';
}
