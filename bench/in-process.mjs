// The in-process start a test suite pays: `import` of the package's API, then `createEmulator()` with the store in
// memory, then `listen(0)` and a first 200; each timed on its own, in a fresh process so the import is cold.
// `node bench/in-process.mjs <module>`: the compiled dist/index.js of a packed copy (bench/packed.ts), or with
// `node --import tsx` the sources' src/index.ts (tsx's transform cache may be warm from earlier runs).
// JavaScript, not TypeScript, so that timing the compiled package does not load tsx's hooks. Prints one JSON line.
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [target] = process.argv.slice(2);
if (!target) throw new Error('usage: node bench/in-process.mjs <path of index.js or index.ts>');

// node:http, not fetch: fetch loads undici on first use, which no server start pays.
const firstStatus = (url) =>
  new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
    })
      .once('error', reject)
      .end();
  });

// Process start until here: node, plus tsx's loader when it is registered.
const bootMs = performance.now();
const { createEmulator } = await import(pathToFileURL(target).href);
const imported = performance.now();
const emulator = await createEmulator({ log: () => undefined });
const created = performance.now();
const base = await emulator.listen(0);
const status = await firstStatus(`${base}/_emulator/health`);
const answered = performance.now();
await emulator.close();
if (status !== 200) throw new Error(`GET /_emulator/health: ${status}`);
process.stdout.write(`${JSON.stringify({ bootMs, importMs: imported - bootMs, createMs: created - imported, firstOkMs: answered - created })}\n`);
