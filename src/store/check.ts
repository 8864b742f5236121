import type { SqlValue } from './driver.ts';

/**
 * The one check of a store, run by `svc-emulator store check` and, in a worker, after every start: SQLite's
 * complete integrity check (pages, indexes), then every stored text (valid UTF-8, and JSON where a record is
 * kept as JSON), then the emulator's own invariants: each account's balances against the sums of its ledger
 * (`funded = available + frozen + charged`), each account's ledger numbered 1, 2, 3, … without a gap, and each
 * task's row agreeing with its record and its status. Texts are read as bytes: libsql aborts the process on a
 * text that is not UTF-8, so nothing here reads one as text. One line per problem, at most 200.
 */
export interface RowSource {
  /** The rows of a query, as arrays of values, one at a time (a million call records are not held at once). */
  scan(sql: string): Iterable<SqlValue[]>;
}

/**
 * The whole check as one function that uses nothing from outside it but the language's globals: the worker of
 * check-run.ts runs it from its source text, so that starting the worker costs no compiler (tsx would take most
 * of a second at every start). `tables` are the data tables, in order.
 */
export function findProblems(source: RowSource, tables: readonly string[]): string[] {
  const MOST_PROBLEMS = 200;
  /** Columns holding a whole record as JSON; every other text column is a plain value. */
  const JSON_COLUMNS = new Set(['body', 'value']);
  const STATUSES = new Set(['queued', 'processing', 'succeeded', 'failed', 'canceled']);
  const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
  const POINTS = /^-?\d+\.\d{3}$/;
  const UTF8 = new TextDecoder('utf-8', { fatal: true });
  const LENIENT = new TextDecoder('utf-8');
  const problems: string[] = [];
  const lenient = (cell: SqlValue | undefined): string => (cell instanceof Uint8Array ? LENIENT.decode(cell) : String(cell));
  /** Thousandths of a point from a three-decimal string, exactly (`-1.500` → -1500n). */
  const milli = (points: unknown): bigint | null => (typeof points === 'string' && POINTS.test(points) ? BigInt(points.replace('.', '')) : null);
  const shown = (milliPoints: bigint): string => {
    const abs = milliPoints < 0n ? -milliPoints : milliPoints;
    return `${milliPoints < 0n ? '-' : ''}${abs / 1000n}.${String(abs % 1000n).padStart(3, '0')}`;
  };

  /** A row's text cell: its string, or null with a problem naming the row and column. */
  const textOf = (cell: SqlValue | undefined, row: string, column: string): string | null => {
    if (cell === null || cell === undefined) return null;
    if (!(cell instanceof Uint8Array)) return String(cell);
    try {
      return UTF8.decode(cell);
    } catch {
      problems.push(`${row}: ${column} is not valid UTF-8`);
      return null;
    }
  };

  /** A task's row against its record: the columns a query filters on say what the record says, and the record its status. */
  const taskProblems = (row: string, cells: Map<string, string | null>, stored: unknown): void => {
    const record = stored as { task?: Record<string, unknown>; account_id?: unknown; key?: unknown };
    const task = record.task;
    if (typeof task !== 'object' || task === null) {
      problems.push(`${row}: the record holds no task`);
      return;
    }
    const status = String(task['status']);
    for (const [column, value] of [['id', task['id']], ['status', status], ['account_id', record.account_id], ['key', record.key]] as const) {
      const stored = cells.get(column);
      if (stored !== null && stored !== undefined && stored !== value) problems.push(`${row}: ${column} column ${stored}, record ${String(value)}`);
    }
    if (!STATUSES.has(status)) {
      problems.push(`${row}: unknown status ${status}`);
      return;
    }
    const has = (field: string): boolean => task[field] !== null && task[field] !== undefined;
    if (TERMINAL.has(status) !== has('finished_at')) problems.push(`${row}: ${status} with finished_at ${String(task['finished_at'])}`);
    if (status === 'processing' && !has('started_at')) problems.push(`${row}: processing without started_at`);
    if (status === 'queued' && has('started_at')) problems.push(`${row}: queued with started_at ${String(task['started_at'])}`);
    const points = (task['points'] ?? {}) as Record<string, unknown>;
    for (const field of ['frozen', 'charged', 'refunded']) {
      if (milli(points[field]) === null) problems.push(`${row}: points.${field} is ${JSON.stringify(points[field])}, not a three-decimal amount`);
    }
  };

  /** Every text of a table: UTF-8, and JSON where a record is; tasks and accounts are looked at further. */
  const accounts = new Map<string, Record<string, unknown>>();
  const checkTable = (table: string): void => {
    const columns = [...source.scan(`SELECT name, type, pk FROM pragma_table_info('${table}')`)].map(([name, type, pk]) => ({
      name: lenient(name),
      type: lenient(type).toUpperCase(),
      pk: Number(pk),
    }));
    const withoutRowid = Number([...source.scan(`SELECT "wr" FROM pragma_table_list('${table}')`)][0]?.[0] ?? 0) === 1;
    // A row is named by its rowid, or by its key where the table has none.
    const key = withoutRowid ? columns.filter((c) => c.pk > 0).map((c) => `CAST(${c.name} AS BLOB)`).join(" || '/' || ") : 'rowid';
    const texts = columns.filter((c) => c.type === 'TEXT').map((c) => c.name);
    const select = texts.map((c) => `CAST(${c} AS BLOB)`).join(', ');
    for (const [id, ...cells] of source.scan(`SELECT ${key}, ${select} FROM ${table}`)) {
      if (problems.length >= MOST_PROBLEMS) return;
      const row = `${table} row ${lenient(id)}`;
      const values = new Map<string, string | null>();
      let record: unknown;
      texts.forEach((column, i) => {
        const text = textOf(cells[i], row, column);
        values.set(column, text);
        if (text === null || !JSON_COLUMNS.has(column)) return;
        try {
          const parsed = JSON.parse(text) as unknown;
          if (column === 'body') record = parsed;
        } catch {
          problems.push(`${row}: ${column} is not valid JSON`);
        }
      });
      if (record === undefined) continue;
      if (table === 'accounts') accounts.set(String((record as { id?: unknown }).id ?? values.get('id')), record as Record<string, unknown>);
      if (table === 'tasks') taskProblems(row, values, record);
    }
  };

  /** Each account's balances beside what its ledger sums to. */
  const checkBalances = (): void => {
    const sums = new Map<string, Record<string, bigint>>();
    for (const [account, kind, total] of source.scan('SELECT CAST(account_id AS BLOB), CAST(kind AS BLOB), sum(milli) FROM ledger GROUP BY account_id, kind')) {
      const entry = sums.get(lenient(account)) ?? {};
      entry[lenient(kind)] = BigInt(total as number | bigint);
      sums.set(lenient(account), entry);
    }
    for (const [id, account] of accounts) {
      const s = sums.get(id) ?? {};
      const [fund = 0n, freeze = 0n, charge = 0n, refund = 0n, collect = 0n] = [s['fund'], s['freeze'], s['charge'], s['refund'], s['collect']];
      const expected = { available: fund - freeze + refund - collect, frozen: freeze - charge - refund, charged: charge + collect };
      for (const field of ['available', 'frozen', 'charged'] as const) {
        if (milli(account[field]) !== expected[field]) problems.push(`account ${id}: ${field} is ${String(account[field])}, its ledger says ${shown(expected[field])}`);
      }
    }
    // The unique index rules out a number twice; this reads that index alone. A store before schema 2 has none.
    if (Number([...source.scan("SELECT count(*) FROM pragma_table_info('ledger') WHERE name = 'n'")][0]?.[0]) === 0) return;
    const gaps = 'SELECT CAST(account_id AS BLOB), count(*), min(n), max(n) FROM ledger GROUP BY account_id HAVING min(n) <> 1 OR max(n) <> count(*)';
    for (const [account, count, first, last] of source.scan(gaps)) {
      problems.push(`account ${lenient(account)}: ${String(count)} ledger entries, numbered ${String(first)} to ${String(last)}`);
    }
  };

  // SQLite's lines can hold line breaks ("*** in database main ***\nTree 26 page 26: ..."): one line each here.
  for (const [line] of source.scan('PRAGMA integrity_check(100)')) {
    const text = lenient(line).replace(/\s*\n\s*/g, ' ');
    if (text !== 'ok') problems.push(text);
  }
  const present = new Set([...source.scan("SELECT CAST(name AS BLOB) FROM sqlite_schema WHERE type = 'table'")].map(([name]) => lenient(name)));
  for (const table of ['meta', ...tables]) if (present.has(table)) checkTable(table);
  if (present.has('ledger') && present.has('accounts')) checkBalances();
  return problems.length > MOST_PROBLEMS ? [...problems.slice(0, MOST_PROBLEMS), `and more (the first ${MOST_PROBLEMS} are listed)`] : problems;
}

/**
 * The check's answer when a query of the check itself fails on damage: that failure is the answer. Like
 * `findProblems`, it uses nothing from outside it (the worker runs it from its source too).
 */
export function checkSafely(source: RowSource, tables: readonly string[]): string[] {
  try {
    return findProblems(source, tables);
  } catch (err) {
    const code = String((err as { code?: unknown } | null)?.code ?? '');
    if (!/^SQLITE_(CORRUPT|NOTADB|IOERR)/.test(code)) throw err;
    return [(err as Error).message];
  }
}
