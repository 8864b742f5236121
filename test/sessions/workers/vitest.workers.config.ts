import { defineConfig } from 'vitest/config';

// The inner run of test/sessions/parallel-workers.test.ts: the worker files it writes into SESSIONS_EXCHANGE's
// `files/`, one vitest worker each, all at once against the one emulator it started.
const dir = process.env['SESSIONS_EXCHANGE'] ?? '';
const workers = Number(process.env['SESSIONS_WORKERS'] ?? '16');

export default defineConfig({
  test: {
    root: dir,
    include: ['files/*.worker.ts'],
    pool: 'threads',
    maxWorkers: workers,
    fileParallelism: true,
    isolate: true,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: `${dir}/result.json` },
  },
});
