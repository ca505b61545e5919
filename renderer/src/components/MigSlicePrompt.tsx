// Which queued job to run in a MIG slice: the keyboard path of dropping a job card on the slice.
// The engine checks the slice: a refusal comes back as a notice with its own words.
import { useCallback, useEffect, useRef, type FormEvent } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { runJobInMigSlice } from '../actions/spatial-actions.js';
import { QueuedJobSelect, useQueuedJobChoice } from './QueuedJobSelect.js';

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
  onClose: () => void;
}

export function MigSlicePrompt({ id, gpu, slice, profile, onClose }: Props) {
  const choice = useQueuedJobChoice(null, useCallback((job: JobView) => migSliceRefusal(job, gpu), [gpu]));
  const select = useRef<HTMLSelectElement>(null);
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
    onClose();
    void runJobInMigSlice(job, slice);
  };
  return (
    <form
      id={id}
      className="mig-slice-prompt"
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
      <button type="submit" className="primary" disabled={!choice.chosen}>Run in slice</button>
      <button type="button" onClick={onClose}>Cancel</button>
    </form>
  );
}
