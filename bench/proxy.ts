/**
 * What the checking proxy costs a client: GET /v1/tasks/{id} and 200 concurrent 500-token streams against the
 * emulator directly, through `svc-emulator proxy`, and through the proxy recording (`--record`). Each server runs
 * in its own process; the checks and the recorder work after each exchange, so their cost shows as the proxy's
 * CPU taken from the same two cores rather than as a later first byte.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './load.ts';
import type { LoadFigures } from './load.ts';
import { benchKey, BIN, emulatorCommand, json, startServer, stopServer } from './servers.ts';
import { concurrentStreams } from './text-streams.ts';
import type { StreamFigures } from './text-streams.ts';

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });

export interface ProxyFigures {
  route: string;
  get: LoadFigures;
  streams: StreamFigures;
  recordingMb: number | null;
}

export async function proxyBench(): Promise<ProxyFigures[]> {
  const emulator = await startServer(emulatorCommand(['--memory']), '/_emulator/health');
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-proxy-'));
  try {
    const key = await benchKey(emulator.base);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const task = await json(`${emulator.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT });
    const routes: [string, string[] | null][] = [
      ['direct', null],
      ['through the proxy', []],
      ['through the proxy, recording', ['--record', dir]],
    ];
    const figures: ProxyFigures[] = [];
    for (const [route, extra] of routes) {
      const proxy = extra === null ? null : await startServer([BIN, 'proxy', '--upstream', emulator.base, '--port', '0', ...extra]);
      const base = proxy?.base ?? emulator.base;
      try {
        const get = await load(`${route}: GET /v1/tasks/{id}`, { url: `${base}/v1/tasks/${String(task['id'])}`, headers }, { warmupSeconds: 1 });
        const streams = await concurrentStreams(base, key);
        figures.push({ route, get, streams, recordingMb: null });
      } finally {
        if (proxy) await stopServer(proxy);
      }
    }
    const files = await readdir(dir);
    let bytes = 0;
    for (const file of files) bytes += (await stat(join(dir, file))).size;
    const recording = figures.at(-1);
    // Killed, not stopped: what is on disk is what the debounced rewrites had written, as after a crash.
    if (recording) recording.recordingMb = bytes / 1024 / 1024;
    return figures;
  } finally {
    await stopServer(emulator);
    await rm(dir, { recursive: true, force: true });
  }
}

export function printProxy(figures: ProxyFigures[], line: (text: string) => void): void {
  line('proxy: the emulator directly, through svc-emulator proxy, and through it with --record');
  for (const f of figures) {
    line(
      `  ${f.route.padEnd(30)} GET ${Math.round(f.get.rps).toLocaleString('en-US').padStart(6)} req/s (p50 ${f.get.p50} ms, p99 ${f.get.p99} ms); ` +
        `200 streams: first byte p50 ${Math.round(f.streams.ttfbP50Ms)} ms, p99 ${Math.round(f.streams.ttfbP99Ms)} ms, all done ${(f.streams.totalMs / 1000).toFixed(2)} s` +
        (f.recordingMb === null ? '' : `; recording ${f.recordingMb.toFixed(1)} MB`),
    );
  }
}
