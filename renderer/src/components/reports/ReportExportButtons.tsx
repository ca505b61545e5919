// Save the report on screen: CSV and JSON as shown, or the engine's HTML report with charts;
// in the desktop app also as a PDF, which its main process prints (a browser prints the HTML itself).
import { saveReport } from '../../actions/report-actions.js';
import { useGpus, useReports } from '../../stores/hooks.js';

export function ReportExportButtons() {
  const ready = useReports((s) => s.report !== null);
  const desktop = useGpus((s) => s.transportKind === 'desktop');
  return (
    <div className="report-exports" aria-label="Export">
      <span className="muted">Export</span>
      <button type="button" disabled={!ready} onClick={() => void saveReport('csv')}>CSV</button>
      <button type="button" disabled={!ready} onClick={() => void saveReport('json')}>JSON</button>
      <button type="button" disabled={!ready} onClick={() => void saveReport('html')} title="A self-contained HTML report with charts; print it to PDF, or use `gpushare report --format pdf` (with --by as here)">HTML report</button>
      {desktop && <button type="button" disabled={!ready} onClick={() => void saveReport('pdf')} title="The HTML report printed to PDF by the desktop app">PDF</button>}
    </div>
  );
}
