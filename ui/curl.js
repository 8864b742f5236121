// A call record as a curl command that makes the same call again. The key is never written out: the command
// reads it from $SVC_KEY. The body is the recorded one (--record-content); what a record does not hold is rebuilt
// where it can be and said plainly where it cannot.

/** A word for a POSIX shell, in single quotes. */
export const shellQuote = (text) => `'${String(text).replaceAll("'", `'\\''`)}'`;

/** `sk-…abcd`: enough to tell keys apart, not enough to use one. */
export const redactKey = (key) => (key ? `${key.slice(0, 3)}…${key.slice(-4)}` : null);

const TEXT_BODIES = {
  '/v1/chat/completions': (model, prompt, stream) => ({ model, messages: prompt.map(userMessage), ...(stream ? { stream } : {}) }),
  '/v1/responses': (model, prompt, stream) => ({ model, input: prompt.map(userMessage), ...(stream ? { stream } : {}) }),
  '/v1/messages': (model, prompt, stream, outputTokens) => ({
    model,
    max_tokens: Math.max(1024, outputTokens),
    messages: prompt.map(userMessage),
    ...(stream ? { stream } : {}),
  }),
};

const userMessage = (content) => ({ role: 'user', content });

/**
 * The request body as far as the record (and the task it made) can say: a task's submission from the stored
 * task; a text call's from its recorded prompt; else none. Returns the body and a note on how faithful it is.
 */
function bodyOf(record, task) {
  if (record.method === 'GET' || record.method === 'HEAD') return { body: null, note: 'A read: it has no body.' };
  if (record.path === '/v1/files') return { body: null, form: true, note: 'An upload: the file and its fields are not sent again; name yours after -F.' };
  const recorded = record.bodies?.request;
  if (recorded === null) return { body: null, note: 'The call had no body.' };
  if (recorded?.text !== undefined && !recorded.truncated) {
    const masked = recorded.text.includes('[redacted]') ? ' Its secrets are masked: put yours back where it says [redacted].' : '';
    return { body: null, raw: recorded.text, contentType: recorded.content_type, note: `The body is the one the call sent, as recorded.${masked}` };
  }
  if (recorded) {
    const why = recorded.text === undefined ? 'was not text' : 'was larger than the 64 KiB a record keeps';
    return { body: undefined, note: `The body ${why} (${recorded.size ?? 'unknown'} bytes): put it whole in request.json.` };
  }
  if (record.path === '/v1/tasks' && task) {
    const { model, input, metadata } = task.task;
    const body = { model, input, ...(Object.keys(metadata ?? {}).length > 0 ? { metadata } : {}), ...(task.webhook_url ? { webhook_url: task.webhook_url } : {}) };
    return { body, note: `The body is rebuilt from task ${task.task.id}: its model, input as the emulator normalized it, metadata and callback address.` };
  }
  const build = TEXT_BODIES[record.path];
  const content = record.text?.content;
  if (build && content && record.model) {
    const body = build(record.model, content.prompt, record.text.stream, record.text.output_tokens);
    return { body, note: 'The body is rebuilt from the recorded prompt: each part as a user message; roles and other parameters are not recorded.' };
  }
  // Only a record made without --record-content lacks `bodies`.
  return { body: undefined, note: 'The body was not recorded: start the emulator with --record-content to keep it, or put yours in request.json.' };
}

/** Recorded headers a call is sent again with, as they were (the rest are the client's or curl's own). */
const KEPT_HEADERS = ['idempotency-key', 'anthropic-version', 'anthropic-beta'];

/** A recorded header's value, by its lower-case name; undefined when not recorded (or not sent). */
const headerOf = (record, name) => record.request_headers?.[name];

/**
 * The curl command of a call record: the same method, path and query string, the headers that change what the
 * call does, and the body as far as it can be rebuilt. `task` is the control API's view of the task the call
 * made, if any; `origin` the emulator's address as this page reached it.
 */
export function curlFor(record, { origin, task }) {
  const { body, note, form, raw, contentType } = bodyOf(record, task);
  const target = `${origin}${record.path}${record.query ? `?${record.query}` : ''}`;
  const lines = [`curl -sS -X ${record.method} ${shellQuote(target)}`];
  // The key as the call carried it: a Messages client may have sent it as x-api-key.
  if (headerOf(record, 'x-api-key') !== undefined && headerOf(record, 'authorization') === undefined) lines.push(`-H "x-api-key: $SVC_KEY"`);
  else lines.push(`-H "Authorization: Bearer $SVC_KEY"`);
  for (const name of KEPT_HEADERS) {
    const value = headerOf(record, name);
    if (value !== undefined) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  }
  // The same scenario again, however it was chosen the first time (named, matched or the default).
  const scenario = record.scenario ?? (record.path === '/v1/tasks' ? task?.scenario : undefined) ?? headerOf(record, 'x-emulator-scenario');
  if (scenario && scenario !== 'default') lines.push(`-H ${shellQuote(`X-Emulator-Scenario: ${scenario}`)}`);
  if (form) lines.push(`-F 'file=@FILE'`);
  if (raw !== undefined) {
    lines.push(`-H ${shellQuote(`Content-Type: ${contentType ?? 'application/json'}`)}`, `--data-raw ${shellQuote(raw)}`);
  }
  if (body !== null) lines.push(`-H 'Content-Type: application/json'`);
  if (body) lines.push(`-d ${shellQuote(JSON.stringify(body))}`);
  else if (body === undefined) lines.push('-d @request.json');
  const key = redactKey(record.key);
  const keyNote = key ? `Set SVC_KEY to the key ${key} first.` : 'Set SVC_KEY to an API key first (this call carried no known key).';
  const signed = headerOf(record, 'x-svc-signature') !== undefined
    ? ' The call was signed: its X-Svc-Timestamp, X-Svc-Nonce and X-Svc-Signature are not recorded; sign it again with the key\'s signing secret.'
    : '';
  return { command: lines.join(' \\\n  '), note: `${keyNote} ${note}${signed}` };
}
