import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { TextCallObservation } from '../../../src/observed/index.ts';
import { chat, chatStream, checksOf, CONTEXT, message, requestIdsOf, responsesStream } from './histories.ts';

it.each<[string, TextCallObservation[], string, string[]]>([
  ['a chat id without its prefix', [chat('req_a', { id: 'chatcmpl_123' })], 'text.id.own-prefixed', ['req_a']],
  ['two calls sharing an id', [chat('req_a', { id: 'svcchat_same' }), chat('req_b', { id: 'svcchat_same' })], 'text.id.own-prefixed', ['req_a', 'req_b']],
  ['a Messages-style answer with a chat id', [{ ...message('req_a'), body: { ...(message('req_a').body as Record<string, unknown>), id: 'svcchat_x1' } }], 'text.id.own-prefixed', ['req_a']],
  ['no input tokens for a non-empty prompt', [chat('req_a', { prompt: 0 })], 'text.usage.positive', ['req_a']],
  ['a total that does not add up', [{ ...chat('req_a'), body: { ...(chat('req_a').body as Record<string, unknown>), usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 20 } } }], 'text.usage.positive', ['req_a']],
  ['more output tokens than the maximum', [message('req_a', { max: 4, output: 5, stop: 'max_tokens' })], 'text.max-tokens.respected', ['req_a']],
  // A natural end at exactly the maximum is no cut by itself: the same request going on past it shows one (truncation.test.ts).
  ['a chat answer cut short without length', [{ ...chat('req_a', { max: 3, text: 'one two three', finish: 'stop' }), request: 'r' }, { ...chat('req_b', { max: 9, text: 'one two three four', finish: 'stop' }), request: 'r' }], 'text.truncation.at-max', ['req_a', 'req_b']],
  ['length below the maximum', [chat('req_a', { text: 'one two', finish: 'length' })], 'text.truncation.at-max', ['req_a']],
  ['a Responses-style stream incomplete below its maximum', [responsesStream('req_a', { max: 5 })], 'text.truncation.at-max', ['req_a']],
  ['a stream reporting more tokens than it delivered', [chatStream('req_a', { output: 5 })], 'text.stream.usage', ['req_a']],
  ['an undocumented chat finish', [chat('req_a', { finish: 'eos' })], 'text.stop-reason.documented', ['req_a']],
  ['a Messages-style stop_reason stop_sequence (the reference allows end_turn or max_tokens)', [message('req_a', { stop: 'stop_sequence' })], 'text.stop-reason.documented', ['req_a']],
  ['a Messages-style answer without a stop_reason', [message('req_a', { stop: null })], 'text.stop-reason.documented', ['req_a']],
])('reports %s', (_name, texts, check, requestIds) => {
  const found = checkHistory({ texts }, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

it('without a token count, holds a stream only to delivering text exactly when it reports output tokens', () => {
  expect(checkHistory({ texts: [chatStream('req_a', { output: 5 })] })).toEqual([]);
  expect(checksOf(checkHistory({ texts: [chatStream('req_a', { output: 0 })] }))).toEqual(['text.stream.usage']);
});

it('leaves the usage and ending of a stream that ended in an error event alone', () => {
  const stream = chatStream('req_a', { output: 99 });
  const errored: TextCallObservation = { ...stream, events: [...stream.events, { error: { message: 'down', type: 'service_unavailable', code: 'service_unavailable', param: null, request_id: 'req_a' } }] };
  expect(checkHistory({ texts: [errored] }, CONTEXT)).toEqual([]);
});
