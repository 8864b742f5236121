import { textFormatOf } from '../text-formats/index.ts';
import { isSecretHeader, parseJson, REDACTED, redactSecrets } from '../wire/index.ts';
import type { HarNameValue } from './har.ts';
import { isPlainObject } from '../contract/index.ts';

/**
 * What a recording leaves out, as pure functions over text, headers and parsed bodies. Two kinds:
 * - secrets, always: credential headers whole, and anywhere in URLs, headers and bodies the strings that look like a
 *   secret (API keys, signing secrets, callback secrets, bearer tokens, secret-named query parameters, the userinfo
 *   of an address), found by src/wire's `isSecretHeader` and `redactSecrets`;
 * - content, unless kept: prompts and outputs of text calls, free text of task inputs, task output text. Content is
 *   replaced in place, each non-space character by `x`, so the JSON structure, lengths, word counts and the
 *   events of a stream stay as they were.
 * @see reference "Authentication", "Events" (callback signing), "Text endpoints", the task models' input tables
 */

/** What an entry's `_svcEmulator.redacted` lists: `content`, `secret`, or `header:<lower-case name>`. */
export type Redaction = string;

/** Credential headers' values replaced whole; secret-looking strings in the others replaced. */
export function redactHeaders(headers: HarNameValue[]): { headers: HarNameValue[]; redacted: Redaction[] } {
  const redacted = new Set<Redaction>();
  const out = headers.map(({ name, value }) => {
    if (isSecretHeader(name)) {
      redacted.add(`header:${name.toLowerCase()}`);
      return { name, value: REDACTED };
    }
    const scanned = redactSecrets(value);
    if (scanned.changed) redacted.add('secret');
    return { name, value: scanned.text };
  });
  return { headers: out, redacted: [...redacted] };
}

/** Each non-space character replaced by `x`: length (in characters), spacing and word count stay. */
export const xOut = (text: string): string => text.replace(/\S/gu, 'x');

/** Every string of a JSON value passed through `text`, and every key through `key` (kept, by default). */
function mapStrings(value: unknown, text: (s: string) => string, key: (k: string) => string = (k) => k): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, text, key));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [key(k), mapStrings(v, text, key)]));
  return value;
}

/** Every string in a value x-ed out, keys and other values kept. */
const xOutDeep = (value: unknown): unknown => mapStrings(value, xOut);

/** Every string of a JSON value, keys too, with its secrets replaced. */
const secretsOut = (text: string): string => redactSecrets(text).text;
const redactSecretsDeep = (value: unknown): unknown => mapStrings(value, secretsOut, secretsOut);

/** A `data:` address's payload x-ed out, its media type kept (an inline image of a prompt). */
const xOutDataUrl = (url: string): string => url.replace(/^(data:[^,]*,)(.*)$/s, (_, head: string, payload: string) => head + xOut(payload));

/**
 * Keys whose string value is prompt or output text in any of the three text formats, request, answer or stream
 * event: chat messages' `content` (and content parts' `text`), `tool_calls[].function.arguments`, `refusal`,
 * chunks' `delta.content`; responses' `input` (a string), `instructions`, `output_text`, content parts' `text`,
 * `delta` and `text` of the output_text events, function call `arguments`; messages' `system`, blocks' `text`,
 * `thinking`, `partial_json`, tool results' `content`; logprobs' `token`. An object or array under one of these is
 * walked on, so `type`, `role`, ids, stop reasons and usage stay.
 */
const TEXT_KEYS = new Set(['content', 'text', 'delta', 'arguments', 'partial_json', 'instructions', 'input', 'output', 'output_text', 'system', 'thinking', 'refusal', 'token', 'file_data']);

/** A text call's body (request or answer) or a stream event's data, with prompts and outputs x-ed out. */
export function redactTextJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactTextJson);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string') {
      if (TEXT_KEYS.has(key)) out[key] = xOut(v);
      else if (v.startsWith('data:')) out[key] = xOutDataUrl(v);
      // An inline image or document of a messages block: { type: 'base64', media_type, data }.
      else if (key === 'data' && value['type'] === 'base64') out[key] = xOut(v);
      else out[key] = v;
    } else if (key === 'input' && (value['type'] === 'tool_use' || value['type'] === 'server_tool_use')) {
      // A tool call's arguments as an object: every string in it is generated text.
      out[key] = xOutDeep(v);
    } else if (key === 'bytes' && Array.isArray(v)) {
      // logprobs' UTF-8 bytes of a token spell the output too: each byte becomes an `x`.
      out[key] = v.map((b) => (typeof b === 'number' ? 0x78 : b));
    } else {
      out[key] = redactTextJson(v);
    }
  }
  return out;
}

/**
 * The free-text fields of each task model's input (openapi/service.yaml `*Input` schemas): what a user writes.
 * Enums, numbers, booleans, file addresses, portraits and paging markers shape the task and stay.
 */
const FREE_TEXT: Record<string, readonly string[]> = {
  'social-notes-data': ['note', 'user', 'keyword'],
  'video-gen-2.0-fast': ['prompt'],
  'avatar-photo': ['content', 'prompt'],
};
/** For a model the table does not know, every string is taken for free text but these options. */
const SHAPE_KEYS = new Set(['mode', 'ratio', 'resolution', 'duration', 'quality', 'drive', 'sort', 'note_type', 'page', 'cursor', 'seed', 'sound', 'agree', 'format', 'size', 'voice', 'language']);

/** A task's `input` (or `params`) with its model's free text x-ed out. */
export function redactTaskInput(model: unknown, input: unknown): unknown {
  if (!isPlainObject(input)) return input;
  const known = typeof model === 'string' ? FREE_TEXT[model] : undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(input)) {
    const free = known ? known.includes(key) : !SHAPE_KEYS.has(key);
    out[key] = free ? xOutDeep(v) : v;
  }
  return out;
}

/** A task submission: `input`/`params` per its model; `webhook_url` and `metadata` are not content. */
function redactTaskSubmit(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  const out = { ...body };
  for (const key of ['input', 'params']) if (key in out) out[key] = redactTaskInput(body['model'], out[key]);
  return out;
}

/** A task object, or a list of them: input free text and `output.text`; files, points and errors stay. */
function redactTaskView(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  if (body['object'] === 'list' && Array.isArray(body['data'])) return { ...body, data: body['data'].map(redactTaskView) };
  if (body['object'] !== 'task') return body;
  const out: Record<string, unknown> = { ...body, input: redactTaskInput(body['model'], body['input']) };
  const output = body['output'];
  if (isPlainObject(output) && typeof output['text'] === 'string') out['output'] = { ...output, text: xOut(output['text']) };
  return out;
}

/** A file upload in JSON: the Base64 `content` is the file. */
function redactUpload(body: unknown): unknown {
  return isPlainObject(body) && typeof body['content'] === 'string' ? { ...body, content: xOut(body['content']) } : body;
}

/**
 * An event stream with each event's data replaced by `redact` of its JSON, re-encoded with the same event
 * boundaries: other lines (`event:`, `id:`, comments) and line ends as they were, an event's data on one line.
 * Data that is not JSON (`[DONE]`) stays.
 */
export function redactSse(text: string, redact: (data: unknown) => unknown): string {
  const parts = text.split(/(\r\n|\r|\n)/);
  const out: string[] = [];
  let block: { line: string; end: string }[] = [];
  const flush = (): void => {
    const data = block.filter((l) => l.line.startsWith('data:'));
    const joined = data.map((l) => l.line.slice(5).replace(/^ /, '')).join('\n');
    const mapped = data.length > 0 ? mapJson(joined, redact) : null;
    const replaced = mapped === joined ? null : mapped;
    let written = false;
    for (const l of block) {
      if (replaced === null || !l.line.startsWith('data:')) out.push(l.line, l.end);
      else if (!written) {
        out.push(`${l.line.startsWith('data: ') ? 'data: ' : 'data:'}${replaced}`, l.end);
        written = true;
      }
    }
    block = [];
  };
  for (let i = 0; i < parts.length; i += 2) {
    const line = parts[i] ?? '';
    block.push({ line, end: parts[i + 1] ?? '' });
    if (line === '') flush();
  }
  flush();
  return out.join('');
}

/** Which content rules a route's bodies fall under. */
export type ContentRoute = 'text' | 'tasks' | 'files';

export function contentRoute(method: string, path: string): ContentRoute | null {
  const bare = path.split('?')[0] ?? '';
  if (method === 'POST' && textFormatOf(bare) !== null) return 'text';
  if (bare === '/v1/tasks' || bare.startsWith('/v1/tasks/')) return 'tasks';
  if (method === 'POST' && bare === '/v1/files') return 'files';
  return null;
}

export interface BodyToRedact {
  route: ContentRoute | null;
  side: 'request' | 'response';
  text: string;
  /** The body's Content-Type. */
  mimeType: string;
  keepContent: boolean;
}

/** JSON text with `redact` applied: the exact text when nothing changed, compact JSON when something did, null when it is not JSON. */
function mapJson(text: string, redact: (value: unknown) => unknown): string | null {
  const parsed = parseJson(text);
  if (parsed === undefined) return null;
  const after = JSON.stringify(redact(parsed));
  return after === JSON.stringify(parsed) ? text : after;
}

/** `mapJson` of a body, or of each event's data for an event stream (whose text is never null). */
const mapJsonBody = (text: string, mimeType: string, redact: (value: unknown) => unknown): string | null =>
  /text\/event-stream/i.test(mimeType) ? redactSse(text, redact) : mapJson(text, redact);

/** What of a route's JSON bodies, per side, is content. */
const CONTENT: Record<ContentRoute, Record<BodyToRedact['side'], (value: unknown) => unknown>> = {
  text: { request: redactTextJson, response: redactTextJson },
  tasks: { request: redactTaskSubmit, response: redactTaskView },
  files: { request: redactUpload, response: (value) => value },
};

/**
 * A body as a recording keeps it: content x-ed out per its route (unless kept), then secrets replaced. A body
 * left unchanged keeps its exact text; a changed JSON body is written compactly.
 */
export function redactBody(body: BodyToRedact): { text: string; redacted: Redaction[] } {
  const redacted: Redaction[] = [];
  let text = body.text;
  if (text === '') return { text, redacted };
  if (!body.keepContent && body.route !== null) {
    const redact = CONTENT[body.route][body.side];
    // A request body no format can read (malformed JSON, a multipart upload) may still be all prompt.
    const next = mapJsonBody(text, body.mimeType, redact) ?? (body.side === 'request' ? xOut(text) : text);
    if (next !== text) redacted.push('content');
    text = next;
  }
  // Secrets in JSON are looked for in the decoded strings too: the text may write them with escapes (`\/`,
  // `\u0026`, `\u002d`) that the patterns would not see through.
  const decoded = mapJsonBody(text, body.mimeType, redactSecretsDeep) ?? text;
  const scanned = redactSecrets(decoded);
  if (decoded !== text || scanned.changed) redacted.push('secret');
  return { text: scanned.text, redacted };
}
