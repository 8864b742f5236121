/**
 * Issue 37's done-when: what the text-call match rules cost a call. Two emulators from the same sources, each in a
 * process of its own (`start --memory --clock manual --log-level silent`): (a) no rule loaded, (b) 1,000 text
 * scenarios loaded through `POST /_emulator/scenarios`, none of which fits the bench's call. The rules are varied
 * so that the matcher works as it would on a real suite's: other models, other formats (left out of the chat
 * call's list by the registry), the streamed calls, later agent turns, tools and response formats the call does not
 * have, and (most of them) conditions on the last user message, the system text or any message, plain,
 * case-insensitive and regular expressions, each read against the call's texts before it is ruled out.
 *
 * Both take the same number of non-streamed `POST /v1/chat/completions` per round, in rounds whose order alternates,
 * so that a busy second of the machine falls on each in turn (as bench/faults-cost.ts does). Two figures per run:
 * calls per second of wall time (what the goal names) and calls per second of the server's own CPU time (the
 * request path's cost, which other work on the machine moves less). The goal: with 1,000 rules, within 10 % of
 * none, judged on the median over rounds of (b)'s calls per second over (a)'s in the same round.
 */
import { loadavg } from 'node:os';
import { ratioOf, rotatingRounds, variantFigures } from './rounds.ts';
import type { Measured, Ratio, VariantFigures } from './rounds.ts';
import { ADMIN, benchKey, emulatorCommand, json, startServer, stopServer } from './servers.ts';

export const MATCH_ROUNDS = Number(process.env['BENCH_MATCH_ROUNDS'] ?? 10);
export const MATCH_REQUESTS = Number(process.env['BENCH_MATCH_REQUESTS'] ?? 2_000);
export const RULES = 1_000;
/** The goal: with the rules loaded, at least this share of the calls per second without them. */
export const GOAL = 0.9;
const WARMUP_REQUESTS = 3_000;

/** The call: a support agent's first turn, a system text and a user message of a few sentences. */
const CALL = JSON.stringify({
  model: 'svc-text-pro',
  max_tokens: 64,
  messages: [
    { role: 'system', content: 'You are a helpful support agent for an online shop. Answer briefly and politely, in the language of the customer.' },
    { role: 'user', content: 'Hello, I ordered a pair of walking boots last week and they have not arrived yet. Could you tell me where the parcel is and when it will come?' },
  ],
});

/**
 * The i-th of the rules that never fit the call, one of ten kinds in turn: most pass the cheap tests (model,
 * format, stream, turns) and are ruled out only once a text of the call is read.
 */
function rule(i: number): Record<string, unknown> {
  const kinds: Record<string, unknown>[] = [
    { models: ['svc-text-lite'], last_user: { contains: 'walking boots' } },
    { formats: [i % 20 === 1 ? 'messages' : 'responses'], any_message: { contains: 'parcel' } },
    { stream: true, last_user: { contains: 'parcel', case_insensitive: true } },
    { assistant_turns: 1 + (i % 3), system: { contains: 'support agent' } },
    { last_user: { contains: `order #${i}` } },
    { last_user: { contains: `Refund of order ${i}`, case_insensitive: true } },
    { last_user: { regex: `\\b(cancel|return)s? order #?${i}\\b`, case_insensitive: true } },
    { system: { equals: `You are agent ${i}.` }, last_user: { contains: 'boots' } },
    { any_message: { contains: `ticket-${i}`, case_insensitive: true } },
    i % 20 === 9 ? { tools: [`lookup_${i}`] } : { response_format: { type: 'json_schema', schema_name: `form_${i}` } },
  ];
  return { name: `bench-rule-${i}`, outcome: 'succeeded', match: kinds[i % kinds.length], text: { text: `rule ${i} answered` } };
}

export interface TextMatchingFigures {
  loadAverage: { before: number; after: number };
  rounds: number;
  requests: number;
  rules: number;
  none: VariantFigures;
  loaded: VariantFigures;
  /** (b) / (a), round by round. */
  ratio: { rps: Ratio; cpuRps: Ratio };
}

const headersOf = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

/** The answer the call gets: it must be the generated one, never a rule's. */
async function answerOf(t: Measured): Promise<string> {
  const body = await json(t.url, { method: 'POST', headers: t.headers, body: CALL });
  const [choice] = body['choices'] as { message: { content: string } }[];
  return choice?.message.content ?? '';
}

async function prepare(rules: number): Promise<Measured> {
  const server = await startServer(emulatorCommand(['--memory']), '/_emulator/health');
  const key = await benchKey(server.base);
  if (rules > 0) {
    const scenarios = Array.from({ length: rules }, (_, i) => rule(i));
    await json(`${server.base}/_emulator/scenarios`, { method: 'POST', headers: headersOf(ADMIN), body: JSON.stringify({ scenarios }) });
  }
  const target: Measured = { server, url: `${server.base}/v1/chat/completions`, method: 'POST', headers: headersOf(key), body: CALL };
  const answer = await answerOf(target);
  if (/^rule \d+ answered$/.test(answer)) throw new Error(`text-matching: a bench rule fitted the call (${answer})`);
  return target;
}

export async function textMatching(): Promise<TextMatchingFigures> {
  const before = loadavg()[0] ?? NaN;
  const targets: Measured[] = [];
  try {
    targets.push(await prepare(0), await prepare(RULES));
    const rounds = await rotatingRounds(targets, MATCH_ROUNDS, MATCH_REQUESTS, WARMUP_REQUESTS);
    const variant = (i: number, label: string): VariantFigures => variantFigures(label, rounds[i] ?? []);
    const ratio = (figure: 'rps' | 'cpuRps'): Ratio => ratioOf(rounds[1] ?? [], rounds[0] ?? [], figure);
    return {
      loadAverage: { before, after: loadavg()[0] ?? NaN },
      rounds: MATCH_ROUNDS,
      requests: MATCH_REQUESTS,
      rules: RULES,
      none: variant(0, 'no text rule loaded'),
      loaded: variant(1, `${RULES.toLocaleString('en-US')} text rules loaded, none fitting`),
      ratio: { rps: ratio('rps'), cpuRps: ratio('cpuRps') },
    };
  } finally {
    for (const t of targets) await stopServer(t.server);
  }
}

export function printTextMatching(f: TextMatchingFigures, line: (text: string) => void): void {
  const rps = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(7);
  const pct = (r: number): string => `${(r * 100).toFixed(1)}%`;
  const spread = (r: Ratio): string => `${pct(r.median)} (middle half of rounds ${pct(r.q1)} to ${pct(r.q3)})`;
  line(
    `text-matching: non-streamed POST /v1/chat/completions, ${f.rounds} rounds of ${f.requests.toLocaleString('en-US')} calls, the two in alternating order ` +
      `(load average ${f.loadAverage.before.toFixed(1)} before, ${f.loadAverage.after.toFixed(1)} after); medians of the rounds`,
  );
  line(`  ${''.padEnd(44)}  calls/s   calls per server CPU second`);
  for (const v of [f.none, f.loaded]) line(`  ${v.label.padEnd(44)} ${rps(v.rps)}   ${rps(v.cpuRps)}`);
  line(`  ${f.rules.toLocaleString('en-US')} rules / none:  calls/s ${spread(f.ratio.rps)}; per CPU second ${spread(f.ratio.cpuRps)}`);
  const { median: judged, q1, q3 } = f.ratio.rps;
  // Rounds that scatter wider than the margin say the machine was busy with other work: the verdict is then noise.
  const scattered = q3 - q1 > 1 - GOAL ? `; but the rounds' middle half spans ${pct(q1)} to ${pct(q3)}, wider than the margin: rerun on a quiet machine to trust it` : '';
  line(
    `  goal: with ${f.rules.toLocaleString('en-US')} rules loaded, within ${pct(1 - GOAL)} of the calls/s with none (${pct(GOAL)} or more): ` +
      `${judged >= GOAL ? 'met' : 'not met'} (${pct(judged)})${scattered}`,
  );
}
