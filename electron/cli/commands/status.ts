// `gpushare status`: which engine answers (the box daemon or a personal engine), as whom it sees
// you, the console's URL, and other users' engines on this box.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { ApiResults, OtherEngine } from '../../../shared/api.js';
import type { EngineKind } from '../../../shared/jobs.js';
import { jobsTrouble, storeTrouble, type StoreStatus } from '../../../shared/store-status.js';
import { kindText, otherEnginesWarning, otherUsersEngines } from '../../engine/other-engines.js';
import { loadUserConfig, userConfigPath, UserConfigError } from '../../engine/settings/user-config.js';
import { parseFlags, UsageError } from '../args.js';
import { callWithin, EngineUnavailableError, findEngine, type EngineSocket } from '../engine-client.js';

/** What `status --json` prints. */
export interface StatusReport {
  engine: { kind: EngineKind; owner: string; pid: number; socket: string; foundBy: EngineSocket['source'] } | null;
  you: { user: string; uid: number; admin: boolean } | null;
  consoleUrl: string | null;
  /** Whether the engine records usage, and if not why and where; null where it does not say (no store). */
  usage: StoreStatus | null;
  otherEngines: OtherEngine[];
  /** Why no engine answers, naming each place tried; null when one does. */
  problem: string | null;
  /** Your settings file (what a personal engine you start and its console read), and what is wrong with it. */
  settings: { path: string; found: boolean; problem: string | null };
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare status takes no arguments, got "${positionals[0]}".`);
  const report = { ...(await readStatus()), settings: readSettings() };
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : renderStatus(report, userInfo().username) + '\n');
  return report.engine ? 0 : 1;
}

async function readStatus(): Promise<Omit<StatusReport, 'settings'>> {
  const none = (problem: string): Omit<StatusReport, 'settings'> => ({ engine: null, you: null, consoleUrl: null, usage: null, otherEngines: otherUsersEngines(process.getuid?.() ?? 0), problem });
  let found;
  try {
    found = await findEngine();
  } catch (error) {
    if (error instanceof EngineUnavailableError) return none(error.message);
    throw error;
  }
  let me: ApiResults['session.whoami'];
  let usage: StoreStatus | null = null;
  try {
    me = await callWithin(found.client, 'session.whoami', {});
    usage = await callWithin(found.client, 'store.status', {}).catch(() => null); // an engine without a store says nothing
  } catch (error) {
    return none(`${found.socket.label} at ${found.socket.path} did not say who you are: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    found.client.close();
  }
  return {
    engine: { ...me.engine, socket: found.socket.path, foundBy: found.socket.source },
    you: { user: me.user, uid: me.uid, admin: me.admin },
    consoleUrl: me.consoleUrl,
    usage,
    otherEngines: me.otherEngines,
    problem: null,
  };
}

function readSettings(): StatusReport['settings'] {
  const path = userConfigPath();
  try {
    loadUserConfig(path);
    return { path, found: existsSync(path), problem: null };
  } catch (error) {
    if (error instanceof UserConfigError) return { path, found: true, problem: error.message };
    throw error;
  }
}

const settingsLine = ({ path, found, problem }: StatusReport['settings']): string =>
  `settings: ${path}${problem ? ` NOT VALID (the engines you start refuse it): ${problem}` : found ? '' : ' (none: the defaults)'}`;

/** The report for a person; `me` is the user running the command ("your personal engine"). */
export function renderStatus(report: StatusReport, me: string): string {
  const lines: string[] = [];
  const others = report.otherEngines.map((e) => `${e.user}'s ${kindText(e.kind)} (pid ${e.pid})`).join('; ');
  if (!report.engine || !report.you) {
    lines.push(report.problem ?? 'No gpushare engine answers.');
    if (others) lines.push(`Other users' engines on this box: ${others}.`);
    lines.push(settingsLine(report.settings));
    return lines.join('\n');
  }
  const { engine, you } = report;
  const whose = engine.owner === me ? 'your' : `${engine.owner}'s`;
  const named = engine.foundBy === 'GPUSHARE_SOCKET' ? ' ($GPUSHARE_SOCKET)' : '';
  if (engine.kind === 'daemon') lines.push(`engine:   the box daemon, pid ${engine.pid} (runs as ${engine.owner}): one scheduler for every user of this box`);
  else lines.push(`engine:   ${whose} personal engine, pid ${engine.pid}: only ${engine.owner === me ? 'your' : 'its user\'s'} own processes can be scheduled`);
  lines.push(`socket:   ${engine.socket}${named}`);
  lines.push(`you:      ${you.user} (uid ${you.uid}), ${you.admin ? 'an admin: you may act on anyone\'s jobs and change the box' : engine.kind === 'daemon' ? 'not an admin: you act on your own jobs and processes' : 'not an admin'}`);
  if (report.consoleUrl) lines.push(`console:  ${report.consoleUrl}`);
  else if (engine.kind === 'daemon') lines.push('console:  `gpushare console` opens it, through a proxy of your own');
  else lines.push('console:  none in a browser from this engine (the desktop app has its own window)');
  lines.push(settingsLine(report.settings));
  if (report.usage) lines.push(report.usage.recording ? `usage:    recorded in ${report.usage.path}` : `usage:    NOT RECORDED. ${storeTrouble(report.usage)}`);
  const unwritten = jobsTrouble(report.usage);
  if (unwritten) lines.push(`jobs:     NOT ALL ON DISK. ${unwritten}`);
  if (engine.kind === 'personal') {
    const warning = otherEnginesWarning(report.otherEngines);
    if (warning) lines.push(...warning.split('\n'));
  } else if (others) {
    lines.push(`also on this box: ${others}`);
  }
  return lines.join('\n');
}
