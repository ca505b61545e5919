// The timelines of one GPU with their controls: window, pause, scroll back.
import { historySpan } from '../data/sample-history.js';
import { formatClock } from '../format.js';
import { uiStore, type TimelineWindow } from '../stores/ui-store.js';
import { useGpus, useUi } from '../stores/hooks.js';
import { ProcessTimeline } from './ProcessTimeline.js';

const WINDOWS: readonly TimelineWindow[] = [1, 10, 60];
const GIB = 1024 ** 3;

export function TimelinePanel() {
  const gpus = useGpus((s) => s.snapshot?.gpus ?? null);
  const latest = useGpus((s) => s.snapshot?.takenAt ?? 0);
  const minutes = useUi((s) => s.timelineMinutes);
  const chosenGpu = useUi((s) => s.timelineGpu);
  const pausedAt = useUi((s) => s.pausedAt);
  const scrollBackMs = useUi((s) => s.scrollBackMs);
  if (!gpus || gpus.length === 0) return <section className="panel timeline-panel" />;
  const gpu = gpus.find((g) => g.index === chosenGpu) ?? gpus[0];
  const span = historySpan(gpu.index);
  const windowMs = minutes * 60_000;
  const end = (pausedAt ?? latest) - scrollBackMs;
  const start = end - windowMs;
  const maxScrollBack = pausedAt !== null && span ? Math.max(0, pausedAt - span.first - windowMs / 2) : 0;
  const togglePause = (): void => uiStore.setState(pausedAt === null ? { pausedAt: latest, scrollBackMs: 0 } : { pausedAt: null, scrollBackMs: 0 });
  const scrollBy = (deltaMs: number): void => {
    if (pausedAt === null) uiStore.setState({ pausedAt: latest, scrollBackMs: 0 });
    const current = uiStore.getState().scrollBackMs;
    const limit = span ? Math.max(0, (uiStore.getState().pausedAt ?? latest) - span.first - windowMs / 2) : 0;
    uiStore.setState({ scrollBackMs: Math.min(limit, Math.max(0, current + deltaMs)) });
  };
  return (
    <section className="panel timeline-panel" aria-label="Timelines">
      <header className="panel-head">
        <h2>Timelines</h2>
        <div className="segmented" role="tablist" aria-label="GPU">
          {gpus.map((g) => (
            <button key={g.index} type="button" role="tab" aria-selected={g.index === gpu.index} className={g.index === gpu.index ? 'on' : ''} onClick={() => uiStore.setState({ timelineGpu: g.index })}>
              GPU {g.index}
            </button>
          ))}
        </div>
        <div className="segmented" aria-label="Window">
          {WINDOWS.map((w) => (
            <button key={w} type="button" className={w === minutes ? 'on' : ''} aria-pressed={w === minutes} onClick={() => uiStore.setState({ timelineMinutes: w })}>
              {w} min
            </button>
          ))}
        </div>
        <button type="button" className={`pause${pausedAt !== null ? ' on' : ''}`} onClick={togglePause} aria-pressed={pausedAt !== null}>
          {pausedAt === null ? '❚❚ Pause' : '▶ Live'}
        </button>
        {pausedAt !== null && (
          <label className="scroll-back">
            <span>back</span>
            <input
              type="range"
              min={0}
              max={Math.max(0, Math.round(maxScrollBack / 1000))}
              value={Math.round(scrollBackMs / 1000)}
              onChange={(e) => uiStore.setState({ scrollBackMs: Number(e.target.value) * 1000 })}
              aria-label="Scroll back in time (seconds)"
            />
            <span className="muted">to {formatClock(end)}</span>
          </label>
        )}
      </header>
      <div className="timelines" onWheel={(e) => e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY) ? scrollBy((e.deltaX || e.deltaY) * windowMs / 2000) : undefined}>
        <ProcessTimeline gpuIndex={gpu.index} metric="sm" start={start} end={end} yMax={100} live={pausedAt === null} migEnabled={gpu.migEnabled === true} />
        <ProcessTimeline gpuIndex={gpu.index} metric="memory" start={start} end={end} yMax={gpu.memoryTotal / GIB} live={pausedAt === null} migEnabled={gpu.migEnabled === true} />
      </div>
    </section>
  );
}
