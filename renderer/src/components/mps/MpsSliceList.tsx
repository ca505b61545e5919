// A MIG GPU's MPS daemons: the whole GPU's state first, then each slice running a daemon of its own
// (its profile and UUID tail, whose daemon, its clients and their SM shares). Shown while one runs.
import { useMemo } from 'react';
import type { MigSliceView } from '../../../../shared/snapshot.js';
import { clientShares, daemonStateText, sliceMpsClients, sliceMpsSentence, startedForHint, uuidTail } from '../../data/slice-mps.js';
import { useJobs, useSpatial } from '../../stores/hooks.js';

export function MpsSliceList({ gpu, slices }: { gpu: number; slices: readonly MigSliceView[] }) {
  const status = useSpatial((s) => s.mps.find((m) => m.gpu === gpu));
  const jobs = useJobs((s) => s.jobs);
  const rows = useMemo(
    () =>
      (status?.slices ?? []).map((daemon) => {
        const slice = slices.find((s) => s.uuid === daemon.uuid);
        return { daemon, profile: slice?.profileName ?? slice?.name ?? `GI ${daemon.gpuInstanceId}`, clients: sliceMpsClients(jobs, daemon.uuid) };
      }),
    [status, slices, jobs],
  );
  if (!status || rows.length === 0) return null;
  return (
    <div className="mps-slices" role="group" aria-label={`MPS daemons on GPU ${gpu}`}>
      <div className="mps-slices-head">
        <span className="stat-label">MPS</span>
        <span className={`mps-status mps-status-${status.state}`} title={startedForHint(status.startedFor) ?? undefined}>whole GPU: {daemonStateText(status)}</span>
      </div>
      {rows.map(({ daemon, profile, clients }) => (
        <div key={daemon.uuid} className="mps-slice-row" data-slice={daemon.uuid} title={[daemon.uuid, daemon.message, startedForHint(daemon.startedFor), sliceMpsSentence(clients)].filter(Boolean).join('\n')}>
          <span className="mps-slice-where">
            {profile} <span className="mps-slice-uuid">{uuidTail(daemon.uuid)}</span>
          </span>
          <span className={`mps-status mps-status-${daemon.state}`}>{daemonStateText(daemon)}</span>
          <span className="mps-slice-clients">{clients.length === 0 ? 'no clients' : clientShares(clients)}</span>
        </div>
      ))}
    </div>
  );
}
