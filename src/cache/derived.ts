import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A cache of data derived from files (a YAML document parsed, a scenario file checked), kept as JSON under a
 * name made of the inputs' hash: a changed input is a new name, so nothing is ever stale. Parsing the OpenAPI
 * documents as YAML costs more than the rest of a start; reading the same data as JSON costs a few ms.
 *
 * Where: `SVC_EMULATOR_CACHE_DIR`, else `node_modules/.cache/svc-emulator` beside the package when the package
 * has a node_modules folder (a checkout), else the system's temporary folder. The cache is only ever an
 * optimisation: an unreadable or unwritable cache is the same as an empty one.
 *
 * The package also ships what its own files derive (dist/derived/, written when it is built: the documents and the
 * scenario library), read first: a fresh install's first start (a CI job's, every time) parses no YAML either.
 */
const PACKAGE_ROOT = new URL('../../', import.meta.url);
const SHIPPED = new URL('dist/derived/', PACKAGE_ROOT).pathname;

function cacheDir(): string {
  const configured = process.env['SVC_EMULATOR_CACHE_DIR'];
  if (configured) return configured;
  if (existsSync(new URL('node_modules', PACKAGE_ROOT))) return new URL('node_modules/.cache/svc-emulator', PACKAGE_ROOT).pathname;
  return join(tmpdir(), `svc-emulator-cache-${process.getuid?.() ?? 'user'}`);
}

let dir: string | undefined;

export function hashOf(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 32);
}

/** The value derived under `kind` from inputs hashing to `key`: read from the cache, or computed and stored. */
export function derived<T>(kind: string, key: string, compute: () => T): T {
  dir ??= cacheDir();
  const name = `${kind}-${key}.json`;
  const file = join(dir, name);
  for (const candidate of [join(SHIPPED, name), file]) {
    try {
      return JSON.parse(readFileSync(candidate, 'utf8')) as T;
    } catch {
      // Not there (or unreadable): the next place, else compute it.
    }
  }
  const value = compute();
  try {
    mkdirSync(dir, { recursive: true });
    // Written aside and renamed, so a reader never sees half a file (two starts may write at once).
    const aside = `${file}.${process.pid}.tmp`;
    writeFileSync(aside, JSON.stringify(value));
    renameSync(aside, file);
  } catch {
    // A read-only disk only costs the next start the same work.
  }
  return value;
}
