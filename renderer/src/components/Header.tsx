// The top bar: what this console is connected to (which engine, as whom), and how fresh the data is.
import { useGpus, useUi } from '../stores/hooks.js';
import { formatClock } from '../format.js';
import { engineLabel, otherEngineWarnings } from './engine-label.js';
import { TopBar } from './TopBar.js';
import { ViewTabs } from './ViewTabs.js';
import { BOX_PARAM, labConsoleHref } from '../../../shared/lab-console.js';

/** The box of the lab this console shows (opened from the Lab view), or null. */
const labBox = new URLSearchParams(window.location.search).get(BOX_PARAM);

export function Header() {
  const connection = useGpus((s) => s.connection);
  const detail = useGpus((s) => s.connectionDetail);
  const transport = useGpus((s) => s.transportKind);
  const driver = useGpus((s) => s.snapshot?.driver ?? null);
  const takenAt = useGpus((s) => s.snapshot?.takenAt ?? null);
  const session = useUi((s) => s.session);
  const warnings = session ? otherEngineWarnings(session) : [];
  return (
    <>
      <TopBar connection={connection} detail={detail}>
        <ViewTabs />
        <div className="top-bar-facts">
          {driver && <span>driver {driver.driverVersion}</span>}
          {takenAt !== null && <span>sampled {formatClock(takenAt)}</span>}
          <span>{transport === 'desktop' ? 'desktop app' : 'browser console'}</span>
          {labBox !== null && (
            <span className="lab-box-crumb">
              box <strong>{labBox}</strong> ·{' '}
              <a className="lab-crumb" href={labConsoleHref(window.location.href, null)}>
                ← Lab
              </a>
            </span>
          )}
          {session && <span className="engine-label" data-engine={session.engine?.kind ?? 'unknown'}>{engineLabel(session)}</span>}
        </div>
      </TopBar>
      {warnings.map((warning) => (
        <div key={warning} className="engine-warning" role="status">
          {warning}
        </div>
      ))}
    </>
  );
}
