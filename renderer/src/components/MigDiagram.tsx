// A MIG GPU's slices on its eight memory slices (placement start/size), and who runs in each.
import type { GpuProcessView, MigSliceView } from '../../../shared/snapshot.js';
import { processColor } from '../colors.js';
import { formatBytes } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { migSliceDropProps } from './mig-slice-drop.js';

const MEMORY_SLICES = 8;

export function MigDiagram({ slices, processes }: { slices: readonly MigSliceView[]; processes: readonly GpuProcessView[] }) {
  const placed = slices.filter((s) => s.placement);
  return (
    <div className="mig-diagram" style={{ gridTemplateColumns: `repeat(${MEMORY_SLICES}, 1fr)` }} aria-label="MIG slices">
      {Array.from({ length: MEMORY_SLICES }, (_, i) => (
        <span key={`cell${i}`} className="mig-cell" style={{ gridColumn: i + 1, gridRow: 1 }} />
      ))}
      {placed.map((slice) => {
        const inside = processes.filter((p) => p.gpuInstanceId === slice.gpuInstanceId && p.computeInstanceId === slice.computeInstanceId);
        return (
          <div
            key={slice.uuid}
            {...migSliceDropProps(slice.uuid)}
            className={`mig-slice${slice.placement!.size < 2 ? ' narrow' : ''}`}
            style={{ gridColumn: `${slice.placement!.start + 1} / span ${slice.placement!.size}`, gridRow: 1 }}
            title={`${slice.uuid}\n${slice.smCount ?? '?'} SMs, ${formatBytes(slice.memoryUsed)} of ${formatBytes(slice.memoryTotal)}`}
          >
            <span className="mig-profile">{slice.profileName ?? slice.name}</span>
            <span className="mig-memory">{formatBytes(slice.memoryUsed)} / {formatBytes(slice.memoryTotal)}</span>
            <span className="mig-procs">
              {inside.length === 0 && <i>idle</i>}
              {inside.map((p) => (
                <span key={p.pid} className="pid-chip" style={{ borderColor: processColor(p.pid) }} onMouseEnter={() => highlight(`p${p.pid}`)} onMouseLeave={() => highlight(null)}>
                  {p.user ?? '?'} · {p.pid}
                </span>
              ))}
            </span>
          </div>
        );
      })}
      {placed.length === 0 && <div className="mig-empty">MIG is on, no slices yet.</div>}
    </div>
  );
}
