import { expect, it } from 'vitest';
import { checkHistory, streamErrorProblem } from '../../../src/observed/index.ts';
import type { TextCallObservation } from '../../../src/observed/index.ts';
import { chatStream, checksOf, CONTEXT, requestIdsOf, responsesStream } from './histories.ts';
import type { Json, StreamedCall, WholeCall } from './histories.ts';

// Each format's ending outside its documented set (src/observed/text.ts, text.stop-reason.documented) and a
// stream's error event outside its format's error body (text.stream.error-event), each broken once.

/** A whole Responses-style answer of `output` tokens at most `max`, ending `status` with `details`. */
function response(requestId: string, status: string, details: unknown, output = 3, max = 3): WholeCall {
  return {
    requestId,
    format: 'responses',
    maxTokens: max,
    promptNonEmpty: true,
    streamed: false,
    body: { id: `svcresp_${requestId.slice(4)}`, object: 'response', status, incomplete_details: details, store: false, usage: { input_tokens: 5, output_tokens: output, total_tokens: 5 + output } },
  };
}

/** A stream of `format` cut by `error` after its first events, answered with X-Request-Id `requestId`. */
function cutBy(format: 'chat' | 'responses' | 'messages', error: Json, requestId = 'req_cut'): StreamedCall {
  const head: unknown[] =
    format === 'chat'
      ? chatStream(requestId).events.slice(0, 2)
      : format === 'responses'
        ? responsesStream(requestId).events.slice(0, 3)
        : [{ type: 'message_start', message: { id: 'svcmsg_cut1', usage: { input_tokens: 5, output_tokens: 0 } } }, { type: 'content_block_start' }];
  return { requestId, format, maxTokens: 16, promptNonEmpty: true, streamed: true, events: [...head, error] };
}

const chatError = (patch: Json = {}): Json => ({ error: { message: 'The model became unavailable.', type: 'service_unavailable', code: 'service_unavailable', param: null, request_id: 'req_cut', ...patch } });
const messagesError = (patch: Json = {}, top: Json = {}): Json => ({ type: 'error', error: { type: 'invalid_params', message: 'Unacceptable.', code: 'invalid_params', request_id: 'req_cut', ...patch }, ...top });

it.each<[string, TextCallObservation, string]>([
  ['a Responses answer incomplete for a reason no format documents', response('req_a', 'incomplete', { reason: 'length' }), 'text.stop-reason.documented'],
  ['a Responses answer completed but with incomplete_details', response('req_a', 'completed', { reason: 'max_output_tokens' }, 2), 'text.stop-reason.documented'],
  ['a Responses answer in_progress (the document’s enum, no ending)', response('req_a', 'in_progress', null, 2), 'text.stop-reason.documented'],
  [
    'a Responses stream ended by response.completed in status incomplete',
    { ...responsesStream('req_a'), events: responsesStream('req_a').events.map((e) => ((e as Json)['type'] === 'response.incomplete' ? { ...(e as Json), type: 'response.completed' } : e)) },
    'text.stop-reason.documented',
  ],
  ['a chat stream whose last content chunk finishes "finished"', chatStream('req_a', { finish: 'finished' }), 'text.stop-reason.documented'],
  ['a chat error event without request_id', cutBy('chat', chatError({ request_id: undefined })), 'text.stream.error-event'],
  ['a chat error event whose type is not its code', cutBy('chat', chatError({ type: 'server_error' })), 'text.stream.error-event'],
  ['a chat error event without param', cutBy('chat', { error: { message: 'down', type: 'service_unavailable', code: 'service_unavailable', request_id: 'req_cut' } }), 'text.stream.error-event'],
  ['a Responses error event naming another request', cutBy('responses', { type: 'error', sequence_number: 3, ...chatError({ type: 'content_rejected', code: 'content_rejected', request_id: 'req_other' }) }), 'text.stream.error-event'],
  ['a Responses error event without a code', cutBy('responses', { type: 'error', ...chatError({ type: undefined, code: undefined }) }), 'text.stream.error-event'],
  ['a Messages error event in the Chat shape', cutBy('messages', chatError()), 'text.stream.error-event'],
  ['a Messages error event without a message', cutBy('messages', messagesError({ message: '' })), 'text.stream.error-event'],
])('reports %s', (_name, call, check) => {
  const found = checkHistory({ texts: [call] }, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual([call.requestId]);
});

// Each sound answer beside its twin broken at the rule's edge: let pass, and reported once broken.
it.each<[string, TextCallObservation, TextCallObservation, string]>([
  ['a Responses answer cut at its maximum, saying max_output_tokens', response('req_a', 'incomplete', { reason: 'max_output_tokens' }), response('req_a', 'incomplete', { reason: 'max_tokens' }), 'text.stop-reason.documented'],
  ['a Responses answer completed with no incomplete_details', response('req_a', 'completed', null, 2), response('req_a', 'completed', {}, 2), 'text.stop-reason.documented'],
  ['each format’s error body as the reference shows it: chat', cutBy('chat', chatError()), cutBy('chat', chatError({ param: 0 })), 'text.stream.error-event'],
  [
    'responses',
    cutBy('responses', { type: 'error', sequence_number: 3, ...chatError({ type: 'content_rejected', code: 'content_rejected' }) }),
    cutBy('responses', { type: 'error', sequence_number: 3, ...chatError({ type: 'content_rejected', code: 'content_rejected', request_id: 'req_other' }) }),
    'text.stream.error-event',
  ],
  ['messages', cutBy('messages', messagesError()), cutBy('messages', messagesError({}, { type: 'message_error' })), 'text.stream.error-event'],
])('lets pass %s, and reports its twin broken at the edge', (_name, sound, broken, check) => {
  expect(checkHistory({ texts: [sound] }, CONTEXT)).toEqual([]);
  expect(checksOf(checkHistory({ texts: [broken] }, CONTEXT))).toEqual([check]);
});

it('says what the error event lacks, for the suite’s checks and the rule alike', () => {
  expect(streamErrorProblem('chat', chatError({ type: 'server_error' }), 'req_cut')).toBe('error.type "server_error" is not the code service_unavailable');
  expect(streamErrorProblem('messages', chatError(), 'req_cut')).toBe('the error event\'s type is missing, not "error"');
  expect(streamErrorProblem('responses', chatError({ request_id: 'req_x' }), 'req_cut')).toBe("error.request_id req_x is not the answer's X-Request-Id req_cut");
  expect(streamErrorProblem('chat', 'data: oops', null)).toBe('the error event\'s data is not a JSON object: "data: oops"');
});
