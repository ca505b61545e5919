// A GPU's memory split by process: one coloured segment each, the driver's share in grey.
// Segments are keyed by position (the order follows memory and changes every few ticks:
// updating a segment in place is cheaper than moving it) and skip re-rendering unless what
// they show changed; widths are rounded to 0.1 % of the bar, well under a pixel.
import { memo } from 'react';
import type { GpuProcessView } from '../../../shared/snapshot.js';
import { processColor } from '../colors.js';
import { formatBytes } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';

interface Props {
  total: number;
  used: number | null;
  processes: readonly GpuProcessView[];
}

const leaveHandler = (): void => highlight(null);

interface SegmentProps {
  pid: number;
  width: string;
  title: string;
  highlighted: boolean;
}

const MemorySegment = memo(function MemorySegment({ pid, width, title, highlighted }: SegmentProps) {
  return (
    <span
      className={`memory-segment${highlighted ? ' highlighted' : ''}`}
      style={{ width, background: processColor(pid) }}
      title={title}
      onMouseEnter={() => highlight(`p${pid}`)}
      onMouseLeave={leaveHandler}
    />
  );
});

export function MemoryBar({ total, used, processes }: Props) {
  const highlighted = useUi((s) => s.highlighted);
  const byProcess = processes.reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
  const other = Math.max(0, (used ?? byProcess) - byProcess);
  const percent = (bytes: number): string => `${Math.round(Math.min(100, (bytes / total) * 100) * 10) / 10}%`;
  return (
    <div className="memory-bar" role="img" aria-label={`memory ${formatBytes(used)} of ${formatBytes(total)}`}>
      {processes.map((p, i) => (
        <MemorySegment
          key={i}
          pid={p.pid}
          width={percent(p.usedMemory ?? 0)}
          title={`${p.command ?? '?'} (pid ${p.pid}, ${p.user ?? '?'}): ${formatBytes(p.usedMemory)}`}
          highlighted={highlighted === `p${p.pid}`}
        />
      ))}
      {other > 0 && <span className="memory-segment memory-other" style={{ width: percent(other) }} title={`driver and unattributed: ${formatBytes(other)}`} />}
    </div>
  );
}
