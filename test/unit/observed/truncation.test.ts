import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { TextCallObservation } from '../../../src/observed/index.ts';
import { textRequestKey } from '../../../src/observed/truncation.ts';
import { chat, chatStream, checksOf, CONTEXT, message, requestIdsOf, responsesStream } from './histories.ts';

// text.truncation.at-max: an answer that says it was cut has exactly the maximum; one that ends naturally at
// exactly the maximum is no cut by itself (the emulator's svc-text-lite answers "Hello there" with exactly 50
// tokens, so max_tokens 50 ends there with stop), only when the same request is seen going on past it.

const REQUEST = textRequestKey({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hello there' }] });
const asked = <T extends TextCallObservation>(call: T, request = REQUEST): T => ({ ...call, request });

it.each<[string, TextCallObservation[]]>([
  ['a chat answer ending stop at exactly its maximum', [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'stop' }))]],
  ['a Messages-style answer ending end_turn at exactly its maximum', [asked(message('req_a', { max: 1, output: 1, stop: 'end_turn' }))]],
  ['a Responses-style stream completed at exactly its maximum', [asked(responsesStream('req_a', { status: 'completed' }))]],
  ['an answer cut at exactly its maximum', [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'length' }))]],
  [
    'the same request ending at the same text with a larger maximum',
    [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'stop' })), asked(chat('req_b', { max: 50, text: 'one two three', finish: 'stop' }))],
  ],
  [
    'the same request answered longer with another text (another generation)',
    [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'stop' })), asked(chat('req_b', { max: 50, text: 'three two one four', finish: 'stop' }))],
  ],
  [
    'another request answered longer from the same text',
    [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'stop' })), asked(chat('req_b', { max: 50, text: 'one two three four', finish: 'stop' }), 'another')],
  ],
])('accepts %s', (_name, texts) => {
  expect(checkHistory({ texts }, CONTEXT)).toEqual([]);
});

it.each<[string, TextCallObservation[], string[]]>([
  ['an answer that says it was cut below its maximum', [asked(chat('req_a', { max: 16, text: 'one two', finish: 'length' }))], ['req_a']],
  [
    'an answer ending stop at its maximum that the same request, asked for more, goes on past',
    [asked(chat('req_a', { max: 3, text: 'one two three', finish: 'stop' })), asked(chat('req_b', { max: 50, text: 'one two three four five', finish: 'stop' }))],
    ['req_a', 'req_b'],
  ],
  [
    'the same, the longer answer streamed and cut at its own larger maximum',
    [asked(chat('req_a', { max: 2, text: 'one two', finish: 'stop' })), asked({ ...chatStream('req_b', { text: 'one two three four', finish: 'length' }), maxTokens: 4 })],
    ['req_a', 'req_b'],
  ],
])('reports %s', (_name, texts, requestIds) => {
  const found = checkHistory({ texts }, CONTEXT);
  expect(checksOf(found)).toEqual(['text.truncation.at-max']);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('keys a request on what it asks to generate, not on its maximum or streaming', () => {
  const base = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hello there' }], temperature: 0 };
  expect(textRequestKey({ ...base, max_tokens: 3 })).toBe(textRequestKey({ stream: true, stream_options: { include_usage: true }, ...base, max_completion_tokens: 9 }));
  expect(textRequestKey({ ...base, temperature: 1 })).not.toBe(textRequestKey(base));
});
