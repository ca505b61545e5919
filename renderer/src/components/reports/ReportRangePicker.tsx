// The report's range: the last 24 h, 7 d or 30 d, or a custom from/to.
import { useReports } from '../../stores/hooks.js';
import { REPORT_PRESETS, reportsStore } from '../../stores/reports-store.js';
import { toLocalInput } from './report-format.js';

export function ReportRangePicker() {
  const preset = useReports((s) => s.preset);
  const since = useReports((s) => s.customSince);
  const until = useReports((s) => s.customUntil);
  const setTime = (field: 'customSince' | 'customUntil', value: string): void => {
    const ms = new Date(value).getTime();
    if (Number.isFinite(ms)) reportsStore.setState({ [field]: ms, preset: 'custom' });
  };
  return (
    <div className="report-range">
      <div className="segmented" aria-label="Range">
        {REPORT_PRESETS.map((p) => (
          <button key={p.preset} type="button" className={preset === p.preset ? 'on' : ''} aria-pressed={preset === p.preset} onClick={() => reportsStore.setState({ preset: p.preset })}>
            {p.title}
          </button>
        ))}
        <button type="button" className={preset === 'custom' ? 'on' : ''} aria-pressed={preset === 'custom'} onClick={() => reportsStore.setState({ preset: 'custom' })}>
          Custom
        </button>
      </div>
      {preset === 'custom' && (
        <>
          <label className="report-time">from <input type="datetime-local" aria-label="From" value={toLocalInput(since)} onChange={(e) => setTime('customSince', e.target.value)} /></label>
          <label className="report-time">to <input type="datetime-local" aria-label="To" value={toLocalInput(until)} onChange={(e) => setTime('customUntil', e.target.value)} /></label>
        </>
      )}
    </div>
  );
}
