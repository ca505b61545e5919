// The console's choices (timeline window, filters, table order) kept across restarts: loaded from
// the engine once at start (settings.get), saved a moment after each change (settings.set). DOM-free.
import type { GpushareApi } from '../../../shared/api.js';
import { TIMELINE_WINDOWS_MINUTES, type ConsolePreferences } from '../../../shared/settings.js';
import type { StoreApi } from 'zustand/vanilla';
import type { TimelineWindow, UiState } from './ui-store.js';

/** A burst of changes (typing a user filter, stepping the window) is one write. */
export const SAVE_DEBOUNCE_MS = 1000;

type Remembered = Pick<UiState, 'timelineMinutes' | 'ownerFilter' | 'gpuFilter' | 'userFilter' | 'sortKey' | 'sortDescending'>;

export function preferencesOf(state: UiState): ConsolePreferences {
  return {
    timelineMinutes: state.timelineMinutes,
    ownerFilter: state.ownerFilter,
    gpuFilter: state.gpuFilter,
    userFilter: state.userFilter === '' ? null : state.userFilter,
    sortKey: state.sortKey,
    sortDescending: state.sortDescending,
  };
}

/** The kept choices as ui state; a timeline window the console does not offer is left at its default. */
export function stateOf(preferences: ConsolePreferences): Partial<Remembered> {
  const state: Partial<Remembered> = {};
  const minutes = preferences.timelineMinutes;
  if (minutes !== undefined && (TIMELINE_WINDOWS_MINUTES as readonly number[]).includes(minutes)) state.timelineMinutes = minutes as TimelineWindow;
  if (preferences.ownerFilter !== undefined) state.ownerFilter = preferences.ownerFilter;
  if (preferences.gpuFilter !== undefined) state.gpuFilter = preferences.gpuFilter;
  if (preferences.userFilter !== undefined) state.userFilter = preferences.userFilter;
  if (preferences.sortKey !== undefined) state.sortKey = preferences.sortKey;
  if (preferences.sortDescending !== undefined) state.sortDescending = preferences.sortDescending;
  return state;
}

const sameChoices = (a: ConsolePreferences, b: ConsolePreferences): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Load the kept choices into `store`, then save each change (debounced). Nothing is saved before the
 * load answers, so the defaults never overwrite what was kept; an engine without settings (an older
 * one) keeps nothing and the console works as before. Returns a stop function.
 */
export function keepPreferences(api: Pick<GpushareApi, 'call'>, store: StoreApi<UiState>): () => void {
  let loaded = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let saved = preferencesOf(store.getState());
  const save = (): void => {
    timer = null;
    const now = preferencesOf(store.getState());
    if (sameChoices(now, saved)) return;
    saved = now;
    void api.call('settings.set', { preferences: now }).catch(() => undefined); // a full disk must not break the console
  };
  const unsubscribe = store.subscribe(() => {
    if (!loaded || sameChoices(preferencesOf(store.getState()), saved)) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(save, SAVE_DEBOUNCE_MS);
  });
  void api.call('settings.get', {}).then(
    (kept) => {
      store.setState(stateOf(kept));
      saved = preferencesOf(store.getState());
      loaded = true;
    },
    () => undefined, // keeps nothing: loaded stays false
  );
  return () => {
    unsubscribe();
    if (timer) {
      clearTimeout(timer);
      save();
    }
  };
}
