// Which queued job to run in a MIG slice: the keyboard path of dropping a job card on the slice.
// The engine checks the slice: a refusal comes back as a notice with its own words.
import { useEffect, useRef, type FormEvent } from 'react';
import { runJobInMigSlice } from '../actions/spatial-actions.js';
import { QueuedJobSelect, useQueuedJobChoice } from './QueuedJobSelect.js';

export function MigSlicePrompt({ id, slice, profile, onClose }: { id: string; slice: string; profile: string; onClose: () => void }) {
  const choice = useQueuedJobChoice(null);
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
