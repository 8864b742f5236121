import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { SchemaArbitraries } from './arbitrary.ts';
import { caseArbitrary, caseProblem, collectionOf, render } from './cases.ts';
import type { HttpRequest } from './cases.ts';
import { OpenApiDocument, isObject } from './document.ts';
import type { Operation } from './document.ts';
import { judge, noAnswer } from './judge.ts';
import type { Answer, Finding } from './judge.ts';
import { fundedKey, noteKey, uploadSeedFiles } from './seed-data.ts';
import { Validity } from './validity.ts';
import { resolvesInternally } from './resolved.ts';

/**
 * Positive fuzzing, Schemathesis-style (issue 15): every operation of openapi/service.yaml gets requests whose
 * parameters and bodies are generated from the document and proven valid against it by Ajv, and every answer
 * is judged (judge.ts). The counterpart of test/fuzz/bad-input.fuzz.ts, which sends invalid input.
 *
 * Each operation runs as one fast-check property with its share of the budget and the seed `seed + i`, so a
 * run is replayed from its seed; a generated case Ajv refuses is a precondition failure (fc.pre), discarded and
 * counted. The property never fails: findings are collected, grouped and reported, not shrunk.
 */
export const DEFAULT_DOCUMENT = fileURLToPath(new URL('../../../openapi/service.yaml', import.meta.url));

/**
 * Signing headers belong to keys with signing on; the fuzz key has it off, so its requests carry none of them
 * (`skipHeaders: /^$/` sends them too: a key without signing ignores them, as the document says).
 */
const SKIPPED_HEADERS = /^x-svc-/i;

export interface FuzzOptions {
  baseUrl: string;
  /** The control API token: a funded account and key are created with it. Without one, `key` is used as is. */
  adminToken?: string;
  key?: string;
  /** Cases to send (schema-valid requests), over all operations. */
  runs: number;
  seed: number;
  document?: string;
  /** Header parameters never generated (default: the signing headers). */
  skipHeaders?: RegExp;
  log?: (line: string) => void;
}

export interface FindingGroup extends Finding {
  /** Cases that found the same thing. */
  count: number;
}

export interface OperationStats {
  cases: number;
  generated: number;
  discarded: number;
  statuses: Record<string, number>;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  generated: number;
  discarded: number;
  discardRate: number;
  /** Values drawn again inside the generator (a pattern, format or length missed), not whole cases. */
  redrawn: number;
  findings: FindingGroup[];
  /** 402 and 429 answers: limits, counted apart. */
  limited: number;
  /** Per operation: cases sent, generated and discarded, and the answers' statuses. */
  operations: Record<string, OperationStats>;
  /** Operations the generator could not produce valid cases for. */
  starved: string[];
  durationMs: number;
}

/** Collections first: their answers give the ids the paths with parameters use. */
const order = (op: Operation): number => (op.parameters.some((p) => p.in === 'path') ? 1 : 0);

/** How much of the budget an operation gets: more for more to generate. */
const weight = (op: Operation, skip: RegExp): number =>
  1 + op.parameters.filter((p) => p.in !== 'cookie' && !(p.in === 'header' && skip.test(p.name))).length + (op.body ? 4 : 0);

export async function runSchemaFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const log = options.log ?? ((): void => undefined);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const document = OpenApiDocument.load(options.document ?? DEFAULT_DOCUMENT);
  const validity = new Validity(document);
  const key = options.adminToken ? (await fundedKey(baseUrl, options.adminToken)).key : (options.key ?? '');
  const uploads = await uploadSeedFiles(baseUrl, key, document);
  const arbs = new SchemaArbitraries(document, {
    fileAddresses: (note) => uploads.get(noteKey(note)) ?? [],
    matches: (schema, value) => validity.matches(schema, value),
    formatFits: (format, value) => validity.formatFits(format, value),
  });
  const pools = new Map<string, string[]>();
  const ctx = {
    baseUrl,
    document,
    arbs,
    key,
    pool: (collection: string) => pools.get(collection) ?? [],
    fits: (p: { pointer: string }, value: string) => validity.valid(p.pointer, value),
  };
  const report: FuzzReport = { seed: options.seed, cases: 0, generated: 0, discarded: 0, discardRate: 0, redrawn: 0, findings: [], limited: 0, operations: {}, starved: [], durationMs: 0 };
  const groups = new Map<string, FindingGroup>();

  const skip = options.skipHeaders ?? SKIPPED_HEADERS;
  const operations = document.operations().sort((a, b) => order(a) - order(b));
  const total = operations.reduce((sum, op) => sum + weight(op, skip), 0);
  for (const [i, op] of operations.entries()) {
    const budget = Math.max(1, Math.round((options.runs * weight(op, skip)) / total));
    const stats: OperationStats = (report.operations[op.id] = { cases: 0, generated: 0, discarded: 0, statuses: {} });
    const arbitrary = caseArbitrary(op, arbs, (name) => skip.test(name));
    if (!arbitrary) {
      report.starved.push(op.id);
      log(`schema fuzz: ${op.id}: the generator finds no valid request`);
      continue;
    }
    /** Judges an answer, counts limits and keeps the ids it gives. */
    const judged = (request: HttpRequest, answer: Answer): Finding[] => {
      stats.statuses[answer.status] = (stats.statuses[answer.status] ?? 0) + 1;
      const { findings, limited } = judge(op, request, answer);
      if (limited) report.limited++;
      if (answer.status >= 200 && answer.status < 300) harvest(pools, collectionOf(op.path), answer.body);
      return findings;
    };
    const property = fc.asyncProperty(arbitrary, async (c) => {
      report.generated++;
      stats.generated++;
      if (caseProblem(c, validity) !== null || (await resolvesInternally(c.body?.value))) {
        report.discarded++;
        stats.discarded++;
        fc.pre(false);
      }
      const request = render(c, ctx);
      const answer = await send(request);
      report.cases++;
      stats.cases++;
      for (const finding of answer instanceof Error ? [noAnswer(op, request, answer)] : judged(request, answer)) record(groups, finding);
    });
    const details = await fc.check(property, { numRuns: budget, seed: options.seed + i, endOnFailure: true });
    if (details.failed) {
      if (details.numSkips > 0 && details.errorInstance === null) {
        report.starved.push(op.id);
        log(`schema fuzz: ${op.id}: too many generated cases were invalid (${details.numSkips} discarded)`);
      } else {
        throw new Error(`schema fuzz: ${op.id} broke: ${String(details.errorInstance)}`, { cause: details.errorInstance });
      }
    }
  }
  report.findings = [...groups.values()];
  report.redrawn = arbs.redraws;
  report.discardRate = report.generated === 0 ? 0 : report.discarded / report.generated;
  report.durationMs = Date.now() - started;
  return report;
}

/**
 * A server may close a kept-alive connection it holds idle just as the client reuses it (node closes after 5 s,
 * and the client's own idle timer is coarse): the request never reached the server, and a client retries it
 * once. Only a request that fails twice is a finding.
 */
async function send(request: HttpRequest): Promise<Answer | Error> {
  const first = await sendOnce(request);
  if (first instanceof Error && (first.cause as { code?: string } | undefined)?.code === 'UND_ERR_SOCKET') return sendOnce(request);
  return first;
}

async function sendOnce(request: HttpRequest): Promise<Answer | Error> {
  try {
    const res = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(60_000),
    });
    // An event stream is read to its end.
    const text = await res.text();
    const headers = Object.fromEntries(res.headers);
    let body: unknown = text;
    if ((headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.status, headers, text, body };
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** Ids in a 2xx answer (`id`, or `data[].id`), kept for the collection's paths with parameters. */
function harvest(pools: Map<string, string[]>, collection: string, body: unknown): void {
  if (!isObject(body)) return;
  const ids = [body['id'], ...(Array.isArray(body['data']) ? body['data'].filter(isObject).map((d) => d['id']) : [])];
  const pool = pools.get(collection) ?? [];
  for (const id of ids) if (typeof id === 'string' && !pool.includes(id) && pool.length < 1000) pool.push(id);
  pools.set(collection, pool);
}

/** Cases that found the same thing count once, with the shortest request as the example (nothing is shrunk). */
function record(groups: Map<string, FindingGroup>, finding: Finding): void {
  const id = [finding.kind, finding.operation, finding.status, finding.code, finding.gist].join('|');
  const group = groups.get(id);
  if (!group) groups.set(id, { ...finding, count: 1 });
  else if (finding.curl.length < group.curl.length) groups.set(id, { ...finding, count: group.count + 1 });
  else group.count++;
}

/** The report as lines: each finding with its curl, then the counts, then the closing line. */
export function describe(report: FuzzReport): string[] {
  const lines: string[] = [];
  report.findings.forEach((f, i) => {
    lines.push(`finding ${i + 1}: ${f.kind}: ${f.operation} → ${f.status}${f.code ? ` ${f.code}` : ''} (${f.count} case${f.count === 1 ? '' : 's'})`);
    lines.push(`  ${f.curl}`);
    if (f.detail) lines.push(`  why: ${f.detail.slice(0, 500)}`);
    if (f.body) lines.push(`  answer: ${f.body.replace(/\s+/g, ' ').slice(0, 400)}`);
  });
  for (const [op, stats] of Object.entries(report.operations)) {
    const answers = Object.entries(stats.statuses).map(([s, c]) => `${s}: ${c}`).join(', ');
    lines.push(`  ${op}: ${stats.cases} cases (${answers}), ${stats.discarded} of ${stats.generated} generated discarded`);
  }
  lines.push(
    `generated ${report.generated}, discarded ${report.discarded} as invalid (${(report.discardRate * 100).toFixed(1)}%), ` +
      `${report.redrawn} values redrawn inside the generator; ` +
      `${report.limited} answers were limits (402/429); ${(report.durationMs / 1000).toFixed(1)} s`,
  );
  if (report.starved.length > 0) lines.push(`no valid requests generated for: ${report.starved.join(', ')}`);
  lines.push(`schema fuzz: ${report.cases} cases, ${report.findings.length} findings (seed ${report.seed})`);
  return lines;
}
