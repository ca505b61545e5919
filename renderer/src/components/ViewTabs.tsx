// Switch between the live console, usage reports, the MIG planner and the lab policy.
import { useNavigation } from '../stores/hooks.js';
import { showView, VIEWS } from '../stores/navigation-store.js';

export function ViewTabs() {
  const current = useNavigation((s) => s.view);
  return (
    <nav className="view-tabs" aria-label="Views">
      {VIEWS.map(({ view, title }) => (
        <button key={view} type="button" className={view === current ? 'on' : ''} aria-current={view === current ? 'page' : undefined} onClick={() => showView(view)}>
          {title}
        </button>
      ))}
    </nav>
  );
}
