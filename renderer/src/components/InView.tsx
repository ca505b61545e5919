// Tells the section inside whether it is on screen (with a margin, so it is fresh before it
// scrolls in): its store slices stop updating while it is not.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { InViewContext } from '../stores/in-view.js';

/** How far outside the viewport a section still counts as in view, unless the caller says otherwise. */
const MARGIN = '300px';

export function InView({ children, margin = MARGIN }: { children: ReactNode; margin?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [inView, setInView] = useState(true);
  useEffect(() => {
    // one callback may carry several changes for the box (out, then back in): the last is the current one
    const observer = new IntersectionObserver((entries) => setInView(entries[entries.length - 1].isIntersecting), { rootMargin: margin });
    observer.observe(box.current!);
    return () => observer.disconnect();
  }, [margin]);
  return (
    <div ref={box} className="in-view" data-in-view={inView}>
      <InViewContext.Provider value={inView}>{children}</InViewContext.Provider>
    </div>
  );
}
