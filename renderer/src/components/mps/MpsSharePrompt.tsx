// Which job, and what share of the GPU's SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1–100) it gets under MPS.
// The engine checks the share: a refusal comes back as a notice with its own words.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { runJobUnderMps } from '../../actions/spatial-actions.js';
import { QueuedJobSelect, useQueuedJobChoice } from '../QueuedJobSelect.js';

const DEFAULT_SHARE = '50';

export function MpsSharePrompt({ gpu, jobId, onClose }: { gpu: number; jobId: string | null; onClose: () => void }) {
  const choice = useQueuedJobChoice(jobId);
  const [share, setShare] = useState(DEFAULT_SHARE);
  const shareInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    shareInput.current?.focus();
    shareInput.current?.select();
  }, []);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    const job = choice.chosen;
    if (!job) return;
    onClose();
    void runJobUnderMps(job, gpu, Number(share.trim() === '' ? NaN : share));
  };
  return (
    <form
      className="mps-prompt"
      noValidate // the engine judges the share, and says why not
      aria-label={`Run a job under MPS on GPU ${gpu}`}
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        onClose();
      }}
    >
      <QueuedJobSelect choice={choice} />
      <label className="mps-share">
        SM share
        <input ref={shareInput} type="number" inputMode="numeric" min={1} max={100} step={1} aria-label="SM share in percent" value={share} onChange={(e) => setShare(e.target.value)} />
        %
      </label>
      <button type="submit" className="primary" disabled={!choice.chosen}>Run under MPS</button>
      <button type="button" onClick={onClose}>Cancel</button>
    </form>
  );
}
