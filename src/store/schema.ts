import type { Driver } from './driver.ts';

/**
 * The tables, one per kind of record: the columns a query filters or orders on, plus the whole record as JSON in
 * `body` (readable with SQLite's JSON functions). Each migration moves the schema one version forward, in one
 * transaction; `PRAGMA user_version` says where a store file is.
 */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
  CREATE TABLE accounts (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL) STRICT;
  CREATE TABLE keys (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, account_id TEXT NOT NULL, body TEXT NOT NULL) STRICT;
  CREATE INDEX keys_by_account ON keys (account_id, seq);
  CREATE TABLE tasks (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, account_id TEXT NOT NULL, status TEXT NOT NULL,
    model TEXT NOT NULL, body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX tasks_by_account ON tasks (account_id, seq);
  CREATE INDEX tasks_by_account_status ON tasks (account_id, status, seq);
  CREATE INDEX tasks_by_account_model ON tasks (account_id, model, seq);
  CREATE INDEX tasks_unfinished ON tasks (status) WHERE status IN ('queued', 'processing');
  CREATE TABLE idempotency (
    account_id TEXT NOT NULL, key TEXT NOT NULL, task_id TEXT NOT NULL, model TEXT NOT NULL, input TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE ledger (
    id INTEGER PRIMARY KEY, account_id TEXT NOT NULL, kind TEXT NOT NULL, milli INTEGER NOT NULL, body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX ledger_by_account ON ledger (account_id, id);
  CREATE TABLE files (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE, account_id TEXT NOT NULL,
    expires_ms INTEGER NOT NULL, body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX files_by_expiry ON files (expires_ms);
  CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, account_id TEXT NOT NULL, task_id TEXT, status TEXT NOT NULL,
    created_ms INTEGER NOT NULL, body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX deliveries_by_task ON deliveries (task_id, seq);
  CREATE INDEX deliveries_by_account ON deliveries (account_id, seq);
  CREATE INDEX deliveries_pending ON deliveries (status) WHERE status = 'pending';
  CREATE INDEX deliveries_done ON deliveries (created_ms) WHERE status <> 'pending';
  CREATE TABLE calls (
    seq INTEGER PRIMARY KEY, request_id TEXT NOT NULL UNIQUE, at_ms INTEGER NOT NULL, account_id TEXT, key TEXT,
    body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX calls_by_time ON calls (at_ms);
  CREATE INDEX calls_by_account ON calls (account_id, seq);
  CREATE INDEX calls_by_key ON calls (key, seq);
  CREATE TABLE scenarios (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, body TEXT NOT NULL) STRICT;
  `,
  // 2: each account's ledger numbered 1, 2, 3, … in `n`, beside the id every account shares (the order written).
  // SQLite adds no NOT NULL column to a table with rows, so the table is rebuilt, an old store's entries numbered
  // per account in id order.
  `
  CREATE TABLE ledger_numbered (
    id INTEGER PRIMARY KEY, account_id TEXT NOT NULL, n INTEGER NOT NULL, kind TEXT NOT NULL, milli INTEGER NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
  INSERT INTO ledger_numbered (id, account_id, n, kind, milli, body)
    SELECT id, account_id, row_number() OVER (PARTITION BY account_id ORDER BY id), kind, milli, body FROM ledger ORDER BY id;
  DROP TABLE ledger;
  ALTER TABLE ledger_numbered RENAME TO ledger;
  CREATE UNIQUE INDEX ledger_numbers ON ledger (account_id, n);
  `,
  // 3: the file says whose it is (SQLite's application id), so another program's database is never taken for one.
  `PRAGMA application_id = ${0x53564345}`,
  // 4: the nonces signed requests used, each kept until its timestamp's window closes (wall time), so a replay is
  // refused after a restart too. Not a data table: no state document carries them, and a reset keeps them.
  `
  CREATE TABLE nonces (key TEXT NOT NULL, nonce TEXT NOT NULL, expires_ms INTEGER NOT NULL, PRIMARY KEY (key, nonce)) STRICT, WITHOUT ROWID;
  CREATE INDEX nonces_by_expiry ON nonces (expires_ms);
  `,
  // 5: the key a task was submitted with, as a column with an index of the unfinished tasks' holders, so a start
  // counts each key's and account's unfinished tasks (concurrency) from the index instead of reading every one's
  // JSON (0.1 s for 50,000). A row whose body is not JSON keeps none; the start's reading of the task names it.
  `
  ALTER TABLE tasks ADD COLUMN key TEXT;
  UPDATE tasks SET key = CASE WHEN json_valid(body) AND json_type(body, '$.key') = 'text' THEN body ->> '$.key' END;
  CREATE INDEX tasks_unfinished_holders ON tasks (account_id, key) WHERE status IN ('queued', 'processing');
  `,
];

/** 'SVCE': what SQLite's application id says of an svc-emulator store (schema 3 on). */
export const APPLICATION_ID = 0x53564345;
const OUR_TABLES = ['meta', 'accounts', 'keys', 'tasks', 'idempotency', 'ledger', 'files', 'deliveries', 'calls', 'scenarios'];

/**
 * Why the open file is not an svc-emulator store, or null: its application id is ours, or it is a store of ours
 * from before the id (schema 1 or 2, our tables), or it is an empty SQLite file (no tables at all), which becomes
 * one. Anything else is another program's database and is refused before anything is written to it.
 */
export function foreignStoreProblem(driver: Driver): string | null {
  const applicationId = Number(driver.prepare('PRAGMA application_id').get()?.[0] ?? 0);
  if (applicationId === APPLICATION_ID) return null;
  if (applicationId !== 0) return `another program's SQLite database (application id ${applicationId}), not an svc-emulator store`;
  const version = Number(driver.prepare('PRAGMA user_version').get()?.[0] ?? 0);
  const tables = driver
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map(([name]) => String(name));
  if (tables.length === 0 && version === 0) return null;
  if (version >= 1 && OUR_TABLES.every((table) => tables.includes(table))) return null;
  const listed = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, … (${tables.length} tables)` : '');
  return `another program's SQLite database (tables ${listed || 'none'}, schema version ${version}), not an svc-emulator store`;
}

/** The schema version this code writes; a store of a newer one is refused. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Every table holding data (all but `meta`), in an order that restores without dangling references. */
export const DATA_TABLES = ['accounts', 'keys', 'tasks', 'idempotency', 'ledger', 'files', 'deliveries', 'calls', 'scenarios'] as const;
export type DataTable = (typeof DATA_TABLES)[number];

export class StoreVersionError extends Error {}

/** Whether the ledger numbers each account's entries (`n`, schema 2): a store opened read-only before that migration does not. */
export const ledgerNumbered = (driver: Driver): boolean =>
  Number(driver.prepare("SELECT count(*) FROM pragma_table_info('ledger') WHERE name = 'n'").get()?.[0]) > 0;

/**
 * The whole schema in a new, empty database, in one transaction. Only `exec`: a libsql connection that prepared
 * a statement outlives its `close()`, and this one must not (the file is linked into place once it is closed, and
 * SQLite would go on using this connection's descriptor for the store under the temporary name).
 */
export function createSchema(driver: Driver): void {
  driver.exec(`BEGIN IMMEDIATE; ${MIGRATIONS.join(';\n')}; PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT`);
}

/** Brings the schema to `to` (SCHEMA_VERSION; a test builds an older store with less); returns the version the store had. */
export function migrate(driver: Driver, where: string, to = SCHEMA_VERSION): number {
  const version = Number(driver.prepare('PRAGMA user_version').get()?.[0] ?? 0);
  if (version > SCHEMA_VERSION) {
    throw new StoreVersionError(`${where}: store schema version ${version} is newer than this emulator understands (${SCHEMA_VERSION}); use a newer svc-emulator`);
  }
  for (let next = version; next < to; next += 1) {
    driver.exec('BEGIN IMMEDIATE');
    try {
      driver.exec(MIGRATIONS[next] as string);
      driver.exec(`PRAGMA user_version = ${next + 1}`);
      driver.exec('COMMIT');
    } catch (err) {
      driver.exec('ROLLBACK');
      throw err;
    }
  }
  return version;
}
