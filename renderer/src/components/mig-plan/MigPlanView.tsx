// Plan a MIG layout for a job mix on one GPU: today's layout, the proposed one with the job in
// each slice, the nvidia-smi commands, and Apply (the engine refuses with its reasons, verbatim).
import { useEffect, useMemo } from 'react';
import type { MigLayoutView } from '../../../../shared/spatial.js';
import { loadMigLayout } from '../../actions/mig-plan-actions.js';
import { processLabel } from '../../data/process-label.js';
import { useGpus, useJobs, useMigPlan } from '../../stores/hooks.js';
import { MigJobMixPicker } from './MigJobMixPicker.js';
import { MigPlanOutcome } from './MigPlanOutcome.js';
import { MigSliceMap, type SliceBlock } from './MigSliceMap.js';

const DEFAULT_MEMORY_SLICES = 8;

function currentBlocks(layout: MigLayoutView): SliceBlock[] {
  return layout.slices.map((s) => ({
    start: s.placement.start,
    size: s.placement.size,
    profile: s.profile,
    label: s.processes.length === 0 ? 'idle' : s.processes.map((p) => processLabel(p)).join(', '),
    tone: 'current',
  }));
}

export function MigPlanView() {
  const gpus = useGpus((s) => s.snapshot?.gpus);
  const jobs = useJobs((s) => s.jobs);
  const gpu = useMigPlan((s) => s.gpu);
  const current = useMigPlan((s) => s.current);
  const result = useMigPlan((s) => s.result);
  const mixNames = useMigPlan((s) => s.mixNames);
  const refusal = useMigPlan((s) => s.refusal);
  const applyRefused = useMigPlan((s) => s.applyRefused);
  const queued = useMemo(() => jobs.filter((j) => j.managed && j.state === 'queued'), [jobs]);
  const firstMigGpu = gpus?.find((g) => g.migEnabled)?.index ?? gpus?.[0]?.index;
  useEffect(() => {
    if (gpu === null && firstMigGpu !== undefined) void loadMigLayout(firstMigGpu);
  }, [gpu, firstMigGpu]);
  // the engine names the mix's entries job1, job2, … in the order sent
  const nameOf = (planId: string): string => mixNames[Number(planId.replace(/^job/, '')) - 1] ?? planId;
  const memorySlices = current?.memorySlices ?? DEFAULT_MEMORY_SLICES;
  const planned: SliceBlock[] = (result?.planned ?? []).map((p) => ({
    start: p.placement.start,
    size: p.placement.size,
    profile: p.profile,
    // an MPS group names every job in it, with each one's SM limit; a job beside running work says so
    label: p.mps
      ? `${p.mps.map((m) => `${nameOf(m.jobId)} ${m.activeThreadPercentage}%`).join(' + ')} (MPS)`
      : p.jobId
      ? `${nameOf(p.jobId)}${p.busy ? `, beside pid ${p.busy.pids.join(', ')}` : ''}`
      : p.gpuInstanceId !== null ? `kept (GI ${p.gpuInstanceId})` : 'idle',
    tone: p.gpuInstanceId !== null ? 'kept' : 'new',
  }));
  return (
    <section className="panel mig-plan-view" aria-label="Plan MIG layout">
      <header className="panel-head">
        <h2>Plan MIG layout</h2>
        <select aria-label="GPU" value={gpu ?? ''} onChange={(e) => void loadMigLayout(Number(e.target.value))}>
          {(gpus ?? []).map((g) => (
            <option key={g.index} value={g.index}>GPU {g.index} · {g.name}{g.migEnabled ? ' · MIG on' : ''}</option>
          ))}
        </select>
        <span className="muted">plans for A100/H100/H200 (8 memory slices); applying needs root and idle slices</span>
      </header>
      <div className="mig-plan-body">
        <MigJobMixPicker queued={queued} />
        <div className="mig-plan-result">
          {current && (
            <MigSliceMap
              caption={`Today on GPU ${current.gpu}${current.migEnabled === false ? ' (MIG mode off)' : current.migEnabled === null ? ' (no MIG on this GPU)' : ''}`}
              blocks={currentBlocks(current)}
              memorySlices={memorySlices}
            />
          )}
          {result && <MigSliceMap caption="Proposed" blocks={planned} memorySlices={memorySlices} />}
          {refusal && (
            <div className="plan-refusal" role="alert">
              {refusal.split('\n').map((line) => <p key={line}>{line}</p>)}
            </div>
          )}
          {result && <MigPlanOutcome result={result} nameOf={nameOf} applyRefused={applyRefused} />}
          {!result && !refusal && <p className="muted">Pick queued jobs or type specs, then Plan to see a layout and its commands.</p>}
        </div>
      </div>
    </section>
  );
}
