// What the console header says about the engine it talks to: which one, as whom, and who else
// schedules the same GPUs (session.whoami). DOM-free, so it is tested in Node.
import type { ApiResults, OtherEngine } from '../../../shared/api.js';

export type Session = ApiResults['session.whoami'];

export const PERSONAL_ENGINE_TEXT = 'personal engine: only your own processes can be scheduled';

/** "box daemon · signed in as alice", or the personal engine's limit; from an engine too old to say which, who you are. */
export function engineLabel(session: Pick<Session, 'user'> & Partial<Pick<Session, 'engine'>>): string {
  if (session.engine?.kind === 'daemon') return `box daemon · signed in as ${session.user}`;
  if (session.engine?.kind === 'personal') return PERSONAL_ENGINE_TEXT;
  return `signed in as ${session.user}`;
}

const possessive = (users: readonly string[]): string =>
  users.length === 1 ? `${users[0]}'s` : `${users.slice(0, -1).map((u) => `${u}'s`).join(', ')} and ${users[users.length - 1]}'s`;

/** Other schedulers of this box, in one sentence each with what to do; empty when the engine is alone. */
export function otherEngineWarnings(session: Pick<Session, 'user'> & Partial<Pick<Session, 'engine' | 'otherEngines'>>): string[] {
  const others: readonly OtherEngine[] = session.otherEngines ?? [];
  const warnings: string[] = [];
  if (session.engine?.kind !== 'daemon' && others.some((e) => e.kind === 'daemon')) {
    warnings.push('The box daemon also schedules this box; quit this personal engine (gpushare stop) and use the daemon.');
  }
  const users = [...new Set(others.filter((e) => e.kind !== 'daemon').map((e) => e.user))];
  if (users.length === 0) return warnings;
  const verb = users.length === 1 ? 'engine also schedules' : 'engines also schedule';
  const advice = session.engine?.kind === 'daemon' ? ' beside the daemon, without knowing of it' : '; ask an admin to install the daemon';
  warnings.push(`${possessive(users)} gpushare ${verb} this box${advice}`);
  return warnings;
}
