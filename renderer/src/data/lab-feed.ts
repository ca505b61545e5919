// The lab transport feeds the lab store: each update the host sends is one commit (the host
// sends at most ten a second, however many boxes changed), and "where can I run" goes through here.
import { ApiCallError } from '../../../shared/api-client.js';
import { applyLabUpdate, type LabWhereParams } from '../../../shared/lab-console.js';
import { labStore } from '../stores/lab-store.js';
import type { LabTransport } from '../transport/lab-transport.js';

let commits = 0;
let transport: LabTransport | null = null;

/** Commits so far (the end-to-end tests and bench/lab wait on it). */
export const labCommitCount = (): number => commits;

export function startLabFeed(lab: LabTransport): void {
  transport = lab;
  lab.onConnection((connection, connectionDetail) => labStore.setState({ connection, connectionDetail }));
  lab.onUpdate((update) => {
    labStore.setState((s) => ({ update: applyLabUpdate(update.whole ? null : s.update, update) }));
    commits++;
  });
}

/** Ask where a job can start now; the answer (or why not) lands in the store. */
export async function askWhere(params: LabWhereParams): Promise<void> {
  if (!transport) return;
  labStore.setState((s) => ({ where: { ...s.where, asked: params, pending: true, error: null } }));
  try {
    const answer = await transport.where(params);
    labStore.setState({ where: { asked: params, answer, answeredAt: Date.now(), error: null, pending: false } });
  } catch (error) {
    const message = error instanceof ApiCallError || error instanceof Error ? error.message : String(error);
    labStore.setState((s) => ({ where: { ...s.where, error: message, pending: false } }));
  }
}
