// One personal engine per usage store and per job-log folder. A second engine given only its own
// socket (another simulated box for `gpushare lab`, started with its own XDG_RUNTIME_DIR) would
// number its jobs as the first does, write over the same jN.log names and, at its next start,
// re-adopt the other engine's jobs as its own. Each place gets a claim file naming the socket of
// the engine that uses it; a claim whose socket no longer answers is an engine that died, and is taken over.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { socketAnswers } from './server/socket-server.js';

/** A place an engine keeps to itself, and how an error names it. */
export interface ClaimedPlace {
  what: string;
  path: string;
  /** The claim file: beside a store (`usage.db.engine`), inside a folder (`engine`). */
  claimFile: string;
}

export const storePlace = (db: string): ClaimedPlace => ({ what: 'usage store', path: db, claimFile: `${db}.engine` });
export const jobLogsPlace = (stateDir: string): ClaimedPlace => ({ what: 'job logs folder', path: stateDir, claimFile: join(stateDir, 'engine') });

export const SECOND_ENGINE_NEEDS = 'a second engine, such as another simulated box for `gpushare lab`, needs its own: XDG_RUNTIME_DIR, XDG_DATA_HOME and XDG_STATE_HOME';

export interface EngineClaim {
  /** Give the places back (only claims that still name this engine's socket). */
  release(): void;
}

/** Claim every place for the engine that will answer on `socket`, or refuse naming the engine that uses one; nothing is claimed when one is refused. */
export async function claimPlaces(places: readonly ClaimedPlace[], socket: string): Promise<EngineClaim> {
  for (const place of places) {
    const holder = claimHolder(place.claimFile);
    if (holder && holder !== socket && (await socketAnswers(holder))) throw new Error(`The ${place.what} ${place.path} is in use by the gpushare engine on ${holder} (${SECOND_ENGINE_NEEDS}).`);
  }
  const written = places.filter((place) => write(place.claimFile, socket));
  return {
    release() {
      for (const place of written) if (claimHolder(place.claimFile) === socket) remove(place.claimFile);
    },
  };
}

function claimHolder(file: string): string | null {
  try {
    const claim = JSON.parse(readFileSync(file, 'utf8')) as { socket?: unknown };
    return typeof claim.socket === 'string' ? claim.socket : null;
  } catch {
    return null; // none, or not one we can read: nothing to refuse on
  }
}

/** A claim that cannot be written (a folder not writable: the store says so itself) guards nothing and stops nothing. */
function write(file: string, socket: string): boolean {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ socket, pid: process.pid }) + '\n', { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

function remove(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}
