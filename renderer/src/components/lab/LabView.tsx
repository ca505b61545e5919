// The Lab view (`gpushare start --lab`): every box of the lab list at a glance, each person's use
// across the boxes, and where a job can start now. Opening a box loads that box's own console.
import { useStore } from 'zustand';
import { formatBytes } from '../../format.js';
import { utcClock } from './LabBoxCard.js';
import { useCalmSlice } from '../../stores/calm-slice.js';
import { useVisibleSlice } from '../../stores/in-view.js';
import { labStore } from '../../stores/lab-store.js';
import { InView } from '../InView.js';
import { TopBar } from '../TopBar.js';
import { LabBoxCard } from './LabBoxCard.js';
import { LabPeople } from './LabPeople.js';
import { LabWhere } from './LabWhere.js';
import './lab.css';

/** `home`: this box's own console, where there is one (the desktop app); the browser's lab console has none. */
function LabHeader({ home }: { home?: string }) {
  const connection = useStore(labStore, (s) => s.connection);
  const detail = useStore(labStore, (s) => s.connectionDetail);
  // the clock in seconds: at most once a second, however many updates the second brings
  const takenAt = useCalmSlice(labStore, (s) => s.update?.takenAt ?? null);
  return (
    <TopBar connection={connection} detail={detail}>
      <nav className="view-tabs" aria-label="Views">
        {home && (
          <a className="view-tab-link" href={home}>
            This box
          </a>
        )}
        <button type="button" className="on" aria-current="page">
          Lab
        </button>
      </nav>
      <div className="top-bar-facts">
        {takenAt !== null && <span>updated {utcClock(takenAt)}</span>}
        <span>{home ? 'desktop app · lab' : 'lab console'}</span>
      </div>
    </TopBar>
  );
}

/** The lab's totals, redrawn at most once a second (they are read, not watched). */
function LabTotals() {
  const totals = useCalmSlice(labStore, (s) => s.update?.view.totals ?? null);
  if (!totals) return <p className="muted lab-totals">Waiting for the lab's boxes…</p>;
  return (
    <p className="lab-totals" aria-label="lab totals">
      <strong>{totals.connected}</strong> of {totals.boxes} boxes connected · <strong>{totals.gpus}</strong> GPUs · <strong>{totals.processes}</strong> GPU processes · memory{' '}
      <strong>{formatBytes(totals.memoryUsed)}</strong> of {formatBytes(totals.memoryTotal)} in use
    </p>
  );
}

/**
 * A box is fed only while some of it is on screen, with no margin: the box just below the screen took a
 * third of an update that changed every box (bench/lab); one scrolling in catches up a frame later.
 */
const BOX_MARGIN = '0px';

/** One box's card, fed only while it is on screen (a lab of twenty boxes is several screens long). */
function LiveLabBox({ name }: { name: string }) {
  const box = useVisibleSlice(labStore, (s) => s.update?.view.boxes.find((b) => b.name === name) ?? null);
  const sampledAt = useVisibleSlice(labStore, (s) => s.update?.sampledAt[name] ?? null);
  return box ? <LabBoxCard box={box} sampledAt={sampledAt} /> : null;
}

/**
 * While the host (the lab console's server, or the desktop app's hub) does not answer, the boxes keep their
 * last figures, dimmed, with when they are from: a box's "connected" is then what it was, not what it is.
 */
function NotLive() {
  const connection = useStore(labStore, (s) => s.connection);
  const takenAt = useStore(labStore, (s) => s.update?.takenAt ?? null);
  if (connection === 'open' || takenAt === null) return null;
  return (
    <p className="lab-not-live" role="status">
      Not live: the figures below are as of {utcClock(takenAt)}.{' '}
      <button type="button" onClick={() => window.location.reload()}>
        Reload
      </button>
    </p>
  );
}

function LabBoxes() {
  // the list of names, as one string: this re-renders only when the lab list changes
  const names = useStore(labStore, (s) => (s.update ? s.update.view.boxes.map((b) => b.name).join('\n') : null));
  const live = useStore(labStore, (s) => s.connection === 'open');
  if (names === null) return null;
  if (names === '') return <p className="muted">The lab list has no boxes.</p>;
  return (
    <div className={`lab-boxes${live ? '' : ' stale'}`}>
      {names.split('\n').map((name) => (
        <InView key={name} margin={BOX_MARGIN}>
          <LiveLabBox name={name} />
        </InView>
      ))}
    </div>
  );
}

/** The people's table, fed only while it is on screen: below twenty boxes, it mostly is not. */
function LivePeople() {
  const people = useVisibleSlice(labStore, (s) => s.update?.people ?? null);
  return people ? <LabPeople people={people} /> : null;
}

export function LabApp({ home }: { home?: string }) {
  return (
    <>
      <LabHeader home={home} />
      <main className="layout lab-layout">
        <LabTotals />
        <NotLive />
        <LabBoxes />
        <div className="row">
          <InView>
            <LivePeople />
          </InView>
          <LabWhere />
        </div>
      </main>
    </>
  );
}
