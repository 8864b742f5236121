import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { StateDocument } from '../../src/state/index.ts';
import { StoreOpenError } from '../../src/store/index.ts';
import { newAccount, startEmulator } from '../support/harness.ts';
import { cliBin } from '../support/cli-build.ts';

// `start --import FILE` takes a state document from outside: checked whole before anything is replaced (issue 24,
// item 1). A bad one is one line on standard error naming the file and the field, exit 2, and the store as it was.
// The command shows that with the first document; the others go to the emulator it builds, in-process: a refusal
// there is the StoreOpenError whose message is the command's line (src/cli/main.ts prints it, exits 2). One store
// and its export serve every test: each shows that a refusal left the store's bytes as they were.

let dir: string;
let store: string;
let outside: string;
let exported: StateDocument;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-import-validation-'));
  outside = join(dir, 'x');
  await writeFile(outside, 'a file outside the store folder');
  // A real store with an account, a key and an upload; its state exported as the document to damage.
  store = join(dir, 'emu', 'store.db');
  const t = await startEmulator({ db: store });
  try {
    const account = await newAccount(t, '500.000');
    const upload = await t.as(account.key).post('/v1/files', { filename: 'a.png', mime_type: 'image/png', content: Buffer.from('png').toString('base64') });
    expect(upload.status).toBe(200);
    exported = (await t.admin.post('/_emulator/state/export')).body as StateDocument;
  } finally {
    await t.close();
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The bytes of the store's files (the database and whatever log it has), to show that nothing changed them. */
const storeBytes = (): string =>
  [store, `${store}-wal`].map((path) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : '-')).join(' ');

/**
 * Runs `svc-emulator start` on the store with `--import FILE` to its end. One that starts listening instead (as
 * the emulator did with any document) is stopped at once, so the test fails rather than waits.
 */
function startWith(file: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cliBin(), 'start', '--db', store, '--import', file, '--port', '0', '--admin-token', 'a', '--log-level', 'warn'], { stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    if (/listening on/.test(chunk.toString())) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

/** Writes the damaged document, starts the command from it, and expects one line naming the file and the field, exit 2. */
async function expectRefused(document: unknown, field: string): Promise<string> {
  const file = join(dir, 'prepared.json');
  await writeFile(file, JSON.stringify(document, null, 2));
  const before = storeBytes();
  const { code, stderr } = await startWith(file);
  expect(code, stderr).toBe(2);
  expect(stderr.split('\n')).toEqual([expect.any(String), '']);
  expect(stderr).toContain(`svc-emulator: ${file}: not a state document: ${field} `);
  expect(storeBytes()).toBe(before);
  return stderr;
}

/**
 * Writes the damaged document and builds the emulator the command would, in-process, on the store with it: the
 * refusal is a StoreOpenError (one line from the command, exit 2) naming the file and the field, the store as it was.
 */
async function expectRefusedInProcess(document: unknown, field: string): Promise<string> {
  const file = join(dir, 'prepared-in-process.json');
  await writeFile(file, JSON.stringify(document, null, 2));
  const before = storeBytes();
  const refusal = await createEmulator({ db: store, importState: file, adminToken: 'a', log: () => undefined }).then(
    async (emulator) => {
      await emulator.close();
      throw new Error('the emulator started from the document');
    },
    (err: unknown) => err as Error,
  );
  expect(refusal).toBeInstanceOf(StoreOpenError);
  expect(refusal.message.split('\n')).toEqual([expect.any(String)]);
  expect(refusal.message).toContain(`${file}: not a state document: ${field} `);
  expect(storeBytes()).toBe(before);
  return `svc-emulator: ${refusal.message}`;
}

it('refuses a document whose file record names a file outside the store by traversal, and leaves that file alone', async () => {
  const files = exported.files.map((f) => ({ ...f, name: '../../x', expires_ms: 0 }));
  // The command itself: one line on standard error, exit 2.
  const line = await expectRefused({ ...exported, files }, 'files[0].name');
  expect(line).toMatch(/must be a file name the emulator made/);
  expect(await readFile(outside, 'utf8')).toBe('a file outside the store folder');
});

it('refuses a document whose balances disagree with its ledger, naming the balance', async () => {
  const i = exported.accounts.findIndex((a) => a.id !== 'acct_demo');
  const accounts = exported.accounts.map((a, k) => (k === i ? { ...a, frozen: '1.000' } : a));
  const line = await expectRefusedInProcess({ ...exported, accounts }, `accounts[${i}].frozen`);
  expect(line).toMatch(/is 1\.000, but the ledger's entries of acct_\w+ make it 0\.000/);
});

it.each<[string, (s: StateDocument) => Record<string, unknown>, string]>([
  ['an account with no fields', (s) => ({ ...s, accounts: [{}] }), 'accounts[0].id'],
  ['a task that is a number', (s) => ({ ...s, tasks: [1] }), 'tasks[0]'],
  ['a file record without its name', (s) => ({ ...s, files: s.files.map(({ name: _n, ...f }) => f) }), 'files[0].name'],
  ['a document of another format', (s) => ({ ...s, format: 'something-else' }), 'format'],
])('refuses a malformed document with one line, not a stack trace: %s', async (_what, damage, field) => {
  const line = await expectRefusedInProcess(damage(exported), field);
  expect(line).not.toMatch(/\bat \w+ \(|Error:/);
});

it('starts from a document the emulator exported', async () => {
  // In-process: the command's own start from a document is test/cli/progress.test.ts's and the docs' (qa-scenarios).
  const file = join(dir, 'exported.json');
  await writeFile(file, JSON.stringify(exported));
  const t = await startEmulator({ db: join(dir, 'other', 'store.db'), importState: file });
  try {
    const account = exported.accounts.find((a) => a.id !== 'acct_demo');
    const res = await t.admin.get(`/_emulator/accounts/${account?.id ?? ''}`);
    expect(res.status).toBe(200);
    expect(res.body.available).toBe('500.000');
  } finally {
    await t.close();
  }
});
