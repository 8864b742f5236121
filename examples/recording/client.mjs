// An integrator's traffic, as the worked example records it: the official clients and plain fetch, pointed at
// the proxy instead of the service. Usage: node client.mjs BASE_URL API_KEY
/* global process, console, fetch, setTimeout */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const [base, apiKey] = process.argv.slice(2);
if (!base || !apiKey) {
  console.error('usage: node client.mjs BASE_URL API_KEY');
  process.exit(2);
}
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: base, apiKey, maxRetries: 0 });

const chat = await openai.chat.completions.create({
  model: 'svc-text-lite',
  messages: [{ role: 'user', content: 'Name three uses of a paper clip.' }],
  max_tokens: 40,
});
console.log(`chat: ${chat.choices[0].finish_reason}, ${chat.usage.completion_tokens} tokens`);

const stream = await openai.chat.completions.create({
  model: 'svc-text-lite',
  messages: [{ role: 'user', content: 'Write a haiku about rain.' }],
  max_tokens: 30,
  stream: true,
});
let chunks = 0;
for await (const chunk of stream) if (chunk.choices[0]?.delta.content) chunks += 1;
console.log(`chat stream: ${chunks} content chunks`);

const message = await anthropic.messages
  .stream({ model: 'svc-text-pro', max_tokens: 30, messages: [{ role: 'user', content: 'Say hello.' }] })
  .finalMessage();
console.log(`messages stream: ${message.stop_reason}`);

const api = async (method, path, body) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
};

const refused = await api('POST', '/v1/tasks', { model: 'social-notes-data', input: { mode: 'note' } });
console.log(`bad task: ${refused.status} ${refused.body.error?.code}`);

const submitted = await api('POST', '/v1/tasks', {
  model: 'social-notes-data',
  input: { mode: 'note', note: 'https://notes.example.com/n/42', agree: true },
});
let task = submitted.body;
// Polled every 0.7 s, as a client of the real service would, until the task is finished.
for (let polls = 0; !['succeeded', 'failed', 'canceled'].includes(task.status) && polls < 60; polls++) {
  await new Promise((resolve) => setTimeout(resolve, 700));
  task = (await api('GET', `/v1/tasks/${task.id}`)).body;
}
console.log(`task: ${task.status}, charged ${task.points?.charged}`);
