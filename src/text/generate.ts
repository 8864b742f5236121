import { createRandom, pick } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { sampleJson, VOCABULARY as V } from './json-sample.ts';
import { countInputTokens, toPieces } from '../text-formats/index.ts';
import type { Generated, TextRequest, ToolCallOut } from '../text-formats/index.ts';

export interface GenerationOverrides {
  /** Fixed output text instead of the generated one (a forced tool call included): cut as a generated one is. */
  text?: string;
  /** Tool calls instead of the generated answer: their arguments cut at the maximum, as a forced tool call's are. */
  toolCalls?: { id?: string; name: string; arguments?: Record<string, unknown> }[];
  /**
   * Length of the natural answer in tokens; with a fixed answer (`text`, `toolCalls`, `chunks`), the output tokens
   * the usage reports.
   */
  outputTokens?: number;
  /** Input tokens instead of the counted ones. */
  inputTokens?: number;
  /** A recorded answer: exactly these pieces, never cut, ended as `finish` says (default `stop`). */
  chunks?: string[];
  /** How a fixed answer ended, whatever cut it (absent: as it was cut, else `stop`, or `tool_calls` for tool calls). */
  finish?: 'stop' | 'length' | 'stop_sequence';
  /** With finish `stop_sequence`: the sequence that ended the answer. */
  stopSequence?: string;
}

/**
 * Deterministic output for a request: the same request and seed always give the same text. The answer's natural
 * length comes from the request; it is cut at a stop sequence (`stop_sequence`) or at the maximum (`length`).
 * A recorded answer (`chunks`) is given as it was recorded.
 */
export function generate(request: TextRequest, overrides: GenerationOverrides = {}): Generated {
  if (overrides.chunks !== undefined) return replay(request, overrides.chunks, overrides);
  const drafted = overrides.toolCalls !== undefined ? statedToolCalls(request, overrides.toolCalls, overrides) : draft(request, overrides);
  const fixed = overrides.text !== undefined || overrides.toolCalls !== undefined;
  const result = fixed && overrides.finish !== undefined ? { ...drafted, finish: overrides.finish, stopSequence: overrides.finish === 'stop_sequence' ? (overrides.stopSequence ?? null) : null } : drafted;
  const counted = result.toolCalls.length > 0 ? result.toolCalls.reduce((sum, call) => sum + call.tokens, 0) : result.pieces.length;
  const outputTokens = fixed && overrides.outputTokens !== undefined ? overrides.outputTokens : counted;
  return { ...result, outputTokens };
}

/** The input tokens an answer reports: the stated ones, else the prompt's counted. */
export const inputTokensOf = (request: Pick<TextRequest, 'prompt'>, overrides: GenerationOverrides): number => overrides.inputTokens ?? countInputTokens(request.prompt);

/**
 * Whether the freeze may be worked out before the answer is made: it covers the maximum, which cuts every answer
 * but a recorded one (never cut), one with a stated `output_tokens` (charged as stated) and stated tool calls
 * (their arguments are cut at the maximum, but each call's tokens round up).
 */
export const cutAtMaximum = (overrides: GenerationOverrides): boolean =>
  overrides.chunks === undefined && overrides.toolCalls === undefined && !(overrides.text !== undefined && overrides.outputTokens !== undefined);

/**
 * Whether a drafted answer is a tool call: a forced tool's, unless the scenario fixed a text. `draft` makes it so,
 * and a stream's first event says it before the answer is made.
 */
export const answersWithTool = (request: Pick<TextRequest, 'forcedTool'>, overrides: GenerationOverrides): boolean =>
  request.forcedTool !== null && overrides.text === undefined;

/** A tool call of `args` (its JSON): a stream unit per 4 characters. */
const toolCallOf = (id: string | null, name: string, args: string): ToolCallOut => ({ id, name, arguments: args, tokens: Math.ceil(args.length / 4) });

/**
 * A scenario's tool calls, in order. Their arguments together are cut at the maximum (4 characters a token), as a
 * forced tool call's are: the call cut there ends the answer, `length`.
 */
function statedToolCalls(request: TextRequest, stated: NonNullable<GenerationOverrides['toolCalls']>, overrides: GenerationOverrides): Omit<Generated, 'outputTokens'> {
  let room = request.maxTokens * 4;
  const toolCalls: ToolCallOut[] = [];
  let cut = false;
  for (const call of stated) {
    const args = JSON.stringify(call.arguments ?? {});
    if (args.length > room) {
      if (room > 0) toolCalls.push(toolCallOf(call.id ?? null, call.name, args.slice(0, room)));
      cut = true;
      break;
    }
    toolCalls.push(toolCallOf(call.id ?? null, call.name, args));
    room -= args.length;
  }
  return { pieces: [], finish: cut ? 'length' : 'tool_calls', stopSequence: null, toolCalls, inputTokens: inputTokensOf(request, overrides) };
}

/**
 * A recorded answer: its pieces are its recorded chunks (one content delta each, whatever tokens they hold), its
 * ending the recorded one (a stop sequence's ending with the sequence that ended it), its usage the recorded one
 * where given, else one output token a chunk and the input counted.
 */
function replay(request: TextRequest, chunks: string[], overrides: GenerationOverrides): Generated {
  const finish = overrides.finish ?? 'stop';
  return {
    pieces: [...chunks],
    finish,
    stopSequence: finish === 'stop_sequence' ? (overrides.stopSequence ?? null) : null,
    toolCalls: [],
    inputTokens: inputTokensOf(request, overrides),
    outputTokens: overrides.outputTokens ?? chunks.length,
  };
}

/** What a stream of the answer delivers, counted as its events' `tokens`: one a piece, or a tool call's tokens at once. */
export const streamUnits = (generated: Generated): number =>
  generated.toolCalls.length > 0 ? generated.toolCalls.reduce((sum, call) => sum + call.tokens, 0) : generated.pieces.length;

/**
 * What `sent` stream units of an answer delivered: their text, and their share of its output tokens, rounded down
 * (all of them once every unit went out). A generated answer's pieces are its tokens, one each; a recorded
 * answer's chunks may hold more or fewer.
 */
export function delivered(generated: Generated, sent: number): { outputTokens: number; output: string } {
  const units = streamUnits(generated);
  const outputTokens = sent >= units ? generated.outputTokens : Math.floor((sent * generated.outputTokens) / units);
  return { outputTokens, output: generated.toolCalls.length > 0 ? toolOutput(generated.toolCalls, sent) : generated.pieces.slice(0, sent).join('') };
}

/** The arguments of the tool calls `sent` stream units delivered: each call's go out whole, in one event. */
function toolOutput(calls: ToolCallOut[], sent: number): string {
  const out: string[] = [];
  let left = sent;
  for (const call of calls) {
    if (left <= 0) break;
    out.push(call.arguments);
    left -= call.tokens;
  }
  return out.join('');
}

function draft(request: TextRequest, overrides: GenerationOverrides): Omit<Generated, 'outputTokens'> {
  const random = createRandom(JSON.stringify([request.model, request.prompt, request.seed, request.responseFormat, request.forcedTool]));
  const inputTokens = inputTokensOf(request, overrides);
  // A fixed text is what the scenario asked for, even from a call that forces a tool.
  if (request.forcedTool && answersWithTool(request, overrides)) {
    // A tool call is output like any other: cut at the maximum (4 characters a token), it ends `length`, so the
    // freeze's maximum always covers what is charged.
    const args = JSON.stringify(sampleJson(request.forcedTool.parameters, random));
    const room = request.maxTokens * 4;
    const cut = args.length > room;
    return {
      pieces: [],
      finish: cut ? 'length' : 'tool_calls',
      stopSequence: null,
      toolCalls: [toolCallOf(null, request.forcedTool.name, cut ? args.slice(0, room) : args)],
      inputTokens,
    };
  }
  let text: string;
  if (overrides.text !== undefined) text = overrides.text;
  else if (request.responseFormat?.type === 'json_schema') text = JSON.stringify(sampleJson(request.responseFormat.schema, random));
  else if (request.responseFormat?.type === 'json_object') text = JSON.stringify({ answer: sentence(random, 8, topicOf(request.prompt, random)) });
  else text = prose(random, overrides.outputTokens ?? 24 + random.int(40), topicOf(request.prompt, random));

  const stops = request.stop
    .filter((stop) => stop !== '')
    .map((stop) => ({ stop, at: text.indexOf(stop) }))
    .filter((found) => found.at >= 0)
    .sort((a, b) => a.at - b.at);
  const first = stops[0];
  if (first) {
    const kept = toPieces(text.slice(0, first.at));
    if (kept.length <= request.maxTokens) return { pieces: kept, finish: 'stop_sequence', stopSequence: first.stop, toolCalls: [], inputTokens };
  }
  const pieces = toPieces(text);
  if (pieces.length > request.maxTokens) {
    return { pieces: pieces.slice(0, request.maxTokens), finish: 'length', stopSequence: null, toolCalls: [], inputTokens };
  }
  return { pieces, finish: 'stop', stopSequence: null, toolCalls: [], inputTokens };
}


/** Words too common to be a prompt's topic: function words and what prompts ask (explain, write, list, …). */
const COMMON = new Set(
  ('about above across after again also among another answer around because been before being below best between both ' +
    'brief briefly could describe does doing each every explain from give good have help here into just know like list ' +
    'make many more most much must need only other over please plain really sentence sentences should show some such ' +
    'tell than that their them then there these they thing things this those through under using very want well what ' +
    'when where which while will with within without word words work works would write your').split(' '),
);

/** A word of the prompt's last text for the answer to echo (4 to 12 letters, not a common one), or null. */
function topicOf(prompt: string[], random: Random): string | null {
  // One word at a time into the set: a 19 MB prompt would otherwise make an array of millions of words first.
  const seen = new Set<string>();
  for (const [word] of (prompt.at(-1) ?? '').matchAll(/\b[A-Za-z]{4,12}\b/g)) seen.add(word.toLowerCase());
  const candidates = [...seen].filter((word) => !COMMON.has(word));
  return candidates.length > 0 ? pick(random, candidates) : null;
}

/** A noun phrase of `size` words (1 to 3): a pronoun or a plural alone, else a determiner, maybe an adjective, a noun. */
function nounPhrase(random: Random, size: number, role: 'subject' | 'object', topic: string | null): string[] {
  if (size === 1) return [pick(random, role === 'subject' ? V.pronouns : V.masses)];
  // The topic may be any kind of word: "the" reads with most of them.
  const onTopic = topic !== null && role === 'object' && random.int(3) === 0;
  const noun = onTopic ? topic : pick(random, V.nouns);
  const words = size === 3 ? [pick(random, V.adjectives), noun] : [noun];
  const determiner = onTopic ? 'the' : pick(random, V.determiners);
  return [determiner === 'a' && /^[aeiou]/.test(words[0] ?? '') ? 'an' : determiner, ...words];
}

/** Subject, verb, object in exactly `size` words (3 to 7). */
function clause(random: Random, size: number, topic: string | null): string[] {
  const low = Math.max(1, size - 4);
  const subject = low + random.int(Math.min(3, size - 2) - low + 1);
  return [...nounPhrase(random, subject, 'subject', topic), pick(random, V.verbs), ...nounPhrase(random, size - 1 - subject, 'object', topic)];
}

/**
 * A sentence of exactly `words` words (each one output token): an opener now and then, clauses joined by a comma
 * and a connective, a closing phrase now and then; capitalised, ending with a full stop.
 */
function sentence(random: Random, words: number, topic: string | null): string {
  const out: string[] = [];
  if (words === 1) out.push(...pick(random, V.oneWord));
  else if (words === 2) out.push(...pick(random, V.twoWords));
  else {
    let left = words;
    if (left >= 6 && random.int(3) === 0) {
      const opener = pick(random, V.openers);
      out.push(...opener.slice(0, -1), `${opener.at(-1) ?? ''},`);
      left -= opener.length;
    }
    let closer: readonly string[] = [];
    if (left >= 6 && random.int(3) === 0) {
      closer = topic !== null && random.int(2) === 0 ? ['for', 'the', topic] : pick(random, V.closers);
      left -= closer.length;
    }
    // Clauses of 3 to 7 words: each one before the last leaves the rest at least 3 words and the connective.
    while (left > 7) {
      const high = Math.min(7, left - 4);
      const low = Math.min(Math.max(3, left - 8), high);
      const size = low + random.int(high - low + 1);
      const parts = clause(random, size, topic);
      out.push(...parts.slice(0, -1), `${parts.at(-1) ?? ''},`, pick(random, V.connectives));
      left -= size + 1;
    }
    out.push(...clause(random, left, topic), ...closer);
  }
  const text = out.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** `tokens` words of sentences of 5 to 16 words; from 60 tokens on, in paragraphs of 3 to 5 sentences. */
function prose(random: Random, tokens: number, topic: string | null): string {
  const sentences: string[] = [];
  for (let left = tokens; left > 0; ) {
    // The last sentence takes what is left, so every sentence before it leaves at least 5 words.
    const length = left <= 16 ? left : 5 + random.int(Math.min(16, left - 5) - 4);
    sentences.push(sentence(random, length, topic));
    left -= length;
  }
  if (tokens < 60) return sentences.join(' ');
  const paragraphs: string[] = [];
  for (let i = 0; i < sentences.length; ) {
    const size = 3 + random.int(3);
    paragraphs.push(sentences.slice(i, i + size).join(' '));
    i += size;
  }
  return paragraphs.join('\n\n');
}
