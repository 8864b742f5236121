import fc from 'fast-check';
import { expect, it } from 'vitest';
import { createScenarioRegistry, selectTextScenario } from '../../src/scenarios/index.ts';
import type { Scenario, ScenarioMatch, ScenariosRepo, TextCondition } from '../../src/scenarios/index.ts';
import { chatFormat } from '../../src/text-formats/index.ts';
import type { TextView } from '../../src/text-formats/index.ts';

// The text conditions of many rules, read through the matcher's index of a call's texts (text-index.ts: pairs of
// characters, a regular expression's required literals), choose exactly the scenario a plain reading of each rule
// chooses: the first whose condition holds on the texts as written. Random texts and rules over a small alphabet
// with the characters whose cases do not map one to one (İ lowers to two code units; ſ and the Kelvin sign K
// match s and k only through Unicode folding; a case-insensitive ς matches σ, which does not lower to it), contains, equals and regular expressions with groups, classes,
// alternatives, quantifiers and escapes, most of them written around a part of the text so that they hold. Rules
// that never fit read the text first, enough of them for the text to be indexed.
// @see docs/reference/scenarios.md "Answers on demand"

const ALPHABET = ['a', 'b', 'A', 'B', 'k', 'K', 's', 'S', ' ', '#', '1', '2', '.', 'İ', 'ſ', '\u212a', 'é', 'É', 'σ', 'ς', 'Σ'];
const char = fc.constantFrom(...ALPHABET);
const text = fc.array(char, { maxLength: 24 }).map((chars) => chars.join(''));

/** A pattern made of the pieces a user writes, literal text among them. */
const REGEX_PIECES = [
  ...ALPHABET.filter((c) => c !== '.'),
  'ab', 'sk', 'ba', '\\.', '\\#', '\\d', '\\b', '\\s', '\\w', '\\x41', '\\u0061', '\\cA', '.', '^', '$', '?', '*', '+', '{2}', '{1,2}', '{', '}',
  '|', '(a|b)', '(?:ab)', '(?=a)', '(?!b)', '[ab]', '[^a]', '[.]', '(a)\\1', 'a+?', '\\k', '\\p{L}', ']',
];
const regex = fc
  .array(fc.constantFrom(...REGEX_PIECES), { minLength: 1, maxLength: 6 })
  .map((pieces) => pieces.join(''))
  .filter((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  });

/** Another case of a character that a case-insensitive pattern matches: the other ASCII case; σ, ς and Σ each other. */
const SIGMAS: Record<string, string> = { σ: 'ς', ς: 'Σ', Σ: 'σ' };
const flipped = (chars: string[], flips: boolean[]): string[] =>
  chars.map((c, i) => (!flips[i] ? c : /[a-z]/i.test(c) ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : (SIGMAS[c] ?? c)));
const escaped = (c: string): string => (c === '.' ? '\\.' : c === '#' ? '\\#' : c);
/** Ways to write one character of a text so the pattern still matches it (as itself most often), and pieces that match nothing or anything. */
const AS_WRITTEN = [
  (c: string) => escaped(c),
  (c: string) => escaped(c),
  (c: string) => escaped(c),
  (c: string) => escaped(c),
  (c: string) => `${escaped(c)}?`,
  () => '.',
  (c: string) => `[${c}]`,
  (c: string) => `(${escaped(c)})`,
  (c: string) => `${escaped(c)}+`,
  (c: string) => `${escaped(c)}{1,2}`,
  (c: string) => `(?:${escaped(c)}|Z)`,
  (c: string) => `${escaped(c)}*`,
];
const FILLERS = ['', '', '', 'Z?', '(ZZ)?', '\\d*', '[Z]?', 'Z{0}', '\\x5a?', '\\u005a*', '(?:Z|)', '(?:)', '((Z)ZZ)?', '(\\-\\-\\-)?'];

/** A condition a call's text meets: a part of the text, as a needle, the whole, or a pattern written around it. */
const heldBy = (subject: string): fc.Arbitrary<TextCondition> =>
  fc
    .record({
      from: fc.nat(subject.length),
      length: fc.nat(8),
      folded: fc.boolean(),
      flips: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      forms: fc.array(fc.nat(AS_WRITTEN.length - 1), { minLength: 8, maxLength: 8 }),
      fillers: fc.array(fc.nat(FILLERS.length - 1), { minLength: 9, maxLength: 9 }),
      kind: fc.constantFrom('contains', 'equals', 'regex', 'regex-alternative'),
    })
    .map(({ from, length, folded, flips, forms, fillers, kind }) => {
      const part = [...subject.slice(from, from + length)];
      const chars = folded ? flipped(part, flips) : part;
      if (kind === 'contains') return { contains: chars.join(''), case_insensitive: folded };
      if (kind === 'equals') return { equals: (folded ? flipped([...subject], flips) : [...subject]).join(''), case_insensitive: folded };
      const body = chars.map((c, i) => `${FILLERS[fillers[i] ?? 0]}${AS_WRITTEN[forms[i] ?? 0]?.(c) ?? c}`).join('') + (FILLERS[fillers[8] ?? 0] ?? '');
      return { regex: kind === 'regex' ? body : `ZZZ|${body}`, case_insensitive: folded };
    });

const anyCondition: fc.Arbitrary<TextCondition> = fc.oneof(
  fc.record({ contains: fc.oneof(text, fc.constant('')), case_insensitive: fc.boolean() }),
  fc.record({ equals: text, case_insensitive: fc.boolean() }),
  fc.record({ regex, case_insensitive: fc.boolean() }),
);
const field = fc.constantFrom('last_user', 'system', 'any_message', 'tool_result') as fc.Arbitrary<'last_user' | 'system' | 'any_message' | 'tool_result'>;
/**
 * Rules that read a text and never fit (no text has a NUL): with 16 of each form, the text is worth an index
 * (text-match.ts's WORTH_AN_INDEX), which every rule reads.
 */
const DECOYS: TextCondition[] = Array.from({ length: 16 }, (_, i) => [{ contains: `\0${i}` }, { contains: `\0${i}`, case_insensitive: true }]).flat();

/** A rule's condition on a text, read as the reference reads it, with no index. */
function plainHolds(c: TextCondition, subject: string): boolean {
  const folded = c.case_insensitive === true;
  if (c.regex !== undefined) return new RegExp(c.regex, folded ? 'i' : '').test(subject);
  const fold = (s: string): string => (folded ? s.toLowerCase() : s);
  return c.equals !== undefined ? fold(subject) === fold(c.equals) : fold(subject).includes(fold(c.contains ?? ''));
}

function plainFits(rule: { field: string; condition: TextCondition }, view: TextView): boolean {
  const on = (subject: string | null | undefined): boolean => subject !== null && subject !== undefined && plainHolds(rule.condition, subject);
  if (rule.field === 'last_user') return on(view.lastUser);
  if (rule.field === 'system') return on(view.system);
  if (rule.field === 'tool_result') return on(view.lastToolResult?.content);
  return view.messages.some(on);
}

const scenario = (name: string, match?: Scenario['match']): Scenario => ({
  name,
  outcome: 'succeeded',
  queue_seconds: 0,
  processing_seconds: 0,
  cancelable_while_processing: false,
  ...(match ? { match, text: { first_token_ms: 0, chunk_interval_ms: 0, reject: false, error_code: 'service_unavailable' } } : {}),
});

it('chooses, over many rules on the same texts, the scenario a plain reading of each rule chooses', () => {
  const texts = fc.record({ system: text, user: text, earlier: text, result: text });
  const cases = fc.tuple(texts, field).chain(([t, on]) => {
    const subjects = on === 'last_user' ? [t.user] : on === 'system' ? [t.system] : on === 'tool_result' ? [t.result] : [t.system, t.earlier, t.result, t.user];
    const held = fc.constantFrom(...subjects).chain(heldBy);
    return fc.record({ texts: fc.constant(t), field: fc.constant(on), conditions: fc.array(fc.oneof(held, anyCondition), { minLength: 1, maxLength: 8 }) });
  });
  fc.assert(
    fc.property(cases, ({ texts: t, field: on, conditions }) => {
      const view = chatFormat.parse({
        model: 'svc-text-pro',
        messages: [
          { role: 'system', content: t.system },
          { role: 'user', content: t.earlier },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: t.result },
          { role: 'user', content: t.user },
        ],
      }).view;
      const rules = [...DECOYS, ...conditions].map((condition) => ({ field: on, condition }));
      const loaded = rules.map((rule, i) => scenario(`rule-${i}`, on === 'tool_result' ? { tool_result: { content: rule.condition } } : { [on]: rule.condition }));
      const repo: ScenariosRepo = { all: () => loaded, load: () => undefined, epoch: () => 0 };
      const registry = createScenarioRegistry([scenario('default')], repo);
      const chosen = selectTextScenario(registry, { view, accountId: 'acct_x', fingerprint: () => null }, undefined);
      const first = rules.findIndex((rule) => plainFits(rule, view));
      expect(chosen.scenario.name).toBe(first === -1 ? 'default' : `rule-${first}`);
    }),
    { numRuns: 3_000 },
  );
});

// ---- every other key, over many rules and calls of many shapes (the lists kept per call shape)

const TOOL_NAMES = ['get_weather', 'get_time'];
/**
 * A chat call of a random shape: model, stream, system text or none, an earlier exchange or none, an agent turn with
 * a tool result or none, tools, tool choice, response format.
 */
const callParts = fc.record({
    model: fc.constantFrom('svc-text-pro', 'svc-text-lite'),
    stream: fc.boolean(),
    system: fc.option(fc.constantFrom('Be brief.', 'You are a pirate.'), { nil: undefined }),
    user: fc.constantFrom('weather in Paris?', 'what time is it', 'Summarize this'),
    /** An earlier exchange without tools: an assistant turn and no tool result. */
    earlier: fc.boolean(),
    turn: fc.option(fc.record({ tool: fc.constantFrom(...TOOL_NAMES), result: fc.constantFrom('sunny', '12:00') }), { nil: undefined }),
    tools: fc.subarray(TOOL_NAMES),
    choice: fc.option(fc.constantFrom<unknown>('none', 'auto', 'required', { type: 'function', function: { name: 'get_weather' } }), { nil: undefined }),
    format: fc.option(fc.constantFrom<unknown>({ type: 'text' }, { type: 'json_object' }, { type: 'json_schema', json_schema: { name: 'a', schema: {} } }, { type: 'json_schema', json_schema: { name: 'b', schema: {} } }), { nil: undefined }),
  });
type CallParts = typeof callParts extends fc.Arbitrary<infer T> ? T : never;
const bodyOf = (c: CallParts): Record<string, unknown> => ({
    model: c.model,
    stream: c.stream,
    messages: [
      ...(c.system ? [{ role: 'system', content: c.system }] : []),
      ...(c.earlier ? [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }] : []),
      { role: 'user', content: c.user },
      ...(c.turn
        ? [
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: c.turn.tool, arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'c1', content: c.turn.result },
          ]
        : []),
    ],
    ...(c.tools.length > 0 ? { tools: c.tools.map((name) => ({ type: 'function', function: { name } })) } : {}),
    ...(c.choice !== undefined ? { tool_choice: c.choice } : {}),
    ...(c.format !== undefined ? { response_format: c.format } : {}),
  });
/** Calls in turn: one, then others that each differ from it in one part (the lists per shape must tell them apart). */
const callsInTurn = fc
  .tuple(callParts, fc.array(fc.tuple(fc.constantFrom<keyof CallParts>('model', 'stream', 'system', 'user', 'earlier', 'turn', 'tools', 'choice', 'format'), callParts), { maxLength: 8 }))
  .map(([first, others]) => [first, ...others.map(([part, other]) => ({ ...first, [part]: other[part] }))].map(bodyOf));
/** A match of one to three keys, so that calls fit some of them. */
const everyKey = fc.record(
  {
    models: fc.subarray(['svc-text-pro', 'svc-text-lite'], { minLength: 1 }),
    formats: fc.constantFrom<('chat' | 'responses' | 'messages')[]>(['chat'], ['chat', 'messages']),
    stream: fc.boolean(),
    accounts: fc.constantFrom(['acct_a'], ['acct_b']),
    assistant_turns: fc.nat(2),
    tools: fc.subarray(TOOL_NAMES, { minLength: 1 }),
    tool_choice: fc.constantFrom<NonNullable<ScenarioMatch['tool_choice']>>('none', 'auto', 'required', { name: 'get_weather' }),
    response_format: fc.oneof(
      fc.record({ type: fc.constantFrom<'text' | 'json_object' | 'json_schema'>('text', 'json_object', 'json_schema') }),
      fc.record({ schema_name: fc.constantFrom('a', 'b') }),
      fc.record({ type: fc.constant<'json_schema'>('json_schema'), schema_name: fc.constantFrom('a', 'b') }),
    ),
    tool_result: fc.record({ name: fc.constantFrom(...TOOL_NAMES), content: fc.constantFrom<TextCondition>({ contains: 'sun' }, { regex: '^\\d' }) }, { requiredKeys: [] }),
    last_user: fc.constantFrom<TextCondition>({ contains: 'Paris' }, { contains: 'WEATHER', case_insensitive: true }, { regex: '^what' }, { equals: 'Summarize this' }),
    system: fc.constantFrom<TextCondition>({ contains: 'pirate' }, { equals: 'Be brief.' }),
    any_message: fc.constantFrom<TextCondition>({ contains: 'sunny' }, { regex: 'time|brief', case_insensitive: true }),
  },
  { noNullPrototype: true },
);
const ruleMatch: fc.Arbitrary<NonNullable<Scenario['match']>> = fc
  .tuple(everyKey, fc.shuffledSubarray(['models', 'formats', 'stream', 'accounts', 'assistant_turns', 'tools', 'tool_choice', 'response_format', 'tool_result', 'last_user', 'system', 'any_message'] as const, { minLength: 1, maxLength: 3 }))
  .map(([all, keys]) => Object.fromEntries(keys.map((key) => [key, all[key]])));

/** A match read as the reference's table reads it. */
function plainMatch(m: NonNullable<Scenario['match']>, view: TextView, accountId: string): boolean {
  const on = (c: TextCondition | undefined, subject: string | null): boolean => c === undefined || (subject !== null && plainHolds(c, subject));
  const choice = view.toolChoice;
  const result = view.lastToolResult;
  return (
    (m.models === undefined || m.models.includes(view.model)) &&
    (m.formats === undefined || m.formats.includes(view.format)) &&
    (m.stream === undefined || m.stream === view.stream) &&
    (m.accounts === undefined || m.accounts.includes(accountId)) &&
    (m.assistant_turns === undefined || m.assistant_turns === view.assistantTurns) &&
    (m.tools === undefined || m.tools.every((name) => view.tools.some((tool) => tool.name === name))) &&
    (m.tool_choice === undefined || (typeof m.tool_choice === 'string' ? choice === m.tool_choice : typeof choice === 'object' && choice.name === m.tool_choice.name)) &&
    (m.response_format === undefined ||
      ((m.response_format.type === undefined || m.response_format.type === view.responseFormat.type) &&
        (m.response_format.schema_name === undefined || m.response_format.schema_name === view.responseFormat.name))) &&
    (m.tool_result === undefined || (result !== null && (m.tool_result.name === undefined || m.tool_result.name === result.name) && on(m.tool_result.content, result.content))) &&
    on(m.last_user, view.lastUser) &&
    on(m.system, view.system) &&
    (m.any_message === undefined || view.messages.some((text) => plainHolds(m.any_message as TextCondition, text)))
  );
}

it('chooses, over many rules on every key and calls of many shapes in turn, the scenario a plain reading chooses', () => {
  fc.assert(
    fc.property(fc.array(ruleMatch, { minLength: 40, maxLength: 80 }), callsInTurn, fc.constantFrom('acct_a', 'acct_b'), (matches, calls, accountId) => {
      const loaded = matches.map((match, i) => scenario(`rule-${i}`, match));
      const registry = createScenarioRegistry([scenario('default')], { all: () => loaded, load: () => undefined, epoch: () => 0 });
      for (const body of calls) {
        let view: TextView;
        try {
          view = chatFormat.parse(body).view;
        } catch {
          continue; // A request the format refuses (a tool choice naming no offered tool): no call to match.
        }
        const chosen = selectTextScenario(registry, { view, accountId, fingerprint: () => null }, undefined);
        const first = matches.findIndex((match) => plainMatch(match, view, accountId));
        expect(chosen.scenario.name).toBe(first === -1 ? 'default' : `rule-${first}`);
      }
    }),
    { numRuns: 1_000 },
  );
});

it('rules out, past the first reads, a needle the text lacks, and still finds one it holds after many that it lacks', () => {
  const view = chatFormat.parse({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Where is my parcel? Order #4711, shipped to İstanbul.' }] }).view;
  const rules = [
    ...Array.from({ length: 50 }, (_, i) => scenario(`miss-${i}`, { last_user: { contains: `order #${i}:`, case_insensitive: true } })),
    ...Array.from({ length: 50 }, (_, i) => scenario(`miss-re-${i}`, { last_user: { regex: `shipped to (paris|rome) ${i}` } })),
    scenario('hit', { last_user: { regex: '\\border #47\\d+, SHIPPED', case_insensitive: true } }),
  ];
  const registry = createScenarioRegistry([scenario('default')], { all: () => rules, load: () => undefined, epoch: () => 0 });
  expect(selectTextScenario(registry, { view, accountId: 'acct_x', fingerprint: () => null }, undefined).scenario.name).toBe('hit');
});

// Found by the property above (seed 93159617): a `{` that begins no quantifier is a literal, so the `|` after it
// is an alternative of the whole expression, and `aaa{|` matches every text.
it('reads a `{` that begins no quantifier as a literal: the alternative after it still counts', () => {
  const view = chatFormat.parse({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'K SkB.2k' }] }).view;
  const rules = [
    ...Array.from({ length: 20 }, (_, i) => scenario(`miss-${i}`, { last_user: { contains: `absent ${i}` } })),
    scenario('braced', { last_user: { regex: 'aaa{|' } }),
    scenario('counted', { last_user: { regex: 'Sk{1}B' } }),
  ];
  const registry = createScenarioRegistry([scenario('default')], { all: () => rules, load: () => undefined, epoch: () => 0 });
  expect(selectTextScenario(registry, { view, accountId: 'acct_x', fingerprint: () => null }, undefined).scenario.name).toBe('braced');
  const counted = createScenarioRegistry([scenario('default')], { all: () => [...rules.slice(0, 20), rules[21] as (typeof rules)[number]], load: () => undefined, epoch: () => 0 });
  expect(selectTextScenario(counted, { view, accountId: 'acct_x', fingerprint: () => null }, undefined).scenario.name).toBe('counted');
});
