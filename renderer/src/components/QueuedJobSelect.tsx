// Which job a prompt starts somewhere: the managed jobs still queued, plus the one dropped (if any).
import { useState, type Ref } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { shortCommand } from '../format.js';
import { useJobs } from '../stores/hooks.js';

export interface QueuedJobChoice {
  choices: JobView[];
  /** undefined when the picked job left the queue meanwhile: never swap in another one unasked. */
  chosen: JobView | undefined;
  choose: (id: string) => void;
}

export function useQueuedJobChoice(dropped: string | null): QueuedJobChoice {
  const jobs = useJobs((s) => s.jobs);
  const choices = jobs.filter((j) => j.id === dropped || (j.managed && j.state === 'queued'));
  const [picked, choose] = useState<string | null>(dropped);
  const chosen = picked === null ? choices[0] : choices.find((j) => j.id === picked);
  return { choices, chosen, choose };
}

export function QueuedJobSelect({ choice, ref }: { choice: QueuedJobChoice; ref?: Ref<HTMLSelectElement> }) {
  const { choices, chosen, choose } = choice;
  return (
    <select ref={ref} aria-label="Job" value={chosen?.id ?? ''} onChange={(e) => choose(e.target.value)}>
      {!chosen && <option value="">{choices.length === 0 ? 'no queued jobs' : 'pick a queued job'}</option>}
      {choices.map((j) => (
        <option key={j.id} value={j.id}>{j.id} · {shortCommand(j.argv, null).slice(0, 28)}</option>
      ))}
    </select>
  );
}
