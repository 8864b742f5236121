import { createRandom } from '../random/index.ts';
import { sampleJson, WORDS } from './json-sample.ts';
import { countInputTokens, toPieces } from './tokens.ts';

/** A text call in the emulator's terms, whatever format it came in. */
export interface TextRequest {
  model: string;
  /** Every text of the prompt (system and messages), in order. */
  prompt: string[];
  maxTokens: number;
  stop: string[];
  seed: number | null;
  responseFormat: { type: 'text' | 'json_object' | 'json_schema'; schema?: Record<string, unknown> } | null;
  /** A tool the caller forces (tool_choice `required` or a named function): the answer is a call to it. */
  forcedTool: { name: string; parameters?: Record<string, unknown> } | null;
}

export interface Generated {
  /** Output pieces, one token each. */
  pieces: string[];
  finish: 'stop' | 'length' | 'stop_sequence' | 'tool_calls';
  stopSequence: string | null;
  toolCall: { name: string; arguments: string } | null;
  inputTokens: number;
  /** Output tokens: the pieces, or a tool call's arguments at 4 characters a token. */
  outputTokens: number;
}

export interface GenerationOverrides {
  /** Fixed output text instead of the generated one. */
  text?: string;
  /** Length of the natural answer in tokens. */
  outputTokens?: number;
}

/**
 * Deterministic output for a request: the same request and seed always give the same text. The answer's natural
 * length comes from the request; it is cut at a stop sequence (`stop_sequence`) or at the maximum (`length`).
 */
export function generate(request: TextRequest, overrides: GenerationOverrides = {}): Generated {
  const result = draft(request, overrides);
  const outputTokens = result.toolCall ? Math.ceil(result.toolCall.arguments.length / 4) : result.pieces.length;
  return { ...result, outputTokens };
}

function draft(request: TextRequest, overrides: GenerationOverrides): Omit<Generated, 'outputTokens'> {
  const random = createRandom(JSON.stringify([request.model, request.prompt, request.seed, request.responseFormat, request.forcedTool]));
  const inputTokens = countInputTokens(request.prompt);
  if (request.forcedTool) {
    const args = JSON.stringify(sampleJson(request.forcedTool.parameters, random));
    return { pieces: [], finish: 'tool_calls', stopSequence: null, toolCall: { name: request.forcedTool.name, arguments: args }, inputTokens };
  }
  let text: string;
  if (overrides.text !== undefined) text = overrides.text;
  else if (request.responseFormat?.type === 'json_schema') text = JSON.stringify(sampleJson(request.responseFormat.schema, random));
  else if (request.responseFormat?.type === 'json_object') text = JSON.stringify({ answer: sentence(random, 8) });
  else text = prose(random, overrides.outputTokens ?? 24 + random.int(40));

  const stops = request.stop
    .filter((stop) => stop !== '')
    .map((stop) => ({ stop, at: text.indexOf(stop) }))
    .filter((found) => found.at >= 0)
    .sort((a, b) => a.at - b.at);
  const first = stops[0];
  if (first) {
    const kept = toPieces(text.slice(0, first.at));
    if (kept.length <= request.maxTokens) return { pieces: kept, finish: 'stop_sequence', stopSequence: first.stop, toolCall: null, inputTokens };
  }
  const pieces = toPieces(text);
  if (pieces.length > request.maxTokens) {
    return { pieces: pieces.slice(0, request.maxTokens), finish: 'length', stopSequence: null, toolCall: null, inputTokens };
  }
  return { pieces, finish: 'stop', stopSequence: null, toolCall: null, inputTokens };
}

function sentence(random: ReturnType<typeof createRandom>, words: number): string {
  const list: string[] = Array.from({ length: words }, () => WORDS[random.int(WORDS.length)] ?? 'word');
  const first = list[0] ?? 'The';
  list[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${list.join(' ')}.`;
}

function prose(random: ReturnType<typeof createRandom>, tokens: number): string {
  const sentences: string[] = [];
  let left = tokens;
  while (left > 0) {
    const length = Math.min(left, 6 + random.int(10));
    sentences.push(sentence(random, length));
    left -= length;
  }
  return sentences.join(' ');
}
