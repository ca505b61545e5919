// A personal engine's store is its owner's alone: it keeps command lines, users and, for jobs still
// to start, the submitter's whole environment (tokens included).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Its folder 0700 and the database 0600 (created so before SQLite opens it; SQLite gives its -wal and
 * -shm the database's mode). A store an earlier version made 0755/0644 is narrowed. Best effort on a
 * path this user does not own (--db on a shared disk): opening it then says what is wrong.
 */
export function keepStoreOwnerOnly(dbPath: string): void {
  try {
    mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
    chmodSync(dirname(dbPath), 0o700);
    closeSync(openSync(dbPath, 'a', 0o600));
    for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  } catch {
    // not ours to change: the store reports the path it cannot open
  }
}

/** The box daemon's store: root's alone (the folder stays 0755: each user's preferences file lives beside it). */
export function keepBoxStorePrivate(dbPath: string): void {
  mkdirSync(dirname(dbPath), { recursive: true, mode: 0o755 });
  closeSync(openSync(dbPath, 'a', 0o600));
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
}
