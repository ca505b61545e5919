// The console keeps its choices: loaded once from the engine, saved once per burst of changes,
// and never saved before the load answers (the defaults must not overwrite what was kept).
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { createStore } from 'zustand/vanilla';
import type { ConsolePreferences } from '../../../shared/settings.js';
import { keepPreferences, SAVE_DEBOUNCE_MS } from './preferences.js';
import { uiStore, type UiState } from './ui-store.js';

function fakeEngine(kept: ConsolePreferences | Error) {
  const saves: ConsolePreferences[] = [];
  let answer: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (answer = resolve));
  const api = {
    call: (method: string, params: unknown): Promise<never> => {
      if (method === 'settings.get') {
        answer();
        return (kept instanceof Error ? Promise.reject(kept) : Promise.resolve(kept)) as Promise<never>;
      }
      saves.push((params as { preferences: ConsolePreferences }).preferences);
      return Promise.resolve(params) as Promise<never>;
    },
  };
  return { api: api as Parameters<typeof keepPreferences>[0], saves, loaded };
}
const freshStore = () => createStore<UiState>(() => ({ ...uiStore.getState() }));
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('the kept choices are loaded into the store at start, and loading them saves nothing', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const store = freshStore();
    const engine = fakeEngine({ timelineMinutes: 60, ownerFilter: 'mine', gpuFilter: 1, userFilter: 'bob', sortKey: 'sm', sortDescending: false, window: { width: 900, height: 700 } });
    keepPreferences(engine.api, store);
    await settle();
    const s = store.getState();
    assert.deepEqual([s.timelineMinutes, s.ownerFilter, s.gpuFilter, s.userFilter, s.sortKey, s.sortDescending], [60, 'mine', 1, 'bob', 'sm', false]);
    mock.timers.tick(SAVE_DEBOUNCE_MS * 2);
    assert.deepEqual(engine.saves, []);
  } finally {
    mock.timers.reset();
  }
});

test('a burst of changes is saved once, with the last choices, a moment after the last change', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const store = freshStore();
    const engine = fakeEngine({});
    keepPreferences(engine.api, store);
    await settle();
    store.setState({ userFilter: 'a' });
    store.setState({ userFilter: 'al' });
    store.setState({ timelineMinutes: 1 });
    mock.timers.tick(SAVE_DEBOUNCE_MS - 1);
    assert.equal(engine.saves.length, 0, 'not before the burst is over');
    mock.timers.tick(1);
    assert.equal(engine.saves.length, 1);
    assert.equal(engine.saves[0].userFilter, 'al');
    assert.equal(engine.saves[0].timelineMinutes, 1);
    assert.equal('window' in engine.saves[0], false, "the console never sends the desktop window's size");
    store.setState({ highlighted: 'p42' }); // not a kept choice
    mock.timers.tick(SAVE_DEBOUNCE_MS * 2);
    assert.equal(engine.saves.length, 1);
  } finally {
    mock.timers.reset();
  }
});

test('an engine that keeps no settings (an older engine): the console works and saves nothing', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const store = freshStore();
    const engine = fakeEngine(new Error('Console preferences are kept by each person\'s personal engine'));
    keepPreferences(engine.api, store);
    await engine.loaded;
    await settle();
    store.setState({ timelineMinutes: 60 });
    mock.timers.tick(SAVE_DEBOUNCE_MS * 2);
    assert.deepEqual(engine.saves, []);
    assert.equal(store.getState().timelineMinutes, 60);
  } finally {
    mock.timers.reset();
  }
});
