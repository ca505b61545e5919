// The Lab view's state: the lab as the host last sent it, the connection to the host, and the
// "where can I run now" question and its answer. Fed by lab-feed.ts; read by components/lab/.
import { createStore } from 'zustand/vanilla';
import type { LabConsoleState, LabWhereParams, LabWhereResult } from '../../../shared/lab-console.js';
import type { ConnectionState } from '../transport/transport.js';

export interface LabWhereState {
  asked: LabWhereParams | null;
  answer: LabWhereResult | null;
  /** When the answer came (ms). */
  answeredAt: number | null;
  error: string | null;
  pending: boolean;
}

export interface LabState {
  /** The lab as the host's updates make it; a box row that did not change keeps its object. */
  update: LabConsoleState | null;
  connection: ConnectionState;
  connectionDetail: string | null;
  where: LabWhereState;
}

export const labStore = createStore<LabState>(() => ({
  update: null,
  connection: 'connecting',
  connectionDetail: null,
  where: { asked: null, answer: null, answeredAt: null, error: null, pending: false },
}));
