// The console: GPUs on top, timelines and alerts, the job board, then every process.
import { AlertList } from './components/AlertList.js';
import { GpuGrid } from './components/GpuGrid.js';
import { Header } from './components/Header.js';
import { JobBoard } from './components/JobBoard.js';
import { Notices } from './components/Notices.js';
import { ProcessTable } from './components/ProcessTable.js';
import { SimulatedBanner } from './components/SimulatedBanner.js';
import { TimelinePanel } from './components/TimelinePanel.js';

export function App() {
  return (
    <>
      <Header />
      <SimulatedBanner />
      <Notices />
      <main className="layout">
        <GpuGrid />
        <div className="row">
          <TimelinePanel />
          <AlertList />
        </div>
        <JobBoard />
        <ProcessTable />
      </main>
    </>
  );
}
