// Which job a prompt starts somewhere: the managed jobs still queued, plus the one dropped (if any).
import { useState, type Ref } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { shortCommand } from '../format.js';
import { useJobs } from '../stores/hooks.js';

export interface QueuedJobChoice {
  choices: JobView[];
  /** Why the engine would refuse a choice here (it is listed, disabled, with the reason); null: it may go. */
  refusalOf: (job: JobView) => string | null;
  /** undefined when the picked job left the queue meanwhile: never swap in another one unasked. */
  chosen: JobView | undefined;
  choose: (id: string) => void;
}

const noRefusal = (): null => null;

export function useQueuedJobChoice(dropped: string | null, refusalOf: (job: JobView) => string | null = noRefusal): QueuedJobChoice {
  const jobs = useJobs((s) => s.jobs);
  const choices = jobs.filter((j) => j.id === dropped || (j.managed && j.state === 'queued'));
  const [picked, choose] = useState<string | null>(dropped);
  const found = picked === null ? choices.find((j) => refusalOf(j) === null) : choices.find((j) => j.id === picked);
  const chosen = found && refusalOf(found) === null ? found : undefined;
  return { choices, refusalOf, chosen, choose };
}

export function QueuedJobSelect({ choice, ref }: { choice: QueuedJobChoice; ref?: Ref<HTMLSelectElement> }) {
  const { choices, chosen, choose, refusalOf } = choice;
  return (
    <select ref={ref} aria-label="Job" value={chosen?.id ?? ''} onChange={(e) => choose(e.target.value)}>
      {!chosen && <option value="">{choices.length === 0 ? 'no queued jobs' : 'pick a queued job'}</option>}
      {choices.map((j) => {
        const refusal = refusalOf(j);
        return (
          <option key={j.id} value={j.id} disabled={refusal !== null}>
            {j.id} · {shortCommand(j.argv, null).slice(0, 28)}{refusal ? ` — not here: ${refusal}` : ''}
          </option>
        );
      })}
    </select>
  );
}
