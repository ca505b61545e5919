// What the person chose on screen: timeline window, pause, filters, highlight, notices.
import { createStore } from 'zustand/vanilla';
import type { ApiResults } from '../../../shared/api.js';

export type TimelineWindow = 1 | 10 | 60;
export type SortKey = 'user' | 'command' | 'gpu' | 'sm' | 'memory' | 'quota' | 'priority' | 'state';

export interface Notice {
  id: number;
  text: string;
  tone: 'error' | 'info';
  /** CSS selectors of what it speaks of (the job's card, the GPU's): the notices are placed so as not to cover them. */
  about: string[];
}

export interface UiState {
  me: string | null;
  /** Which engine this console talks to and as whom, and who else schedules the box (session.whoami); null until it answers. */
  session: ApiResults['session.whoami'] | null;
  timelineMinutes: TimelineWindow;
  timelineGpu: number;
  /** The end of the shown window while paused (ms); null = live. */
  pausedAt: number | null;
  /** How far back from pausedAt the window ends, in ms. */
  scrollBackMs: number;
  /** The process under the pointer, "p<pid>", highlighted everywhere. */
  highlighted: string | null;
  ownerFilter: 'mine' | 'all';
  gpuFilter: number | null;
  userFilter: string | null;
  sortKey: SortKey;
  sortDescending: boolean;
  notices: Notice[];
}

export const uiStore = createStore<UiState>(() => ({
  me: null,
  session: null,
  timelineMinutes: 10,
  timelineGpu: 0,
  pausedAt: null,
  scrollBackMs: 0,
  highlighted: null,
  ownerFilter: 'all',
  gpuFilter: null,
  userFilter: null,
  sortKey: 'memory',
  sortDescending: true,
  notices: [],
}));

let noticeSeq = 0;
const NOTICE_MS = 9000;

export function showNotice(text: string, tone: Notice['tone'] = 'error', about: string[] = []): void {
  const notice = { id: ++noticeSeq, text, tone, about };
  uiStore.setState((s) => ({ notices: [...s.notices.slice(-3), notice] }));
  setTimeout(() => dismissNotice(notice.id), NOTICE_MS);
}

export function dismissNotice(id: number): void {
  uiStore.setState((s) => ({ notices: s.notices.filter((n) => n.id !== id) }));
}

export const highlight = (key: string | null): void => {
  if (uiStore.getState().highlighted !== key) uiStore.setState({ highlighted: key });
};
