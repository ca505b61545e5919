// A GPU's memory split by process: one coloured segment each, the driver's share in grey.
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

export function MemoryBar({ total, used, processes }: Props) {
  const highlighted = useUi((s) => s.highlighted);
  const byProcess = processes.reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
  const other = Math.max(0, (used ?? byProcess) - byProcess);
  const percent = (bytes: number): string => `${Math.min(100, (bytes / total) * 100)}%`;
  return (
    <div className="memory-bar" role="img" aria-label={`memory ${formatBytes(used)} of ${formatBytes(total)}`}>
      {processes.map((p) => {
        const key = `p${p.pid}`;
        return (
          <span
            key={key}
            className={`memory-segment${highlighted === key ? ' highlighted' : ''}`}
            style={{ width: percent(p.usedMemory ?? 0), background: processColor(p.pid) }}
            title={`${p.command ?? '?'} (pid ${p.pid}, ${p.user ?? '?'}): ${formatBytes(p.usedMemory)}`}
            onMouseEnter={() => highlight(key)}
            onMouseLeave={() => highlight(null)}
          />
        );
      })}
      {other > 0 && <span className="memory-segment memory-other" style={{ width: percent(other) }} title={`driver and unattributed: ${formatBytes(other)}`} />}
    </div>
  );
}
