// The usage database's schema, one migration per version, applied in order.
// PRAGMA user_version holds the version; never edit a released migration, add one.
import { CONTRIBUTION_FIELDS, PEAK_FIELDS } from './accounting.js';
import type { SqliteDb } from './sqlite.js';

const contributionColumns = CONTRIBUTION_FIELDS.map((f) => `${f} ${PEAK_FIELDS.has(f) ? 'INTEGER' : 'REAL'} NOT NULL`).join(',\n  ');

const rollupTable = (name: string): string => `
CREATE TABLE ${name} (
  bucket INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  user TEXT NOT NULL,
  job TEXT NOT NULL,
  samples INTEGER NOT NULL,
  seconds REAL NOT NULL,
  ${contributionColumns},
  PRIMARY KEY (bucket, gpu, user, job)
) WITHOUT ROWID;`;

export const MIGRATIONS: ReadonlyArray<(db: SqliteDb) => Promise<void>> = [
  // 1: samples, rollups, jobs, events, audit
  async (db) => {
    await db.exec(`
CREATE TABLE samples (
  t INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  user TEXT NOT NULL,
  job TEXT NOT NULL,
  smPercent REAL,
  usedMemory INTEGER,
  dt REAL NOT NULL,
  flags INTEGER NOT NULL,
  peakJob INTEGER NOT NULL,
  peakUser INTEGER NOT NULL,
  peakGpu INTEGER NOT NULL
);
CREATE INDEX samples_t ON samples (t);
${rollupTable('usage_minute')}
${rollupTable('usage_hour')}
${rollupTable('usage_day')}
CREATE TABLE gpus (
  gpu INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL,
  name TEXT NOT NULL,
  memoryTotal INTEGER,
  lastSeen INTEGER NOT NULL
);
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  managed INTEGER NOT NULL,
  owner TEXT NOT NULL,
  command TEXT NOT NULL,
  gpu INTEGER,
  state TEXT,
  firstSeen INTEGER NOT NULL,
  lastSeen INTEGER NOT NULL,
  view TEXT
);
CREATE TABLE job_states (
  job TEXT NOT NULL,
  at INTEGER NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (job, at, state)
) WITHOUT ROWID;
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  gpu INTEGER,
  job TEXT,
  message TEXT NOT NULL,
  severity TEXT NOT NULL
);
CREATE INDEX events_at ON events (at);
CREATE TABLE audit (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  who TEXT NOT NULL,
  what TEXT NOT NULL,
  params TEXT,
  result TEXT NOT NULL
);
CREATE INDEX audit_at ON audit (at);`);
  },
  // 2: managed jobs as the scheduler keeps them (electron/engine/store/job-store.ts): a restarted engine re-adopts or restarts them
  async (db) => {
    await db.exec(`
CREATE TABLE managed_jobs (
  number INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  record TEXT NOT NULL
);`);
  },
  // 3: the container each sample ran in (its short id; '-' none, '?' recorded before this), and the containers' names for reports by container
  async (db) => {
    await db.exec(`
${['samples', 'usage_minute', 'usage_hour', 'usage_day'].map((t) => `ALTER TABLE ${t} ADD COLUMN container TEXT NOT NULL DEFAULT '?';`).join('\n')}
CREATE TABLE containers (
  id TEXT PRIMARY KEY,
  runtime TEXT NOT NULL,
  fullId TEXT NOT NULL,
  name TEXT,
  startedBy TEXT,
  lastSeen INTEGER NOT NULL
);`);
  },
  // 4: each audit row's uid (who may read it: its user and administrators); a row standing for `count` refusals until `until`
  async (db) => {
    await db.exec(`
ALTER TABLE audit ADD COLUMN uid INTEGER;
ALTER TABLE audit ADD COLUMN count INTEGER;
ALTER TABLE audit ADD COLUMN until INTEGER;
CREATE INDEX audit_uid ON audit (uid, id);`);
  },
  // 5: each Slurm job's usage as its epilog settled it (report --by slurm-job); a job id and its end name one row
  async (db) => {
    await db.exec(`
CREATE TABLE slurm_usage (
  jobId TEXT NOT NULL,
  user TEXT NOT NULL,
  partition TEXT,
  qos TEXT,
  start INTEGER NOT NULL,
  end INTEGER NOT NULL,
  gpuHours REAL NOT NULL,
  smHours REAL NOT NULL,
  memoryGiBHours REAL NOT NULL,
  peakMemoryBytes INTEGER NOT NULL,
  gatedSeconds REAL NOT NULL,
  parkedSeconds REAL NOT NULL,
  PRIMARY KEY (jobId, end)
) WITHOUT ROWID;
CREATE INDEX slurm_usage_end ON slurm_usage (end);`);
  },
  // 6: each Slurm job's account and the GPUs (or MIG slices) it used (null: recorded before); each sample's GPU-seconds by
  // job, user and GPU, a MIG slice counting its share of its GPU (null: recorded before, the flags' counts say)
  async (db) => {
    await db.exec(`
ALTER TABLE slurm_usage ADD COLUMN account TEXT;
ALTER TABLE slurm_usage ADD COLUMN gpus TEXT;
ALTER TABLE samples ADD COLUMN gpuSJob REAL;
ALTER TABLE samples ADD COLUMN gpuSUser REAL;
ALTER TABLE samples ADD COLUMN gpuSGpu REAL;`);
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Bring the database to SCHEMA_VERSION, each step in its own transaction. */
export async function migrate(db: SqliteDb): Promise<void> {
  const row = await db.get<{ user_version: number }>('PRAGMA user_version');
  const current = row?.user_version ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new Error(`The usage database ${db.path} is from a newer gpushare (schema ${current}, this one knows ${SCHEMA_VERSION}).`);
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    await db.exec('BEGIN IMMEDIATE');
    try {
      await MIGRATIONS[version](db);
      await db.exec(`PRAGMA user_version = ${version + 1}`);
      await db.exec('COMMIT');
    } catch (error) {
      await db.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
