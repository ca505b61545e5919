// What can still be read from a damaged usage database goes into the fresh one: a few bad pages
// must not cost the whole history. sqlite3's `.recover` (the Debian sqlite3 package) where it is
// installed; else a row-by-row copy that skips the rowid ranges SQLite cannot read.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { migrate } from './migrations.js';
import { SqliteDb } from './sqlite.js';
import { toolEnvironment } from '../root-env.js';

/** Rowids copied per statement; a failing range is halved down to single rows. */
const CHUNK = 256;
/** Consecutive chunks with no readable row before a table is taken as ended (past a damaged last page every read fails). */
const GIVE_UP_AFTER = 8;

/** The sqlite3 command on PATH, or null. */
export function findSqliteCli(): string | null {
  const found = spawnSync('/bin/sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8', env: toolEnvironment() });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : null;
}

export interface SalvageOptions {
  /** The sqlite3 command to run `.recover` with; null: copy row by row. Default: findSqliteCli(). */
  cli?: string | null;
}

/**
 * Create `fresh` (migrated) and copy into it every row SQLite can still read from `damaged`, which is
 * left as it is. Returns one sentence for the person: how many rows were kept and which way.
 */
export async function salvageInto(damaged: string, fresh: string, options: SalvageOptions = {}): Promise<string> {
  const into = await SqliteDb.open(fresh);
  const recovered = `${fresh}.recover-${process.pid}`;
  try {
    await migrate(into);
    const cli = options.cli === undefined ? findSqliteCli() : options.cli;
    let source = damaged;
    let method = 'a row-by-row salvage (no sqlite3 command)';
    if (cli) {
      try {
        await recoverWithCli(cli, damaged, recovered);
        source = recovered;
        method = "sqlite3's .recover";
      } catch (error) {
        method = `a row-by-row salvage (sqlite3's .recover failed: ${firstLine(error)})`;
      }
    }
    let copied: Copied;
    try {
      copied = await copyReadableRows(into, source);
    } catch (error) {
      return `Nothing could be recovered from it (${firstLine(error)}).`;
    }
    const others = copied.rows - (copied.byTable.get('samples') ?? 0);
    const skipped = copied.unreadable > 0 ? ', skipping what it could not read' : '';
    return `Recovered ${copied.byTable.get('samples') ?? 0} of its samples and ${others} other rows with ${method}${skipped}.`;
  } finally {
    await into.close().catch(() => undefined);
    rmSync(recovered, { force: true });
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(recovered + suffix, { force: true });
  }
}

/** `sqlite3 DAMAGED .recover | sqlite3 OUT`: rebuilds every table from the pages it can read. */
function recoverWithCli(cli: string, damaged: string, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const dump = spawn(cli, [damaged, '.recover'], { stdio: ['ignore', 'pipe', 'pipe'], env: toolEnvironment() });
    const load = spawn(cli, ['-bail', out], { stdio: ['pipe', 'ignore', 'pipe'], env: toolEnvironment() });
    let errors = '';
    let failed = false;
    let open = 2;
    const done = (code: number | null): void => {
      if (code !== 0) failed = true;
      if (--open === 0) (failed ? reject(new Error(errors.trim() || 'exit status not 0')) : resolve());
    };
    for (const child of [dump, load]) {
      child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
      child.on('error', (error) => reject(error));
      child.on('close', done);
    }
    load.stdin!.on('error', () => undefined); // the loader stopped early: its exit status says why
    dump.stdout!.pipe(load.stdin!);
  });
}

interface Copied {
  rows: number;
  byTable: Map<string, number>;
  unreadable: number;
}

/** Copy each table the fresh file has from `source` (attached), by the columns both have. */
async function copyReadableRows(into: SqliteDb, source: string): Promise<Copied> {
  await into.run('ATTACH DATABASE ? AS old', [source]);
  try {
    const tables = await into.all<{ name: string }>("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    const theirs = new Set((await into.all<{ name: string }>("SELECT name FROM old.sqlite_master WHERE type = 'table'")).map((t) => t.name));
    const copied: Copied = { rows: 0, byTable: new Map(), unreadable: 0 };
    for (const { name } of tables) {
      if (!theirs.has(name)) continue;
      const mine = new Set((await into.all<{ name: string }>(`PRAGMA main.table_info("${name}")`)).map((c) => c.name));
      const columns = (await into.all<{ name: string }>(`PRAGMA old.table_info("${name}")`)).map((c) => c.name).filter((c) => mine.has(c));
      if (columns.length === 0) continue;
      const list = columns.map((c) => `"${c}"`).join(', ');
      const insert = `INSERT OR IGNORE INTO main."${name}" (${list}) SELECT ${list} FROM old."${name}"`;
      let rows: number;
      try {
        rows = (await into.run(insert)).changes;
      } catch {
        const ranged = await copyByRowid(into, name, insert);
        rows = ranged.rows;
        copied.unreadable += ranged.unreadable;
      }
      copied.byTable.set(name, rows);
      copied.rows += rows;
    }
    return copied;
  } finally {
    await into.run('DETACH DATABASE old').catch(() => undefined);
  }
}

/** The whole table could not be read: copy it by rowid ranges, halving each range that fails down to single rows. */
async function copyByRowid(into: SqliteDb, table: string, insert: string): Promise<{ rows: number; unreadable: number }> {
  const result = { rows: 0, unreadable: 0 };
  const first = await into.get<{ r: number | null }>(`SELECT min(rowid) AS r FROM old."${table}"`).then((row) => row?.r ?? null, () => 1);
  if (first === null) return result; // empty, or WITHOUT ROWID (no rowid to go by): nothing more to try
  const copyRange = async (from: number, to: number): Promise<number> => {
    try {
      // one row by equality: a range scan reads the next entry to see it is past the end, maybe on a damaged page
      return (await (from === to ? into.run(`${insert} WHERE rowid = ?`, [from]) : into.run(`${insert} WHERE rowid BETWEEN ? AND ?`, [from, to]))).changes;
    } catch {
      if (from === to) {
        result.unreadable++;
        return 0;
      }
      const middle = Math.floor((from + to) / 2);
      return (await copyRange(from, middle)) + (await copyRange(middle + 1, to));
    }
  };
  for (let from = first, idle = 0; idle < GIVE_UP_AFTER; from += CHUNK) {
    const rows = await copyRange(from, from + CHUNK - 1);
    result.rows += rows;
    idle = rows > 0 ? 0 : idle + 1;
    // a readable index says where the rows go on, past a gap
    const next = await into.get<{ r: number | null }>(`SELECT min(rowid) AS r FROM old."${table}" WHERE rowid >= ?`, [from + CHUNK]).then((row) => row?.r, () => undefined);
    if (next === null) break; // nothing after: the table ends here
    if (next !== undefined && next > from + CHUNK) from = next - CHUNK; // jump the gap
  }
  return result;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}
