// One box of the lab: its state in words (connected; reconnecting; down since when, and why), a
// link to its own console, and its GPUs at a glance: utilization, memory, whose processes, MIG
// slices and queued jobs. A box that is not connected keeps its last figures, dimmed, as of when.
import { memo, useLayoutEffect, useMemo, useRef } from 'react';
import { labConsoleHref, type LabConsoleGpu, type LabConsoleRow } from '../../../../shared/lab-console.js';
import { followPointer, useFiguresCanvas, writeGpuFigures } from './gpu-figures.js';
import { figuresHeight, userLineCount } from './tile-figures.js';

/** A time as the box's state line says it (shared/lab.ts): UTC, so "down since" and "as of" read alike. */
export const utcClock = (ms: number): string => new Date(ms).toISOString().slice(11, 19) + ' UTC';

const STATE_WORDS: Record<LabConsoleRow['state'], string> = { connecting: 'connecting', connected: 'connected', reconnecting: 'reconnecting', down: 'down' };

const sameGpu = (a: LabConsoleGpu, b: LabConsoleGpu): boolean =>
  a.index === b.index && a.name === b.name && a.lost === b.lost && a.utilization === b.utilization && a.memoryUsed === b.memoryUsed && a.memoryTotal === b.memoryTotal &&
  a.migSlices === b.migSlices && a.queued === b.queued && a.otherUsers === b.otherUsers && a.users.length === b.users.length &&
  a.users.every((u, i) => u.user === b.users[i].user && u.memoryBytes === b.users[i].memoryBytes && u.processes === b.users[i].processes);

/** A box re-renders only when something it shows changed (an unchanged row keeps its object; a whole update is new objects). */
const sameRow = (a: LabConsoleRow, b: LabConsoleRow): boolean =>
  a === b ||
  (a.name === b.name && a.state === b.state && a.status === b.status && a.updatedAt === b.updatedAt && a.queued === b.queued &&
    a.queuedAnyGpu === b.queuedAnyGpu && a.gpus.length === b.gpus.length && a.gpus.every((g, i) => sameGpu(g, b.gpus[i])));
const sameBox = (a: BoxProps, b: BoxProps): boolean => a.sampledAt === b.sampledAt && sameRow(a.box, b.box);

/** What React draws of a tile (its lines' count sets its canvas's height); the figures in it are writeGpuFigures's. */
const sameShape = (a: LabConsoleGpu, b: LabConsoleGpu): boolean =>
  a.index === b.index && a.name === b.name && a.lost === b.lost && a.migSlices === b.migSlices && a.queued === b.queued && a.users.length === b.users.length && (a.otherUsers > 0) === (b.otherUsers > 0);

/** A GPU's tile: React draws its head and its figures' canvas, with the figures' words under it left empty; its box's card writes and draws the figures. */
const GpuTile = memo(function GpuTile({ gpu }: { gpu: LabConsoleGpu }) {
  const figures = useFiguresCanvas();
  return (
    <div className={`lab-gpu${gpu.lost ? ' lost' : ''}`} data-gpu={gpu.index}>
      <div className="lab-gpu-head">
        <strong>GPU {gpu.index}</strong>
        <span className="muted" title={gpu.name}>{gpu.name.replace(/^NVIDIA /, '')}</span>
        {gpu.lost && <span className="lab-flag error">lost</span>}
        {gpu.migSlices > 0 && <span className="lab-flag">MIG · {gpu.migSlices} slices</span>}
        {gpu.queued > 0 && <span className="lab-flag queue">{gpu.queued} queued</span>}
      </div>
      <canvas ref={figures} className="lab-figures" style={{ height: figuresHeight(userLineCount(gpu)) }}>
        <span className="lab-meter">
          utilization <span className="lab-meter-value lab-util" />
        </span>
        <span className="lab-meter">
          memory <span className="lab-meter-value lab-mem" />
        </span>
        <ul className="lab-users" aria-label={`who runs on GPU ${gpu.index}`}>
          {/* keyed by place: a new order rewrites the lines' words rather than moving the lines */}
          {gpu.users.map((_, place) => (
            <li key={place} className="lab-user">
              <span className="lab-user-name" /> <span className="muted" />
            </li>
          ))}
          {gpu.users.length === 0 && <li className="muted" />}
          {gpu.otherUsers > 0 && <li className="muted" />}
        </ul>
      </canvas>
    </div>
  );
}, (a, b) => sameShape(a.gpu, b.gpu));

interface BoxProps {
  box: LabConsoleRow;
  /** When the box sampled what is shown (its clock). */
  sampledAt: number | null;
}

export const LabBoxCard = memo(function LabBoxCard({ box, sampledAt }: BoxProps) {
  const live = box.state === 'connected';
  // the page's address does not change while the Lab view is open: parse it once per box, not per update
  const consoleHref = useMemo(() => labConsoleHref(window.location.href, box.name), [box.name]);
  const tiles = useRef<HTMLDivElement>(null);
  // after every render of the card (its tiles render only within it): each tile's figures, as of this row
  useLayoutEffect(() => {
    const shown = tiles.current?.children;
    if (shown) box.gpus.forEach((gpu, place) => writeGpuFigures(shown[place], gpu));
  });
  return (
    <section className={`lab-box panel state-${box.state}`} data-box={box.name} data-state={box.state} data-updated={box.updatedAt ?? undefined} data-sampled={sampledAt ?? undefined} aria-label={`box ${box.name}`}>
      <div className="lab-box-head">
        <h2>{box.name}</h2>
        <span className={`lab-state state-${box.state}`}>{STATE_WORDS[box.state]}</span>
        <span className="muted">{box.reach}</span>
        {box.simulated && <span className="lab-flag">simulated GPUs</span>}
        {box.queued > 0 && <span className="lab-flag queue">{box.queued} queued{box.queuedAnyGpu > 0 ? ` (${box.queuedAnyGpu} for any GPU)` : ''}</span>}
        <span className="lab-box-spacer" />
        {live ? (
          <a className="lab-open" href={consoleHref}>
            Open {box.name}'s console →
          </a>
        ) : (
          <span className="lab-open muted" aria-disabled="true">console when connected</span>
        )}
      </div>
      {box.state !== 'connected' && (
        <p className={`lab-box-status state-${box.state}`} role="status">
          {box.status}
          {box.updatedAt !== null && box.gpus.length > 0 ? ` — figures below as of ${utcClock(box.updatedAt)}` : ''}
        </p>
      )}
      {box.gpus.length > 0 ? (
        <div ref={tiles} className={`lab-gpus${live ? '' : ' stale'}`} onPointerMove={followPointer} onPointerLeave={followPointer}>
          {box.gpus.map((gpu) => (
            <GpuTile key={gpu.index} gpu={gpu} />
          ))}
        </div>
      ) : (
        live && <p className="muted">No GPUs reported yet.</p>
      )}
    </section>
  );
}, sameBox);
