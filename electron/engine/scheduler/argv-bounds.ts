// How much of a job's command line the engine keeps and shows. A job runs with the argv and
// environment it was submitted with, up to SUBMITTED_BYTES_MAX together (held until it ends); what
// every view, event, list and store row carries is its argv cut as a snapshot cuts a process's
// command line (proc/text-bounds.ts: 4 KB of JSON), argvCut then giving the whole one's size, so
// that no job's arguments make every tick and answer larger.
import type { JobView } from '../../../shared/jobs.js';
import { ARGV_MAX_JSON_BYTES, cutArgv } from '../proc/text-bounds.js';

/** The argv a view shows: at most this many bytes of JSON, as a process's command line in a snapshot. */
export const SHOWN_ARGV_BYTES = ARGV_MAX_JSON_BYTES;
/** A submitted job's argv and environment together, counted as execve counts them (each string and its NUL). */
export const SUBMITTED_BYTES_MAX = 256 * 1024;

/** The argv as views show it, and (when cut) the whole argv's size, counted as /proc/PID/cmdline counts it. */
export function shownArgv(argv: readonly string[]): Pick<JobView, 'argv' | 'argvCut'> {
  const { argv: shown, cut } = cutArgv(argv, SHOWN_ARGV_BYTES);
  return cut ? { argv: shown, argvCut: { bytes: submittedBytes(argv), args: argv.length } } : { argv: [...argv] };
}

/** What a submission's argv and environment come to, as execve counts them. */
export function submittedBytes(argv: readonly string[], env: readonly string[] = []): number {
  let total = 0;
  for (const s of argv) total += Buffer.byteLength(s, 'utf8') + 1;
  for (const s of env) total += Buffer.byteLength(s, 'utf8') + 1;
  return total;
}
