// The Slurm methods of the API: the prolog and epilog (root on the node, administrators), the task prolog's environment, and the list.
import type { Dispatcher } from '../api/dispatcher.js';
import type { SlurmJobs } from './slurm-jobs.js';

export function registerSlurmCommands(dispatcher: Dispatcher, slurm: SlurmJobs): void {
  dispatcher.register('slurm.prolog', (params, caller) => slurm.register(params, caller));
  dispatcher.register('slurm.epilog', (params, caller) => slurm.end(params.jobId, caller));
  dispatcher.register('slurm.taskEnv', (_params, caller) => slurm.taskEnv(caller));
  dispatcher.register('slurm.jobs', () => slurm.list());
}
