// A MIG GPU's slices on its eight memory slices (placement start/size), who runs in each, and the MPS
// daemon a slice runs with its clients' SM shares. A dropped queued job, or Enter, opens the slice's prompt.
import { useId, useMemo, useState, type KeyboardEvent } from 'react';
import type { GpuProcessView, MigSliceView } from '../../../shared/snapshot.js';
import { processColor } from '../colors.js';
import { processLabel } from '../data/process-label.js';
import { clientShares, narrowSliceMpsMark, sliceMpsClients, sliceMpsSentence, type SliceMpsClient } from '../data/slice-mps.js';
import { formatBytes } from '../format.js';
import { useJobs, useSpatial } from '../stores/hooks.js';
import { highlight } from '../stores/ui-store.js';
import { migSliceDropProps } from './mig-slice-drop.js';
import { MigSlicePrompt } from './MigSlicePrompt.js';

const MEMORY_SLICES = 8;

function sliceLabel(profile: string, placement: { start: number; size: number }, processes: number, sm: string | null, mps: string | null): string {
  const where = placement.size === 1 ? `memory slice ${placement.start + 1}` : `memory slices ${placement.start + 1}–${placement.start + placement.size}`;
  const who = processes === 0 ? 'idle' : `${processes} process${processes === 1 ? '' : 'es'}`;
  return `MIG slice ${profile} on ${where}, ${who}${sm ? `, ${sm}` : ''}${mps ? `, ${mps}` : ''}. Press Enter to run a queued job in it.`;
}

/** The slice's MPS daemon on its tile: "MPS j3 50% · j4 30%", or "MPS 2" where the tile is one memory slice wide. */
function SliceMpsMark({ clients, narrow }: { clients: readonly SliceMpsClient[]; narrow: boolean }) {
  return (
    <span className="mig-mps" title={sliceMpsSentence(clients)}>
      {narrow ? narrowSliceMpsMark(clients) : <><b>MPS</b> {clients.length === 0 ? <i>no clients</i> : clientShares(clients)}</>}
    </span>
  );
}

/** "SM 42%" from the slice's GPM reading; null where the driver gives none (before Hopper). */
const sliceSm = (slice: MigSliceView): string | null =>
  slice.smPercent === undefined || slice.smPercent === null ? null : `SM ${Math.round(slice.smPercent)}%`;

export function MigDiagram({ gpu, slices, processes }: { gpu: number; slices: readonly MigSliceView[]; processes: readonly GpuProcessView[] }) {
  const [prompting, setPrompting] = useState<{ uuid: string; dropped: string | null } | null>(null);
  const promptId = useId();
  const placed = slices.filter((s) => s.placement);
  const promptSlice = placed.find((s) => s.uuid === prompting?.uuid); // a slice that went away takes its prompt along
  const opensPrompt = (uuid: string) => (e: KeyboardEvent): void => {
    if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    setPrompting({ uuid, dropped: null });
  };
  // slices whose MPS daemon runs (mps.status), and the jobs that are its clients (jobs.list)
  const daemons = useSpatial((s) => s.mps.find((m) => m.gpu === gpu)?.slices);
  const jobs = useJobs((s) => s.jobs);
  const mpsClients = useMemo(() => new Map((daemons ?? []).map((d) => [d.uuid, sliceMpsClients(jobs, d.uuid)])), [daemons, jobs]);
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
        const clients = mpsClients.get(slice.uuid);
        const narrow = slice.placement!.size < 2;
        return (
          <div
            key={slice.uuid}
            {...migSliceDropProps(slice.uuid, (jobId) => setPrompting({ uuid: slice.uuid, dropped: jobId }))}
            className={`mig-slice${narrow ? ' narrow' : ''}${open ? ' prompting' : ''}${clients ? ' mps' : ''}`}
            style={{ gridColumn: `${slice.placement!.start + 1} / span ${slice.placement!.size}`, gridRow: 1 }}
            title={`${slice.uuid}\n${slice.smCount ?? '?'} SMs, ${formatBytes(slice.memoryUsed)} of ${formatBytes(slice.memoryTotal)}`}
            tabIndex={0}
            role="button"
            aria-label={sliceLabel(profile, slice.placement!, inside.length, sm, clients ? sliceMpsSentence(clients) : null)}
            aria-expanded={open}
            aria-controls={open ? promptId : undefined}
            onKeyDown={opensPrompt(slice.uuid)}
          >
            <span className="mig-profile">{profile}</span>
            <span className="mig-memory">{formatBytes(slice.memoryUsed)} / {formatBytes(slice.memoryTotal)}</span>
            {sm && <span className="mig-sm">{sm}</span>}
            {clients && <SliceMpsMark clients={clients} narrow={narrow} />}
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
        <MigSlicePrompt
          key={`${promptSlice.uuid} ${prompting?.dropped ?? ''}`}
          id={promptId}
          gpu={gpu}
          slice={promptSlice.uuid}
          profile={promptSlice.profileName ?? promptSlice.name}
          dropped={prompting?.dropped ?? null}
          daemonRuns={mpsClients.has(promptSlice.uuid)}
          onClose={() => setPrompting(null)}
        />
      )}
    </div>
  );
}
