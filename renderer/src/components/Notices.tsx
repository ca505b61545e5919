// Short-lived messages: above all, why the engine refused a drop.
import { dismissNotice } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';

export function Notices() {
  const notices = useUi((s) => s.notices);
  return (
    <div className="notices" aria-live="assertive">
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.tone}`} role="alert">
          <span>{n.text}</span>
          <button type="button" aria-label="Dismiss" onClick={() => dismissNotice(n.id)}>×</button>
        </div>
      ))}
    </div>
  );
}
