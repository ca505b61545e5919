// The Reports view: the range and grouping asked for, and the engine's last answer.
import { createStore } from 'zustand/vanilla';
import type { SlurmUsageReport, SlurmUsageRow } from '../../../shared/slurm.js';
import type { AnyReportGrouping, UsageReport, UsageRow } from '../../../shared/usage-report.js';

export const REPORT_PRESETS = [
  { preset: '24h', title: '24 h', ms: 24 * 3600_000 },
  { preset: '7d', title: '7 d', ms: 7 * 24 * 3600_000 },
  { preset: '30d', title: '30 d', ms: 30 * 24 * 3600_000 },
] as const;
export type ReportPreset = (typeof REPORT_PRESETS)[number]['preset'] | 'custom';

/** What the chart plots per row. */
export type ReportMetric = keyof Pick<UsageRow, 'gpuSeconds' | 'smSeconds' | 'memoryGiBHours' | 'contentionMinutes'>;

/** What the engine answered: a usage report (reports.query), or usage per Slurm job (reports.slurmJobs). */
export type ShownReport = UsageReport | SlurmUsageReport;

/** A column the Slurm job table sorts by. */
export type SlurmSortKey = keyof SlurmUsageRow;

export interface ReportsState {
  preset: ReportPreset;
  /** The custom range (ms since the epoch), used when preset is 'custom'. */
  customSince: number;
  customUntil: number;
  by: AnyReportGrouping;
  metric: ReportMetric;
  /** The Slurm job table's order: newest end first until a person picks a column. */
  slurmSort: { key: SlurmSortKey; descending: boolean };
  report: ShownReport | null;
  loading: boolean;
  error: string | null;
}

const now = Date.now();
export const reportsStore = createStore<ReportsState>(() => ({
  preset: '24h',
  customSince: now - 24 * 3600_000,
  customUntil: now,
  by: 'user',
  metric: 'gpuSeconds',
  slurmSort: { key: 'end', descending: true },
  report: null,
  loading: false,
  error: null,
}));

/** The range to ask for: a preset ends now (until left to the engine), a custom one where it was set. */
export function requestedRange(state: Pick<ReportsState, 'preset' | 'customSince' | 'customUntil'>, at = Date.now()): { since: number; until?: number } {
  if (state.preset === 'custom') return { since: state.customSince, until: state.customUntil };
  const preset = REPORT_PRESETS.find((p) => p.preset === state.preset)!;
  return { since: at - preset.ms };
}
