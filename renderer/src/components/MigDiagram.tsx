// A MIG GPU's slices on its eight memory slices (placement start/size), and who runs in each.
// A slice takes a dropped queued job, or Enter opens a prompt to pick one.
import { useId, useState, type KeyboardEvent } from 'react';
import type { GpuProcessView, MigSliceView } from '../../../shared/snapshot.js';
import { processColor } from '../colors.js';
import { processLabel } from '../data/process-label.js';
import { formatBytes } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { migSliceDropProps } from './mig-slice-drop.js';
import { MigSlicePrompt } from './MigSlicePrompt.js';

const MEMORY_SLICES = 8;

function sliceLabel(profile: string, placement: { start: number; size: number }, processes: number, sm: string | null): string {
  const where = placement.size === 1 ? `memory slice ${placement.start + 1}` : `memory slices ${placement.start + 1}–${placement.start + placement.size}`;
  const who = processes === 0 ? 'idle' : `${processes} process${processes === 1 ? '' : 'es'}`;
  return `MIG slice ${profile} on ${where}, ${who}${sm ? `, ${sm}` : ''}. Press Enter to run a queued job in it.`;
}

/** "SM 42%" from the slice's GPM reading; null where the driver gives none (before Hopper). */
const sliceSm = (slice: MigSliceView): string | null =>
  slice.smPercent === undefined || slice.smPercent === null ? null : `SM ${Math.round(slice.smPercent)}%`;

export function MigDiagram({ gpu, slices, processes }: { gpu: number; slices: readonly MigSliceView[]; processes: readonly GpuProcessView[] }) {
  const [prompting, setPrompting] = useState<string | null>(null);
  const promptId = useId();
  const placed = slices.filter((s) => s.placement);
  const promptSlice = placed.find((s) => s.uuid === prompting); // a slice that went away takes its prompt along
  const opensPrompt = (uuid: string) => (e: KeyboardEvent): void => {
    if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    setPrompting(uuid);
  };
  return (
    <div className="mig-diagram" style={{ gridTemplateColumns: `repeat(${MEMORY_SLICES}, 1fr)` }} aria-label="MIG slices">
      {Array.from({ length: MEMORY_SLICES }, (_, i) => (
        <span key={`cell${i}`} className="mig-cell" style={{ gridColumn: i + 1, gridRow: 1 }} />
      ))}
      {placed.map((slice) => {
        const inside = processes.filter((p) => p.gpuInstanceId === slice.gpuInstanceId && p.computeInstanceId === slice.computeInstanceId);
        const profile = slice.profileName ?? slice.name;
        const open = slice === promptSlice;
        const sm = sliceSm(slice);
        return (
          <div
            key={slice.uuid}
            {...migSliceDropProps(slice.uuid)}
            className={`mig-slice${slice.placement!.size < 2 ? ' narrow' : ''}${open ? ' prompting' : ''}`}
            style={{ gridColumn: `${slice.placement!.start + 1} / span ${slice.placement!.size}`, gridRow: 1 }}
            title={`${slice.uuid}\n${slice.smCount ?? '?'} SMs, ${formatBytes(slice.memoryUsed)} of ${formatBytes(slice.memoryTotal)}`}
            tabIndex={0}
            role="button"
            aria-label={sliceLabel(profile, slice.placement!, inside.length, sm)}
            aria-expanded={open}
            aria-controls={open ? promptId : undefined}
            onKeyDown={opensPrompt(slice.uuid)}
          >
            <span className="mig-profile">{profile}</span>
            <span className="mig-memory">{formatBytes(slice.memoryUsed)} / {formatBytes(slice.memoryTotal)}</span>
            {sm && <span className="mig-sm">{sm}</span>}
            <span className="mig-procs">
              {inside.length === 0 && <i>idle</i>}
              {inside.map((p) => (
                <span key={p.pid} className="pid-chip" style={{ borderColor: processColor(p.pid) }} onMouseEnter={() => highlight(`p${p.pid}`)} onMouseLeave={() => highlight(null)}>
                  {processLabel(p)}
                </span>
              ))}
            </span>
          </div>
        );
      })}
      {placed.length === 0 && <div className="mig-empty">MIG is on, no slices yet.</div>}
      {promptSlice && (
        <MigSlicePrompt key={promptSlice.uuid} id={promptId} gpu={gpu} slice={promptSlice.uuid} profile={promptSlice.profileName ?? promptSlice.name} onClose={() => setPrompting(null)} />
      )}
    </div>
  );
}
