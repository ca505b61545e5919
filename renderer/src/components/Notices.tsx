// Short-lived messages: above all, why the engine refused a drop. They sit in the corner
// of the window that leaves the cards they speak of in sight, re-placed as the page scrolls.
import { useLayoutEffect, useRef, useState } from 'react';
import { dismissNotice } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';
import { freeCorner, NOTICE_MARGIN, type Corner } from './notice-placement.js';

function cornerStyle(corner: Corner): React.CSSProperties {
  return {
    top: corner.startsWith('top') ? NOTICE_MARGIN.top : 'auto',
    bottom: corner.startsWith('bottom') ? NOTICE_MARGIN.bottom : 'auto',
    right: corner.endsWith('right') ? NOTICE_MARGIN.side : 'auto',
    left: corner.endsWith('left') ? NOTICE_MARGIN.side : 'auto',
  };
}

export function Notices() {
  const notices = useUi((s) => s.notices);
  const stack = useRef<HTMLDivElement>(null);
  const [corner, setCorner] = useState<Corner>('top-right');
  useLayoutEffect(() => {
    const selectors = notices.flatMap((n) => n.about);
    if (selectors.length === 0) return;
    const place = (): void => {
      const box = stack.current?.getBoundingClientRect();
      if (!box) return;
      const avoid = selectors.flatMap((s) => [...document.querySelectorAll(s)].map((e) => e.getBoundingClientRect()));
      const viewport = { width: document.documentElement.clientWidth, height: document.documentElement.clientHeight };
      setCorner(freeCorner(box, viewport, avoid));
    };
    place();
    window.addEventListener('scroll', place, { passive: true, capture: true });
    window.addEventListener('resize', place);
    return () => {
      window.removeEventListener('scroll', place, { capture: true });
      window.removeEventListener('resize', place);
    };
  }, [notices]);
  return (
    <div className="notices" ref={stack} aria-live="assertive" data-corner={corner} style={cornerStyle(corner)}>
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.tone}`} role="alert">
          <span>{n.text}</span>
          <button type="button" aria-label="Dismiss" onClick={() => dismissNotice(n.id)}>×</button>
        </div>
      ))}
    </div>
  );
}
