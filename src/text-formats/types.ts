import type { ApiError } from '../errors/index.ts';
import type { SseEvent, WireEvent } from './sse.ts';

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
  /** The tool calls the answer makes, in order (none: a text answer). */
  toolCalls: ToolCallOut[];
  inputTokens: number;
  /** Output tokens: the pieces, or the tool calls' arguments at 4 characters a token (or as a scenario states). */
  outputTokens: number;
}

/** One tool call of an answer: its id (null: made from the call's id), the tool's name, its arguments' JSON. */
export interface ToolCallOut {
  id: string | null;
  name: string;
  arguments: string;
  /** Its stream units: the arguments at 4 characters a token, delivered with its arguments' event. */
  tokens: number;
}

/**
 * What a scenario's match rules read of a call, whatever format it came in: each format's parser fills it, so the
 * matching knows nothing of the wire shapes.
 */
export interface TextView {
  format: 'chat' | 'responses' | 'messages';
  model: string;
  stream: boolean;
  /** The system text (`system`, `instructions`, the system and developer messages), joined by line breaks; null: none. */
  system: string | null;
  /** Every text of the prompt, system ones and tool results included, in order (the request's `prompt`). */
  messages: string[];
  /** The text of the last user message; null: none. */
  lastUser: string | null;
  /** The tools offered (Chat Completions-style only). */
  tools: { name: string; parameters?: Record<string, unknown> }[];
  /** As sent, or the format's default: `auto` with tools, else `none`. */
  toolChoice: 'none' | 'auto' | 'required' | { name: string };
  /** As sent; absent: `text`. */
  responseFormat: { type: 'text' | 'json_object' | 'json_schema'; name: string | null; schema: Record<string, unknown> | null };
  /** The last tool result of the conversation, and the tool it answers (found by its call id); null: none. */
  lastToolResult: { name: string | null; content: string } | null;
  /** Assistant messages so far. */
  assistantTurns: number;
}

/** A text call as parsed from one of the three formats. */
export interface ParsedCall {
  request: Omit<TextRequest, 'maxTokens'>;
  /** The maximum the call asked for, or null for the model default. */
  requestedMax: number | null;
  /** What match rules read of it. */
  view: TextView;
  stream: boolean;
  includeUsage: boolean;
}

/** A finished (or finishing) call, ready to be written in its format. */
export interface TextCallView {
  id: string;
  /** The model as the response names it. */
  model: string;
  createdSeconds: number;
  /** The whole answer: made when first read, which a stream's first events do not (they read `opening`). */
  readonly generated: Generated;
  /** What a stream's first events say before the answer exists: the input tokens, and whether it is tool calls. */
  opening: { inputTokens: number; toolCalls: boolean };
  includeUsage: boolean;
  /** Request fields some formats echo back. */
  echo: Record<string, unknown>;
  /** What a Messages-style answer cut at a stop sequence gives as its stop_reason (the scenario's choice). */
  stopSequenceReason: 'end_turn' | 'stop_sequence';
}

/** One request format: how it reads a checked body, and how it writes answers, streams and stream errors. */
export interface TextFormat {
  name: 'chat' | 'responses' | 'messages';
  /** Schema of the request body in openapi/service.yaml. */
  requestSchema: string;
  idPrefix: string;
  parse(body: Record<string, unknown>): ParsedCall;
  body(call: TextCallView): Record<string, unknown>;
  /** The stream's events, encoded, made as they are taken: the first goes out before the rest exist. */
  events(call: TextCallView): Iterable<WireEvent>;
  /** The stream's error event(s), given the error body of the format. */
  errorEvents(errorBody: Record<string, unknown>, nextSequence: number): SseEvent[];
}

export type { ApiError };
