// Switch between the live console, usage reports, the MIG planner and the lab policy; in the desktop
// app with a lab list, the Lab view too (another page: the app's lab hub serves it).
import { showsLab } from '../../../shared/bridge.js';
import { labConsoleHref } from '../../../shared/lab-console.js';
import { useNavigation } from '../stores/hooks.js';
import { showView, VIEWS } from '../stores/navigation-store.js';

export function ViewTabs() {
  const current = useNavigation((s) => s.view);
  const lab = useNavigation((s) => s.lab);
  const showLab = lab !== null && showsLab(lab);
  return (
    <nav className="view-tabs" aria-label="Views">
      {VIEWS.map(({ view, title }) => (
        <button key={view} type="button" className={view === current ? 'on' : ''} aria-current={view === current ? 'page' : undefined} onClick={() => showView(view)}>
          {title}
        </button>
      ))}
      {showLab && (
        <a className="view-tab-link" href={labConsoleHref(window.location.href, null)} title={lab.problem ?? `every box of the lab: ${lab.boxes.join(', ')}`}>
          Lab
        </a>
      )}
    </nav>
  );
}
