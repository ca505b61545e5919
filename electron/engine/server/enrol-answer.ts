// The engine's answer to a process that asks to enrol ({"kind":"enrol"} on the socket, from the preload
// library: native/preload/src/enrol.c): one JSON line, and with a grant the job's gate files as descriptors
// (SCM_RIGHTS), so the process never opens a gate path by name and cannot pick another job's slot. Who asks
// is the kernel's word (SO_PEERCRED); the message says nothing else. Then the connection ends.
import { closeSync, constants, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { requireNativeAddon } from '../gpu/nvml-addon.js';
import type { EnrolAnswer, EnrolPeer } from '../enrol/enrolment.js';

/** What the engine offers for enrolment (enrol/enrolment.ts). */
export interface Enroller {
  join(peer: EnrolPeer): EnrolAnswer;
  /** The answer never reached the process: it leaves the job (a job it made ends). */
  undo(jobId: string, pid: number): void;
}

interface FdNative {
  sendWithFds(fd: number, data: Buffer, fds: number[]): number;
}

let native: FdNative | null = null;
function loadNative(): FdNative {
  if (native) return native;
  const loaded = requireNativeAddon() as Partial<FdNative>;
  if (typeof loaded.sendWithFds !== 'function') throw new Error('The native addon is out of date (it has no sendWithFds). Run `npm run build:native`.');
  native = loaded as FdNative;
  return native;
}

/** The line the library reads: ok, the job, its slot and generation, and whether a park file follows. */
export function enrolLine(answer: EnrolAnswer): string {
  if (!answer.ok) return JSON.stringify({ kind: 'enrolled', ok: false, code: answer.code, message: answer.message.replace(/"/g, "'") }) + '\n';
  return JSON.stringify({ kind: 'enrolled', ok: true, job: answer.jobId, slot: answer.slot, generation: answer.generation, park: answer.files.park !== null }) + '\n';
}

/** Descriptors in the order the library takes them: the gate's directory, its control file (read-only), our activity (read-write), the park file. */
function openFiles(files: Extract<EnrolAnswer, { ok: true }>['files']): number[] {
  const opened: number[] = [];
  try {
    opened.push(openSync(files.dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW));
    opened.push(openSync(files.control, constants.O_RDONLY | constants.O_NOFOLLOW));
    opened.push(openSync(files.activity, constants.O_RDWR | constants.O_NOFOLLOW));
    if (files.park !== null) opened.push(openSync(files.park, constants.O_RDWR | constants.O_NOFOLLOW));
    return opened;
  } catch (error) {
    for (const fd of opened) closeSync(fd);
    throw error;
  }
}

/**
 * Answer one enrolment on `socket` and end it. `join` decides (enrol/enrolment.ts); null: this engine
 * enrols nobody (no scheduler or gate). The line goes out with the descriptors in one sendmsg, before
 * anything else was written on this connection.
 */
export function answerEnrolment(socket: Socket, peer: EnrolPeer, enroller: Enroller | null): EnrolAnswer {
  const join = enroller ? (p: EnrolPeer) => enroller.join(p) : null;
  let answer: EnrolAnswer = join ? join(peer) : { ok: false, code: 'no-gate', message: 'this engine enrols no process (no scheduler with a launch gate)' };
  const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  let fds: number[] = [];
  try {
    if (answer.ok) fds = openFiles(answer.files);
  } catch (error) {
    answer = { ok: false, code: 'internal', message: `the job's gate files could not be opened: ${error instanceof Error ? error.message : String(error)}` };
  }
  let delivered = false;
  try {
    if (typeof fd === 'number' && fd >= 0 && socket.writableLength === 0) delivered = loadNative().sendWithFds(fd, Buffer.from(enrolLine(answer)), fds) > 0;
  } catch {
    // the process went away, or stopped waiting (its bounded wait ran out): it runs on unmanaged
  } finally {
    for (const f of fds) closeSync(f);
  }
  if (answer.ok && !delivered) enroller?.undo(answer.jobId, peer.pid); // no job for a process that never heard it has one
  socket.end();
  return answer;
}
