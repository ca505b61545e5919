// A small promise face on the `sqlite3` package (Node-API, so the same build loads in Node and Electron).
import sqlite3 from 'sqlite3';

export type SqlValue = string | number | bigint | null | Buffer;
export type Row = Record<string, SqlValue>;

export class SqliteDb {
  private constructor(
    readonly path: string,
    private readonly db: sqlite3.Database,
  ) {}

  static open(path: string, options: { readOnly?: boolean } = {}): Promise<SqliteDb> {
    const mode = options.readOnly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    return new Promise((resolve, reject) => {
      const db = new sqlite3.Database(path, mode, (error) => (error ? reject(error) : resolve(new SqliteDb(path, db))));
    });
  }

  run(sql: string, params: SqlValue[] = []): Promise<{ changes: number; lastID: number }> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function (error) {
        if (error) reject(error);
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  all<T = Row>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as T[])));
    });
  }

  async get<T = Row>(sql: string, params: SqlValue[] = []): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.db.get(sql, params, (error, row) => (error ? reject(error) : resolve(row as T | undefined)));
    });
  }

  /** Several statements, no parameters (schema, pragmas). */
  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (error) => (error ? reject(error) : resolve())));
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((error) => (error ? reject(error) : resolve())));
  }
}

/** SQLite's "this is not a database / the database is damaged" answers. */
export function isCorruption(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}
