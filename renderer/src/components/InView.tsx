// Tells the section inside whether it is on screen (with a margin, so it is fresh before it
// scrolls in): its store slices stop updating while it is not.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { InViewContext } from '../stores/in-view.js';

/** How far outside the viewport a section still counts as in view. */
const MARGIN = '300px';

export function InView({ children }: { children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [inView, setInView] = useState(true);
  useEffect(() => {
    // one callback may carry several changes for the box (out, then back in): the last is the current one
    const observer = new IntersectionObserver((entries) => setInView(entries[entries.length - 1].isIntersecting), { rootMargin: MARGIN });
    observer.observe(box.current!);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={box} className="in-view" data-in-view={inView}>
      <InViewContext.Provider value={inView}>{children}</InViewContext.Provider>
    </div>
  );
}
