// A call record as a curl command that makes the same call again. The key is never written out: the command
// reads it from $SVC_KEY. What a record does not hold (the body of most calls) is rebuilt where it can be and
// said plainly where it cannot.

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
  if (record.path === '/v1/files') return { body: null, form: true, note: 'An upload: the file and its fields were not recorded; name yours after -F.' };
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
  if (build) return { body: undefined, note: 'The body was not recorded: start the emulator with --record-content to keep prompts, or put yours in request.json.' };
  return { body: undefined, note: 'The body was not recorded: put it in request.json.' };
}

/**
 * The curl command of a call record. `task` is the control API's view of the task the call made, if any;
 * `origin` the emulator's address as this page reached it.
 */
export function curlFor(record, { origin, task }) {
  const { body, note, form } = bodyOf(record, task);
  const lines = [`curl -sS -X ${record.method} ${shellQuote(`${origin}${record.path}`)}`];
  lines.push(`-H "Authorization: Bearer $SVC_KEY"`);
  if (record.path === '/v1/tasks' && task && task.scenario !== 'default') {
    // The same scenario again, however it was chosen the first time.
    lines.push(`-H ${shellQuote(`X-Emulator-Scenario: ${task.scenario}`)}`);
  }
  if (form) lines.push(`-F 'file=@FILE'`);
  if (body !== null) lines.push(`-H 'Content-Type: application/json'`);
  if (body) lines.push(`-d ${shellQuote(JSON.stringify(body))}`);
  else if (body === undefined) lines.push('-d @request.json');
  const key = redactKey(record.key);
  const keyNote = key ? `Set SVC_KEY to the key ${key} first.` : 'Set SVC_KEY to an API key first (this call carried no known key).';
  return { command: lines.join(' \\\n  '), note: `${keyNote} ${note}` };
}
