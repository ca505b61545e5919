// A process's surroundings as one short line, for the command line and the console alike.
import type { ProcessContext } from './snapshot.js';

/** The short form people see in `docker ps`: a container's name, else its id's first 12 characters. */
export function containerLabel(container: NonNullable<ProcessContext['container']>): string {
  return container.name ?? container.id.slice(0, 12);
}

/** One line for a process's surroundings ("container trainer · slurm 4242 · kernel 9f1c…"), or '' where none is known. */
export function describeContext(context: ProcessContext | null | undefined): string {
  if (!context) return '';
  const parts: string[] = [];
  if (context.container) {
    const by = context.containerUser ? ` by ${context.containerUser}` : '';
    parts.push(`${context.container.runtime} ${containerLabel(context.container)}${by}`);
  }
  if (context.slurmJobId) parts.push(`slurm ${context.slurmJobId}`);
  if (context.jupyterKernel) parts.push(`kernel ${context.jupyterKernel.notebook ?? context.jupyterKernel.id.slice(0, 8)}`);
  if (context.systemdUnit && !context.container && !context.slurmJobId) parts.push(context.systemdUnit);
  if (context.sshSession) parts.push(`ssh ${context.sshSession}`);
  return parts.join(' · ');
}
