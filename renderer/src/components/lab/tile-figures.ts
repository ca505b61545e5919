// A GPU tile's figures (its two meters and the users it names) as words and shares, and where each sits
// on the tile's canvas. DOM-free: the words go to the canvas and to the words under it, and the geometry
// serves both the drawing and what the pointer is over.
import type { LabConsoleGpu } from '../../../../shared/lab-console.js';
import { formatBytes, formatPercent } from '../../format.js';

export interface MeterFigures {
  label: 'util' | 'mem';
  /** How full the bar is, 0 to 100. */
  share: number;
  value: string;
  /** The meter in words, as its hover title says it. */
  title: string;
}

/** One line under the meters: a user and what they hold, or a line of its own ("no processes", "+2 more"). */
export interface UserLine {
  name: string | null;
  detail: string;
}

export interface TileFigures {
  util: MeterFigures;
  mem: MeterFigures;
  lines: UserLine[];
}

export function tileFigures(gpu: LabConsoleGpu): TileFigures {
  const memoryShare = gpu.memoryTotal > 0 && gpu.memoryUsed !== null ? Math.min(100, (gpu.memoryUsed / gpu.memoryTotal) * 100) : 0;
  const lines: UserLine[] = gpu.users.map((u) => ({ name: u.user, detail: `${formatBytes(u.memoryBytes)} · ${u.processes} proc` }));
  if (gpu.users.length === 0) lines.push({ name: null, detail: 'no processes' });
  if (gpu.otherUsers > 0) lines.push({ name: null, detail: `+${gpu.otherUsers} more` });
  return {
    util: { label: 'util', share: Math.max(0, Math.min(100, gpu.utilization ?? 0)), value: formatPercent(gpu.utilization), title: `utilization ${formatPercent(gpu.utilization)}` },
    mem: {
      label: 'mem',
      share: memoryShare,
      value: `${formatBytes(gpu.memoryUsed)} / ${formatBytes(gpu.memoryTotal)}`,
      title: `memory ${formatBytes(gpu.memoryUsed)} of ${formatBytes(gpu.memoryTotal)}`,
    },
    lines,
  };
}

const sameMeter = (a: MeterFigures, b: MeterFigures): boolean => a.share === b.share && a.value === b.value && a.title === b.title;

/** Whether two figures draw the same tile: an idle GPU's are the same from one update to the next, and need no drawing. */
export const sameFigures = (a: TileFigures | null, b: TileFigures): boolean =>
  a !== null && sameMeter(a.util, b.util) && sameMeter(a.mem, b.mem) && a.lines.length === b.lines.length && a.lines.every((line, i) => line.name === b.lines[i].name && line.detail === b.lines[i].detail);

/** How many lines a tile's users take: they fix its canvas's height, so they are part of the tile's shape. */
export const userLineCount = (gpu: Pick<LabConsoleGpu, 'users' | 'otherUsers'>): number => Math.max(1, gpu.users.length) + (gpu.otherUsers > 0 ? 1 : 0);

/** The canvas's rows in CSS pixels, as the tile's lines were when they were elements (11px text at line-height 1.35). */
export const FIGURES = {
  meterLine: 15,
  /** Between the two meters, and between the meters and the users (the tile's gap). */
  blockGap: 4,
  userLine: 16,
  userGap: 1,
  /** The meter's label column, then the gap before its bar and after it. */
  labelWidth: 30,
  gap: 6,
  barHeight: 6,
} as const;

export const figuresHeight = (lines: number): number =>
  2 * FIGURES.meterLine + 2 * FIGURES.blockGap + lines * FIGURES.userLine + Math.max(0, lines - 1) * FIGURES.userGap;

/** The top of each row: the utilization meter, the memory meter, then each user line. */
export function rowTops(lines: number): { util: number; mem: number; users: number[] } {
  const mem = FIGURES.meterLine + FIGURES.blockGap;
  const first = mem + FIGURES.meterLine + FIGURES.blockGap;
  return { util: 0, mem, users: Array.from({ length: lines }, (_, i) => first + i * (FIGURES.userLine + FIGURES.userGap)) };
}

/** What is at height `y` (CSS pixels from the canvas's top): a meter, the index of a user line, or nothing. */
export function rowAt(y: number, lines: number): 'util' | 'mem' | number | null {
  const tops = rowTops(lines);
  if (y >= tops.util && y < tops.util + FIGURES.meterLine) return 'util';
  if (y >= tops.mem && y < tops.mem + FIGURES.meterLine) return 'mem';
  const line = tops.users.findIndex((top) => y >= top && y < top + FIGURES.userLine);
  return line >= 0 ? line : null;
}

/** A meter's bar between its label and its value, for a canvas `width` wide and a value `valueWidth` wide. */
export function meterBar(width: number, valueWidth: number, share: number): { x: number; width: number; filled: number } {
  const x = FIGURES.labelWidth + FIGURES.gap;
  const barWidth = Math.max(0, width - valueWidth - FIGURES.gap - x);
  return { x, width: barWidth, filled: (barWidth * Math.max(0, Math.min(100, share))) / 100 };
}
