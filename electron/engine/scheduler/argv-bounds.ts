// How much of a job's command line the daemon keeps and shows. A job runs with the argv and
// environment it was submitted with, up to SUBMITTED_BYTES_MAX together (kept until it ends); what
// every view, event, list and store row carries is its argv cut to SHOWN_ARGV_BYTES, its full
// length noted, so that no job's arguments make every tick and answer larger.
import type { JobView } from '../../../shared/jobs.js';

/** The argv a view shows: the arguments in order up to this many bytes in all (joined by spaces). */
export const SHOWN_ARGV_BYTES = 4096;
/** A submitted job's argv and environment together, counted as execve counts them (each string and its NUL). */
export const SUBMITTED_BYTES_MAX = 256 * 1024;

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The argv as views show it, and (when cut) the whole argv's count and length. */
export function shownArgv(argv: readonly string[]): Pick<JobView, 'argv' | 'argvCut'> {
  const whole = argv.reduce((sum, arg, i) => sum + bytes(arg) + (i > 0 ? 1 : 0), 0);
  if (whole <= SHOWN_ARGV_BYTES) return { argv: [...argv] };
  const shown: string[] = [];
  let left = SHOWN_ARGV_BYTES;
  for (const arg of argv) {
    const room = left - (shown.length > 0 ? 1 : 0);
    if (room <= 1) break;
    if (bytes(arg) <= room) {
      shown.push(arg);
      left = room - bytes(arg);
      continue;
    }
    shown.push(`${cutToBytes(arg, room - 3)}…`); // "…" is 3 bytes
    break;
  }
  return { argv: shown, argvCut: { arguments: argv.length, bytes: whole } };
}

/** What a submission's argv and environment come to, as execve counts them. */
export function submittedBytes(argv: readonly string[], env: readonly string[] = []): number {
  let total = 0;
  for (const s of argv) total += bytes(s) + 1;
  for (const s of env) total += bytes(s) + 1;
  return total;
}

function cutToBytes(text: string, max: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= max) return text;
  return buffer.subarray(0, Math.max(0, max)).toString('utf8').replace(/\uFFFD$/, ''); // not half a character
}
