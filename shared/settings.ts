// A person's gpushare settings ($XDG_CONFIG_HOME/gpushare/config.json): defaults for their personal
// engine, and the console's choices, which the console keeps across restarts (settings.get / .set).
import { PRIORITIES } from './jobs.js';
import { boxNameSchema } from './lab-policy.js';
import { boolean, nullable, number, object, oneOf, optional, string, type Infer } from './schema.js';

export const TIMELINE_WINDOWS_MINUTES = [1, 10, 60] as const;
export const SORT_KEYS = ['user', 'command', 'gpu', 'sm', 'memory', 'quota', 'priority', 'state'] as const;

/** What the console remembers: its timeline window, table filters and order, and the desktop window's size. */
export const consolePreferencesSchema = object({
  timelineMinutes: optional(number({ integer: true, min: 1, max: 60, unit: 'min' })),
  ownerFilter: optional(oneOf(['mine', 'all'] as const)),
  gpuFilter: optional(nullable(number({ integer: true, min: 0, max: 63 }))),
  userFilter: optional(nullable(string({ min: 1, max: 64 }))),
  sortKey: optional(oneOf(SORT_KEYS)),
  sortDescending: optional(boolean()),
  /** The desktop app's window (electron/main keeps it; the browser console ignores it). */
  window: optional(object({ width: number({ integer: true, min: 320, max: 16384, unit: 'px' }), height: number({ integer: true, min: 240, max: 16384, unit: 'px' }) })),
});
export type ConsolePreferences = Infer<typeof consolePreferencesSchema>;

/** Defaults for a personal engine (`gpushare serve`, `engine`, `start`); a command-line flag wins over them. */
export const engineSettingsSchema = object({
  /** Samples per second, as --rate. */
  rateHz: optional(number({ min: 0.2, max: 10, unit: 'Hz' })),
  /** The usage database, as --db. */
  db: optional(string({ min: 1, max: 4096, pattern: /^\//, describe: 'an absolute path' })),
  /** The priority `gpushare run` gives a job when --priority is not given. */
  defaultPriority: optional(oneOf(PRIORITIES)),
  /** Serve Prometheus metrics here, as --metrics ([ADDR:]PORT); absent: off. */
  metrics: optional(string({ min: 1, max: 300 })),
  /** The box's name in the metrics (gpushare_engine_info's `box` label); absent: the host name. */
  boxName: optional(boxNameSchema),
  /** Park a managed job idle this long when a queued job needs its memory; it comes back on its next CUDA call. Absent: off. */
  autoParkIdleSeconds: optional(number({ integer: true, min: 10, max: 86_400, unit: 's' })),
});
export type EngineSettings = Infer<typeof engineSettingsSchema>;

export const userConfigSchema = object({
  engine: optional(engineSettingsSchema),
  console: optional(consolePreferencesSchema),
});
export type UserConfig = Infer<typeof userConfigSchema>;
