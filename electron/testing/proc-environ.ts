// A process's environment as the kernel holds it (/proc/PID/environ: what it was started with).
import { readFileSync } from 'node:fs';

/** NAME → value of every entry (tests read their jobs' with it: the root tests any process's). */
export function processEnvironment(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((entry) => entry.includes('='))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}
