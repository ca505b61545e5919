// Start or stop the engine's MPS daemon for one GPU. No button while another user holds MPS
// or the engine has none: the zone's title says why.
import { useState } from 'react';
import type { MpsGpuStatus } from '../../../../shared/spatial.js';
import { switchMps } from '../../actions/spatial-actions.js';

export function MpsControls({ gpu, status }: { gpu: number; status: MpsGpuStatus | undefined }) {
  const [busy, setBusy] = useState(false);
  if (status?.state !== 'off' && status?.state !== 'ours') return null;
  const on = status.state === 'off';
  const click = async (): Promise<void> => {
    setBusy(true);
    try {
      await switchMps(gpu, on);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button
      type="button"
      className="mps-switch"
      disabled={busy}
      title={on ? `Start an MPS daemon for GPU ${gpu}, so jobs can share its SMs at once` : `Stop the MPS daemon of GPU ${gpu}`}
      onClick={() => void click()}
    >
      {on ? (busy ? 'Starting…' : 'Start MPS') : busy ? 'Stopping…' : 'Stop MPS'}
    </button>
  );
}
