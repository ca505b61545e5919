// The lab list: the admin's /etc/gpushare/lab.json, then the person's own ~/.config/gpushare/lab.json
// added to it. Each file is read whole and checked as the daemon's config is: strict JSON, every key
// known, and a mistake names the file, the entry and the key.
import { readFileSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { mergeLabLists, parseLabList, type LabBoxSpec } from '../../../shared/lab.js';
import { ValidationError } from '../../../shared/schema.js';
import { JsonSyntaxError, parseJsonStrict } from '../daemon/config-file-json.js';
import { ADMIN_LAB_FILE } from '../daemon/daemon-paths.js';

export { ADMIN_LAB_FILE };

/** The person's own list: $XDG_CONFIG_HOME/gpushare/lab.json, else ~/.config/gpushare/lab.json. */
export const ownLabFile = (env: NodeJS.ProcessEnv = process.env): string => join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'gpushare', 'lab.json');

/** The smallest lab list, as every message that asks for one shows it. */
const LAB_LIST_EXAMPLE = '{"boxes": [{"name": "box1", "ssh": "box1"}]}';

export class LabListError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'LabListError';
  }
}

/** One file's boxes; a missing file is an empty list (null), anything else wrong a LabListError naming file, entry and key. */
export function readLabFile(file: string): LabBoxSpec[] | null {
  let text: string;
  try {
    const stats = statSync(file);
    if (!stats.isFile()) throw new LabListError(file, 'is not a regular file');
    checkOnlyYouOrRootCanChange(file, stats);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof LabListError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LabListError(file, `cannot be read (${(error as Error).message})`);
  }
  return parseLabText(file, text);
}

/**
 * A lab file says where your ssh goes and what it runs there as you (the relay's command): one that
 * someone else could write would let them run their own command on every box as you. Root's or yours, writable by no one else.
 */
function checkOnlyYouOrRootCanChange(file: string, fileStats: Stats): void {
  const me = process.geteuid?.() ?? 0;
  const unsafe = (stats: Stats, what: string, path: string): string | null => {
    if (stats.uid !== 0 && stats.uid !== me) return `${what} is owned by uid ${stats.uid}, neither you nor root, who could send your ssh to a command of theirs (chown it to root or yourself)`;
    if (stats.mode & 0o022 && !(stats.isDirectory() && stats.mode & 0o1000)) return `${what} can be written by others, who could send your ssh to a command of theirs (chmod go-w ${path})`;
    return null;
  };
  const dir = dirname(file);
  const problem = unsafe(fileStats, 'it', file) ?? unsafe(statSync(dir), `its directory ${dir}`, dir);
  if (problem) throw new LabListError(file, `refused: ${problem}`);
}

/** Check a lab file's text: syntax with line and column, then each entry with its name and key. */
export function parseLabText(file: string, text: string): LabBoxSpec[] {
  let value: unknown;
  try {
    value = parseJsonStrict(text, `a lab list is like ${LAB_LIST_EXAMPLE}`); // {} is no lab list: it has no boxes
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new LabListError(`${file}:${error.line}:${error.column}`, `not valid JSON: ${error.problem}`);
    throw error;
  }
  try {
    return parseLabList(value);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    if (!error.path) throw new LabListError(file, `the whole file ${error.problem} (like ${LAB_LIST_EXAMPLE})`);
    throw new LabListError(file, `${withBoxName(error.path, value)}: ${error.problem}`);
  }
}

/** "boxes[2].ssh" → 'boxes[2] ("box3").ssh', so the admin finds the entry by the name they gave it. */
function withBoxName(path: string, value: unknown): string {
  const match = /^boxes\[(\d+)\]/.exec(path);
  if (!match) return path;
  const entry = (value as { boxes?: unknown[] }).boxes?.[Number(match[1])] as { name?: unknown } | undefined;
  return typeof entry?.name === 'string' && entry.name.length <= 64 ? `${match[0]} (${JSON.stringify(entry.name)})${path.slice(match[0].length)}` : path;
}

export interface LabList {
  boxes: LabBoxSpec[];
  /** The files read, in order (those that exist). */
  files: string[];
  /** Where it looked: the admin's file and the person's own. */
  looked: { admin: string; own: string };
}

/** Why there is no lab: the files looked at, and what to write in one (`gpushare lab`, `start --lab`, the desktop's Lab view). */
export const noLabBoxes = (looked: LabList['looked']): string =>
  `No lab boxes: neither ${looked.admin} nor ${looked.own} lists any. Write one like ${LAB_LIST_EXAMPLE}.`;

/** The admin's list and the person's own, merged (an own entry of the same name wins). */
export function loadLabList(files: { admin?: string; own?: string } = {}): LabList {
  const admin = files.admin ?? process.env.GPUSHARE_LAB_FILE ?? ADMIN_LAB_FILE;
  const own = files.own ?? ownLabFile();
  const adminBoxes = readLabFile(admin);
  const ownBoxes = readLabFile(own);
  return { boxes: mergeLabLists(adminBoxes ?? [], ownBoxes ?? []), files: [...(adminBoxes ? [admin] : []), ...(ownBoxes ? [own] : [])], looked: { admin, own } };
}
