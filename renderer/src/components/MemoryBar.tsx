// A GPU's memory split by process: one coloured segment each, the driver's share hatched.
// The segments are one row of pixels put into a canvas and stretched to the bar's height:
// sixty-odd segments whose widths change every second would otherwise be sixty-odd boxes
// to relay out and repaint (or a long CSS gradient to parse) per GPU per update. Hovering
// names the process under the pointer and highlights it everywhere.
import { useEffect, useMemo, useRef } from 'react';
import type { GpuProcessView } from '../../../shared/snapshot.js';
import { processRgb } from '../colors.js';
import { processLabel } from '../data/process-label.js';
import { formatBytes } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';
import { useElementWidth } from './use-element-width.js';

interface Props {
  total: number;
  used: number | null;
  processes: readonly GpuProcessView[];
}

/** The 1px gap closing each segment wider than this many pixels. */
const GAP_FROM_PX = 3;
const GAP_RGB = [15, 18, 24] as const;
/** Processes named in the bar's accessible label; the table lists them all. */
const LABELLED = 5;

export interface MemorySegment {
  /** null: memory the driver holds or no process accounts for. */
  pid: number | null;
  /** Start and length along the bar, in percent of the GPU's memory. */
  at: number;
  length: number;
}

/** Where each process's memory lies along the bar. */
export function layoutSegments(total: number, used: number | null, processes: readonly GpuProcessView[]): MemorySegment[] {
  const segments: MemorySegment[] = [];
  const scale = total > 0 ? 100 / total : 0;
  let at = 0;
  for (const p of processes) {
    const length = Math.max(0, Math.min(100 - at, (p.usedMemory ?? 0) * scale));
    segments.push({ pid: p.pid, at, length });
    at += length;
  }
  const byProcess = processes.reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
  const other = Math.max(0, (used ?? byProcess) - byProcess);
  if (other > 0) segments.push({ pid: null, at, length: Math.min(100 - at, other * scale) });
  return segments;
}

/** What hovering a segment says (built on hover, not for every segment every second). */
function describe(segment: MemorySegment, total: number, processes: readonly GpuProcessView[]): string {
  const p = processes.find((x) => x.pid === segment.pid);
  if (p) return `${processLabel(p)}: ${formatBytes(p.usedMemory)}`;
  return `driver and unattributed: ${formatBytes((segment.length / 100) * total)}`;
}

/** One row of RGBA pixels: processes opaque, everything else clear (the hatch and track show through). */
export function paintRow(row: Uint8ClampedArray, segments: readonly MemorySegment[], highlightedPid: number | null): void {
  const width = row.length / 4;
  row.fill(0);
  for (const s of segments) {
    if (s.pid === null || s.length <= 0) continue;
    const from = Math.min(width - 1, Math.round((s.at / 100) * width));
    const to = Math.max(from + 1, Math.round(((s.at + s.length) / 100) * width)); // a process with any memory keeps a pixel
    const [r, g, b] = processRgb(s.pid);
    const alpha = highlightedPid === null || highlightedPid === s.pid ? 235 : 120;
    for (let x = from; x < Math.min(to, width); x++) {
      const gap = to - from > GAP_FROM_PX && x === to - 1;
      row[x * 4] = gap ? GAP_RGB[0] : r;
      row[x * 4 + 1] = gap ? GAP_RGB[1] : g;
      row[x * 4 + 2] = gap ? GAP_RGB[2] : b;
      row[x * 4 + 3] = gap ? 255 : alpha;
    }
  }
}

export function MemoryBar({ total, used, processes }: Props) {
  const [box, width] = useElementWidth<HTMLDivElement>();
  const canvas = useRef<HTMLCanvasElement>(null);
  const shown = useRef<Uint8ClampedArray | null>(null);
  const highlighted = useUi((s) => s.highlighted);
  const highlightedPid = highlighted !== null && /^p\d+$/.test(highlighted) ? Number(highlighted.slice(1)) : null;
  const segments = useMemo(() => layoutSegments(total, used, processes), [total, used, processes]);
  useEffect(() => {
    const element = canvas.current;
    const pixels = Math.round(width * (window.devicePixelRatio || 1));
    if (!element || pixels <= 0) return;
    const row = new Uint8ClampedArray(pixels * 4);
    paintRow(row, segments, highlightedPid);
    // memory moves by a few MiB a second: most updates change no pixel, and then nothing is put
    const before = shown.current;
    if (before && before.length === row.length && before.every((v, i) => v === row[i])) return;
    shown.current = row;
    if (element.width !== pixels) element.width = pixels;
    element.getContext('2d')?.putImageData(new ImageData(row, pixels, 1), 0, 0);
  }, [segments, width, highlightedPid]);
  const usedShare = Math.min(100, total > 0 ? ((used ?? 0) / total) * 100 : 0);
  const segmentAt = (clientX: number): MemorySegment | undefined => {
    const rect = box.current!.getBoundingClientRect();
    const at = ((clientX - rect.left) / rect.width) * 100;
    return segments.find((s) => at >= s.at && at < s.at + Math.max(s.length, 100 / Math.max(1, rect.width)));
  };
  const named = processes.slice(0, LABELLED).map((p) => `${processLabel(p)} ${formatBytes(p.usedMemory)}`);
  const label = `memory ${formatBytes(used)} of ${formatBytes(total)}${named.length ? `: ${named.join(', ')}` : ''}${processes.length > LABELLED ? ` and ${processes.length - LABELLED} more` : ''}`;
  const marked = highlightedPid === null ? undefined : segments.find((s) => s.pid === highlightedPid);
  return (
    <div
      className="memory-bar"
      ref={box}
      role="img"
      aria-label={label}
      data-segments={segments.length}
      // the hatch covers the used share; process pixels cover the hatch, leaving the driver's part
      style={{ backgroundSize: `${usedShare.toFixed(2)}% 100%` }}
      onMouseMove={(e) => {
        const segment = segmentAt(e.clientX);
        e.currentTarget.title = segment ? describe(segment, total, processes) : '';
        highlight(segment?.pid != null ? `p${segment.pid}` : null);
      }}
      onMouseLeave={() => highlight(null)}
    >
      <canvas ref={canvas} height={1} />
      {marked && <span className="memory-mark" style={{ left: `${marked.at}%`, width: `${marked.length}%` }} />}
    </div>
  );
}
