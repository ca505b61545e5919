// The console: GPUs on top, timelines and alerts, the job board, then every process;
// or the Reports view, the MIG planner or the lab policy, picked by the header's tabs.
import { AlertList } from './components/AlertList.js';
import { GpuGrid } from './components/GpuGrid.js';
import { Header } from './components/Header.js';
import { InView } from './components/InView.js';
import { JobBoard } from './components/JobBoard.js';
import { LabPolicyView } from './components/LabPolicy.js';
import { MigPlanView } from './components/mig-plan/MigPlanView.js';
import { Notices } from './components/Notices.js';
import { ProcessTable } from './components/ProcessTable.js';
import { ReportsView } from './components/reports/ReportsView.js';
import { SimulatedBanner } from './components/SimulatedBanner.js';
import { StoreTroubleBanner } from './components/StoreTroubleBanner.js';
import { TimelinePanel } from './components/TimelinePanel.js';
import { useNavigation } from './stores/hooks.js';

function LiveConsole() {
  return (
    <main className="layout">
      <InView>
        <GpuGrid />
      </InView>
      <InView>
        <div className="row">
          <TimelinePanel />
          <AlertList />
        </div>
      </InView>
      <InView>
        <JobBoard />
      </InView>
      <InView>
        <ProcessTable />
      </InView>
    </main>
  );
}

export function App() {
  const view = useNavigation((s) => s.view);
  return (
    <>
      <Header />
      <SimulatedBanner />
      <StoreTroubleBanner />
      <Notices />
      {view === 'console' ? (
        <LiveConsole />
      ) : (
        <main className="layout">{view === 'reports' ? <ReportsView /> : view === 'lab-policy' ? <LabPolicyView /> : <MigPlanView />}</main>
      )}
    </>
  );
}
