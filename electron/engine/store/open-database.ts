// Opening the usage database: create and migrate it; a damaged file is moved aside and what it still holds
// recovered into a fresh one (the engine), or refused (a report).
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';
import { salvageInto } from './salvage.js';
import { isCorruption, SqliteDb } from './sqlite.js';
import type { UsageStoreOptions } from './usage-store.js';

export class UsageDatabaseError extends Error {}

export async function openDatabase(options: UsageStoreOptions, notice: (message: string) => void): Promise<SqliteDb> {
  mkdirSync(dirname(options.path), { recursive: true });
  try {
    return await openAndMigrate(options.path);
  } catch (error) {
    if (!isCorruption(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    if (options.onCorrupt === 'fail') {
      throw new UsageDatabaseError(`The usage database ${options.path} is damaged (${reason}). The engine (gpushare serve or the console) keeps it aside and starts a fresh one when it next opens it.`);
    }
    const aside = moveAside(options.path);
    const salvage = await salvageInto(aside, options.path).catch((e: unknown) => `Nothing could be recovered from it (${e instanceof Error ? e.message : String(e)}).`);
    notice(`The usage database ${options.path} is damaged (${reason}); kept it as ${aside} and started a fresh one. ${salvage}`);
    return openAndMigrate(options.path);
  }
}

async function openAndMigrate(path: string): Promise<SqliteDb> {
  const db = await SqliteDb.open(path);
  try {
    await db.exec('PRAGMA busy_timeout = 5000');
    await db.get('PRAGMA journal_mode = WAL'); // the first read of the file: a damaged header fails here
    await db.exec('PRAGMA synchronous = NORMAL'); // WAL + NORMAL: a process crash loses nothing committed
    await db.get('SELECT count(*) AS n FROM sqlite_master');
    await migrate(db);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** Rename the file (and its WAL) to <path>.corrupt-<timestamp>; returns the new name. */
export function moveAside(path: string): string {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  if (existsSync(path)) renameSync(path, aside);
  if (existsSync(`${path}-wal`)) renameSync(`${path}-wal`, `${aside}-wal`);
  rmSync(`${path}-shm`, { force: true });
  return aside;
}
