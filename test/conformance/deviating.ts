import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect } from 'vitest';
import { ALL_CHECKS, BEHAVIOUR_CHECKS, failureText, junitXml, matchesGlob, runConformance } from '../../src/conformance/index.ts';
import type { CheckResult, SuiteOptions, SuiteReport } from '../../src/conformance/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// The harness of the deviation tests (test/conformance/deviations*.test.ts): each group of conformance checks must
// FAIL on the deviation it exists to catch. A deliberately deviating server sits in front of a real emulator: a
// small proxy that forwards everything (the control API under /_emulator too) and alters the request or the answer
// for matching requests. Every run restricts the suite to one group and asserts the exact ids that fail, the
// request named by the failure, expected against actual, and a curl line with the key redacted. A test file calls
// `useDeviations()` once, at its top level: each of its tests gets a fresh emulator, and `deviate` a proxy before it.

export const KEY = 'sk-emulator-demo';
export const ADMIN = 'conformance-admin';

// ---------------------------------------------------------------------------------------------------------------
// The deviating proxy

export interface Forwarded {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Deviation {
  /** Changes what is forwarded; undefined leaves the request as sent. */
  request?(req: Forwarded): Forwarded | undefined;
  /** Changes the answer (a copy); undefined leaves it as the emulator gave it. */
  answer?(answer: Answer, req: Forwarded): Answer | undefined;
}

export interface LoggedAnswer {
  method: string;
  path: string;
  status: number;
  requestId: string | null;
  altered: boolean;
}

export interface Proxy {
  url: string;
  /** Every answer the proxy gave, after the deviation. */
  log: LoggedAnswer[];
  /** The API keys the suite sent, to prove none of them reaches a report. */
  keys: Set<string>;
  close(): Promise<void>;
}

// Hop-by-hop and length headers: recomputed on each side.
const HOP = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'expect', 'content-length', 'content-encoding']);

export async function startProxy(target: string, deviation: Deviation): Promise<Proxy> {
  const log: LoggedAnswer[] = [];
  const keys = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    for (const name of ['authorization', 'x-api-key']) {
      const key = /sk-[A-Za-z0-9_-]+/.exec(headers[name] ?? '')?.[0];
      if (key) keys.add(key);
    }
    const sent: Forwarded = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body: Buffer.concat(chunks).toString('utf8') };
    const changed = deviation.request?.(structuredClone(sent));
    const forwarded = changed ?? sent;
    const upstream = await fetch(`${target}${forwarded.path}`, {
      method: forwarded.method,
      headers: forwarded.headers,
      ...(forwarded.body !== '' && forwarded.method !== 'GET' && forwarded.method !== 'HEAD' ? { body: forwarded.body } : {}),
    });
    const answerHeaders: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP.has(name)) answerHeaders[name] = value;
    });
    const plain: Answer = { status: upstream.status, headers: answerHeaders, body: await upstream.text() };
    const altered = deviation.answer?.(structuredClone(plain), sent);
    const answer = altered ?? plain;
    log.push({ method: sent.method, path: sent.path, status: answer.status, requestId: answer.headers['x-request-id'] ?? null, altered: changed !== undefined || altered !== undefined });
    res.writeHead(answer.status, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) }).end(answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    keys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Small tools for deviations.
export const is = (req: Forwarded, method: string, path: RegExp): boolean => req.method === method && path.test(req.path);
export const isJson = (answer: Answer): boolean => (answer.headers['content-type'] ?? '').includes('json');

export function editJson(answer: Answer, edit: (body: Record<string, unknown>) => void): Answer {
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  edit(body);
  return { ...answer, body: JSON.stringify(body) };
}

/** The tasks in a task answer: the task itself, or a list's data. */
export function tasksOf(body: Record<string, unknown>): Record<string, unknown>[] {
  if (Array.isArray(body['data'])) return body['data'] as Record<string, unknown>[];
  return typeof body['id'] === 'string' && 'points' in body ? [body] : [];
}

export const sseBlocks = (text: string): string[] => text.split(/\n\n/).filter((block) => block.trim() !== '');
export const sseText = (blocks: string[]): string => blocks.map((block) => `${block}\n\n`).join('');
export const eventOf = (block: string): string | null => /^event: ?(.*)$/m.exec(block)?.[1] ?? null;

// ---------------------------------------------------------------------------------------------------------------
// Running the suite and reading its failures

let emulator: Emulator;
let base: string;
let proxy: Proxy | null = null;

/** The emulator behind the proxy of the running test. */
export const current = (): { emulator: Emulator; base: string } => ({ emulator, base });

/** Each test of the calling file gets a fresh emulator (manual clock, plain-HTTP callbacks), closed after it. */
export function useDeviations(): void {
  beforeEach(async () => {
    emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
    base = await emulator.listen(0);
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = null;
    await emulator.close();
  });
}

export async function deviate(deviation: Deviation): Promise<Proxy> {
  proxy = await startProxy(base, deviation);
  return proxy;
}

/**
 * The suite against the proxy, the control API through the proxy too (forwarded unchanged): the suite runs as a
 * fresh account it funds there, so no budget applies.
 */
export function runAgainst(p: Proxy, only: string[], extra: Partial<SuiteOptions> = {}): Promise<SuiteReport> {
  return runConformance({ baseUrl: p.url, admin: { url: p.url, token: ADMIN }, only, ...extra });
}

/** The suite's checks, then the rules of behaviour judged over the run, that the globs select. */
export const idsOf = (only: string[]): string[] => [...ALL_CHECKS, ...BEHAVIOUR_CHECKS].map((c) => c.id).filter((id) => only.some((p) => matchesGlob(id, p)));
export const BEHAVIOUR = new Set(BEHAVIOUR_CHECKS.map((c) => c.id));

/** Every selected check ran; exactly `failedIds` failed, the rest passed, none skipped. */
export function expectFailedExactly(report: SuiteReport, only: string[], failedIds: string[]): void {
  expect(report.results.map((r) => r.id)).toEqual(idsOf(only));
  const failed = report.results.filter((r) => r.status === 'failed');
  expect(failed.map((r) => r.id).sort(), JSON.stringify(failed.map((r) => [r.id, r.failure?.message]))).toEqual([...failedIds].sort());
  expect(report.failed).toBe(failedIds.length);
  expect(report.failed).toBeGreaterThan(0);
  // A rule of behaviour that saw nothing to judge in a run cut to a few checks says so; the suite's checks all ran.
  const skipped = report.results.filter((r) => r.status === 'skipped');
  for (const r of skipped) expect([r.id, BEHAVIOUR.has(r.id), typeof r.reason]).toEqual([r.id, true, 'string']);
  expect(report.passed).toBe(report.results.length - failedIds.length - skipped.length);
}

export interface Wanted {
  message: string | RegExp;
  method: string;
  path: string;
  /** null: the answer had no request id (the deviation removed it). Default: the id the proxy answered with. */
  requestId?: null;
  expected?: unknown;
  actual?: unknown;
}

/** The failure of `id` names the request, the id the proxy answered with, expected against actual, and a redacted curl. */
export function expectFailure(p: Proxy, report: SuiteReport, id: string, want: Wanted): NonNullable<CheckResult['failure']> {
  const result = report.results.find((r) => r.id === id);
  expect(result?.status, `${id} fails`).toBe('failed');
  const failure = result?.failure;
  if (!result || !failure) throw new Error(`${id} has no failure`);
  if (typeof want.message === 'string') expect(failure.message).toBe(want.message);
  else expect(failure.message).toMatch(want.message);

  expect(failure.request?.method).toBe(want.method);
  expect(failure.request?.path).toBe(want.path);
  if (want.requestId === null) {
    expect(failure.request?.requestId).toBeNull();
  } else {
    expect(failure.request?.requestId).toMatch(/^req_[a-z0-9]{24}$/);
    const named = p.log.filter((e) => e.requestId === failure.request?.requestId);
    expect(named.map((e) => `${e.method} ${e.path}`)).toEqual([`${want.method} ${want.path}`]);
  }
  if ('expected' in want) expect(failure.expected).toEqual(want.expected);
  if ('actual' in want) expect(failure.actual).toEqual(want.actual);

  expect(failure.curl?.startsWith(`curl -sS -X ${want.method} '${p.url}${want.path}'`), failure.curl ?? 'no curl').toBe(true);
  expect(failure.curl).toContain('sk-REDACTED');
  for (const key of p.keys) expect(failure.curl).not.toContain(key);

  const text = failureText(result);
  expect(text.split('\n')[0]).toBe(`FAIL ${id}: ${failure.message}`);
  expect(text).toContain(`  request:  ${want.method} ${want.path} (request id ${failure.request?.requestId ?? 'none'})`);
  if ('expected' in want) expect(text).toContain('  expected: ');
  if ('actual' in want) expect(text).toContain('  actual:   ');
  expect(text).toContain(`  repro:    curl -sS -X ${want.method} `);
  expectNoKeyLeaks(p, report);
  return failure;
}

/** No key the suite sent appears anywhere in the report, its JUnit XML or its printed failures. */
export function expectNoKeyLeaks(p: Proxy, report: SuiteReport): void {
  const everything = [JSON.stringify(report), junitXml(report), ...report.results.map(failureText)].join('\n');
  // The suite's own key (made through the control API) and the made-up ones of the auth checks.
  expect(p.keys.size).toBeGreaterThan(0);
  for (const key of p.keys) expect(everything).not.toContain(key);
}

/** The deviation did happen (a failure cannot come from a proxy that altered nothing). */
export function expectAltered(p: Proxy, method: string, path: RegExp): void {
  expect(p.log.filter((e) => e.altered && e.method === method && path.test(e.path)).length, `${method} ${path} altered`).toBeGreaterThan(0);
}

