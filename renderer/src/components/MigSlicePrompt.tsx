// Which queued job to run in a MIG slice (opened by Enter on the slice or by a job dropped on it), and
// whether it shares the slice through the slice's MPS daemon with an SM share. A share that is no whole
// percentage from 1 to 100 is named here and nothing is sent; the engine checks the rest, and a refusal
// comes back as a notice with its own words.
import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { runJobInMigSlice } from '../actions/spatial-actions.js';
import { parseSmShare } from '../data/slice-mps.js';
import { QueuedJobSelect, useQueuedJobChoice } from './QueuedJobSelect.js';

const DEFAULT_SHARE = '50';

/** What jobs.setMode refuses for a slice of GPU `gpu`: a job queued for another GPU, or one already running. */
export function migSliceRefusal(job: JobView, gpu: number): string | null {
  if (job.state !== 'queued') return `it already runs${job.gpu === null ? '' : ` on GPU ${job.gpu}`}`;
  if (job.requestedGpu !== 'auto' && job.requestedGpu !== gpu) return `queued for GPU ${job.requestedGpu}`;
  return null;
}

interface Props {
  id: string;
  /** The GPU the slice is on. */
  gpu: number;
  slice: string;
  profile: string;
  /** The job dropped on the slice, chosen already; null when opened from the keyboard. */
  dropped: string | null;
  /** The slice's MPS daemon runs: sharing it is what the next job most likely wants. */
  daemonRuns: boolean;
  onClose: () => void;
}

export function MigSlicePrompt({ id, gpu, slice, profile, dropped, daemonRuns, onClose }: Props) {
  const choice = useQueuedJobChoice(dropped, useCallback((job: JobView) => migSliceRefusal(job, gpu), [gpu]));
  const [sharing, setSharing] = useState(daemonRuns);
  const [share, setShare] = useState(DEFAULT_SHARE);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();
  const select = useRef<HTMLSelectElement>(null);
  const shareInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const opener = document.activeElement;
    select.current?.focus();
    // back to the slice that opened it, so the keyboard stays where it was
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    const job = choice.chosen;
    if (!job) return;
    const parsed = sharing ? parseSmShare(share) : null;
    if (parsed?.error) {
      setError(parsed.error);
      shareInput.current?.focus();
      return;
    }
    onClose();
    void runJobInMigSlice(job, slice, parsed?.share ?? null);
  };
  return (
    <form
      id={id}
      className="mig-slice-prompt"
      noValidate // the share is judged below, in words
      aria-label={`Run a queued job in MIG slice ${profile}`}
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        onClose();
      }}
    >
      <span className="mig-slice-prompt-title">Run in {profile}</span>
      <QueuedJobSelect ref={select} choice={choice} />
      <label className="mig-slice-mps" title="Jobs sharing a slice through its MPS daemon run at once, each on its share of the slice's SMs">
        <input
          type="checkbox"
          checked={sharing}
          onChange={(e) => {
            setSharing(e.target.checked);
            setError(null);
          }}
        />
        Share the slice through MPS
      </label>
      <label className="mps-share">
        SM share
        <input
          ref={shareInput}
          type="text"
          inputMode="numeric"
          aria-label="SM share of the slice in percent"
          aria-invalid={error !== null}
          aria-describedby={error ? errorId : undefined}
          disabled={!sharing}
          value={share}
          onChange={(e) => {
            setShare(e.target.value);
            setError(null);
          }}
        />
        %
      </label>
      <button type="submit" className="primary" disabled={!choice.chosen}>{sharing ? 'Run in slice under MPS' : 'Run in slice'}</button>
      <button type="button" onClick={onClose}>Cancel</button>
      {error && (
        <span id={errorId} className="prompt-error" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}
