import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BlobNameError, createBlobStore } from '../../../src/files/index.ts';
import type { BlobStore } from '../../../src/files/index.ts';

// The blob store never leaves its folder, whatever name it is given (issue 24, item 1): a file record's name from
// an imported state once read and deleted any file of the machine.

let root: string;
let store: BlobStore;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-blobs-'));
  // The folder two levels down, so that `../x` and `../../x` both name files the test can see.
  store = createBlobStore(join(root, 'store', 'files'));
  await writeFile(join(root, 'x'), 'outside, two up');
  await writeFile(join(root, 'store', 'x'), 'outside, one up');
});
afterEach(() => rm(root, { recursive: true, force: true }));

const BAD_NAMES: [string, string][] = [
  ['a parent folder', '../x'],
  ['two parent folders', '../../x'],
  ['a percent-encoded separator', '..%2Fx'],
  ['a percent-encoded parent folder', '%2e%2e%2fx'],
  ['an absolute path', '/etc/passwd'],
  ['a folder and a name', 'a/b'],
  ['a backslash', 'a\\b'],
  ['a NUL', 'x\u0000y'],
  ['the folder itself', '.'],
  ['its parent', '..'],
  ['nothing', ''],
];

it.each(BAD_NAMES)('refuses %s (%j) to put, get and delete, touching no file', async (_what, name) => {
  expect(() => store.put(name, Buffer.from('bytes'))).toThrow(BlobNameError);
  expect(() => store.get(name)).toThrow(BlobNameError);
  expect(() => store.delete(name)).toThrow(BlobNameError);
  expect(await readFile(join(root, 'x'), 'utf8')).toBe('outside, two up');
  expect(await readFile(join(root, 'store', 'x'), 'utf8')).toBe('outside, one up');
  expect(existsSync('/etc/passwd')).toBe(true);
  expect(readdirSync(join(root, 'store', 'files'))).toEqual([]);
});

it.each(BAD_NAMES)('refuses %s (%j) in memory too', (_what, name) => {
  const memory = createBlobStore(null);
  expect(() => memory.put(name, Buffer.from('bytes'))).toThrow(BlobNameError);
  expect(() => memory.get(name)).toThrow(BlobNameError);
  expect(() => memory.delete(name)).toThrow(BlobNameError);
});

it('keeps, serves and deletes the names the emulator makes, inside its folder', () => {
  const name = 'Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f.png';
  store.put(name, Buffer.from('png'));
  expect(readdirSync(join(root, 'store', 'files'))).toEqual([name]);
  expect(store.get(name)?.toString()).toBe('png');
  store.delete(name);
  expect(store.get(name)).toBeUndefined();
  expect(readdirSync(join(root, 'store', 'files'))).toEqual([]);
});
