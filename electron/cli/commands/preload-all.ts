// `gpushare daemon install --preload-all` / `--no-preload-all`: the box-wide route of enrolment, the
// preload library named in /etc/ld.so.preload, so that every process of the box loads it (an admin's
// choice). The file's other entries are kept byte for byte; it is replaced whole by rename.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { outsideAsar } from '../../engine/paths.js';

export const LD_SO_PRELOAD = '/etc/ld.so.preload';
export const PRELOAD_LIBRARY_NAME = 'libgpushare-preload.so';
/** The admin's kill switch: while it exists no process enrols (native/preload/src/enrol.c, GS_PRELOAD_OFF_FILE). */
export const PRELOAD_OFF_FILE = '/etc/gpushare/preload-off';

/** The library an installation loads into every process: its absolute path, outside any asar. */
export const installedPreloadLibrary = (packageRoot: string): string => outsideAsar(join(packageRoot, 'native', 'preload', 'build', PRELOAD_LIBRARY_NAME));

export type PreloadChange = 'added' | 'kept' | 'replaced' | 'removed' | 'absent';

export interface PreloadPlan {
  /** The file's new text; null: remove the file (it held only gpushare's entry, and we are taking it out). */
  text: string | null;
  change: PreloadChange;
  /** gpushare libraries of other installations the file named (replaced or removed). */
  others: string[];
  /** Every gpushare entry the file named. */
  found: string[];
}

const isOurs = (entry: string): boolean => basename(entry) === PRELOAD_LIBRARY_NAME;

/**
 * What /etc/ld.so.preload becomes. The loader reads it as entries parted by spaces, tabs, colons and
 * line breaks: only our entries change, every other byte stays where it was.
 */
export function planPreloadAll(current: string | null, library: string, on: boolean): PreloadPlan {
  const text = current ?? '';
  const entries = [...text.matchAll(/[^ \t\n:]+/g)];
  const ours = entries.filter((m) => isOurs(m[0]));
  const found = [...new Set(ours.map((m) => m[0]))];
  const others = found.filter((e) => e !== library);
  const dropOurs = (keepFirstAs?: string): string => {
    let out = '';
    let at = 0;
    ours.forEach((m, i) => {
      out += text.slice(at, m.index);
      at = m.index! + m[0].length;
      if (i === 0 && keepFirstAs !== undefined) out += keepFirstAs;
      else if (text[at] === '\n' && (m.index === 0 || text[m.index! - 1] === '\n')) at++; // the entry was its own line: the line goes
    });
    return out + text.slice(at);
  };
  if (on) {
    if (ours.length === 1 && ours[0][0] === library) return { text, change: 'kept', others, found };
    if (ours.length > 0) return { text: dropOurs(library), change: 'replaced', others, found };
    return { text: `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${library}\n`, change: 'added', others, found };
  }
  if (ours.length === 0) return { text: current, change: 'absent', others, found };
  const rest = dropOurs();
  return { text: rest.trim() === '' ? null : rest, change: 'removed', others, found };
}

export class PreloadAllError extends Error {}

/**
 * Refuses a library that would break programs: not an absolute path to a regular file, or one that does
 * not load silently into /bin/true (an unresolved symbol there would stop every program of the box).
 */
export function checkLibraryLoadsCleanly(library: string): void {
  if (!isAbsolute(library)) throw new PreloadAllError(`the preload library must be named by its absolute path, got "${library}".`);
  if (/[\s:]/.test(library)) throw new PreloadAllError(`the preload library's path ${JSON.stringify(library)} holds a space or a colon, which part entries in ${LD_SO_PRELOAD}: install gpushare where its path has neither.`);
  if (!existsSync(library) || !statSync(library).isFile()) throw new PreloadAllError(`${library} is missing: build it first (npm run build:native, or make -C native/preload).`);
  const probe = spawnSync('/bin/true', { env: { PATH: '/usr/bin:/bin', LD_PRELOAD: library }, encoding: 'utf8', timeout: 10_000 });
  if (probe.status !== 0 || probe.stderr !== '') {
    throw new PreloadAllError(`${library} does not load cleanly (/bin/true with it: exit ${probe.status ?? probe.signal}, stderr ${JSON.stringify(probe.stderr.trim())}); ${LD_SO_PRELOAD} is unchanged.`);
  }
}

/** 32-bit loaders on the box: their programs read the same file and cannot load a 64-bit library (the loader says so on stderr). */
export function foreignLoaders(root = '/'): string[] {
  return ['/lib/ld-linux.so.2', '/lib/ld-linux-armhf.so.3', '/libx32/ld-linux-x32.so.2'].filter((l) => existsSync(join(root, l)));
}

/** The plan for `root`'s ld.so.preload, checked before anything is written (the install's rule). */
export function preparePreloadAll(root: string, library: string, on: boolean): { file: string; plan: PreloadPlan } {
  const file = join(root, LD_SO_PRELOAD);
  if (existsSync(file) && !lstatSync(file).isFile()) throw new PreloadAllError(`${file} is not a regular file (a link?): not changed; edit it by hand.`);
  if (on) checkLibraryLoadsCleanly(library);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  return { file, plan: planPreloadAll(current, library, on) };
}

/** Writes the plan (whole, by rename, mode 0644) and says what it did. */
export function applyPreloadAll(file: string, library: string, plan: PreloadPlan, say: (line: string) => void): void {
  if (plan.text !== null && (plan.change === 'added' || plan.change === 'replaced' || plan.change === 'removed')) {
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, plan.text, { mode: 0o644 });
    chmodSync(temp, 0o644);
    renameSync(temp, file);
  } else if (plan.change === 'removed') rmSync(file);
  const also = plan.others.length > 0 ? ` (in place of ${plan.others.join(', ')})` : '';
  switch (plan.change) {
    case 'added':
      return say(`added ${library} to ${file}: every program started from now on loads it, and enrols at its first CUDA call (to stop all enrolment at once: touch ${PRELOAD_OFF_FILE})`);
    case 'replaced':
      return say(`replaced gpushare's entry in ${file} with ${library}${also}: programs started from now on load it`);
    case 'kept':
      return say(`kept ${file}: already loads ${library} into every program`);
    case 'removed':
      return say(`${plan.text === null ? `removed ${file} (it held only ${plan.found.join(', ')})` : `took ${plan.found.join(', ')} out of ${file}`}: programs started from now on do not load the library; running ones keep it until they exit`);
    case 'absent':
      return say(`nothing to take out: ${file} does not load gpushare's library`);
  }
}
