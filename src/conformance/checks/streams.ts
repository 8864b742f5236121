import { ENDINGS, INCOMPLETE_REASONS, readAnswer, streamErrorProblem } from '../../observed/index.ts';
import type { TextAnswer, TextCallObservation } from '../../observed/index.ts';
import { parseJson } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import { isPlainObject } from '../../contract/index.ts';
import { streamError, streamOrderProblems } from '../stream-order.ts';
import type { StreamFormat, StreamRequest } from '../stream-order.ts';
import type { Check, CheckContext } from '../types.ts';
import { needAnswer, scenario } from './shared.ts';

// Streams and endings the other text checks never meet: a chat stream not asked for usage, a stream cut by an
// error (each format's error event), and each format's two endings, whole and streamed.

const FORMATS: readonly StreamFormat[] = ['chat', 'responses', 'messages'];
const PATHS: Readonly<Record<StreamFormat, string>> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };
/** A prompt whose answer ends by itself well within LONG tokens, and one no model answers in a single token. */
const SHORT_PROMPT = 'Hello';
const LONG_PROMPT = 'Count from one to one hundred, in words.';
const LONG = 256;

/** A request of `format` with `prompt` and at most `max` output tokens, streamed or not. */
function textBody(ctx: CheckContext, format: StreamFormat, prompt: string, max: number, stream: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const common = { model: ctx.textModel, ...(stream ? { stream: true } : {}), ...extra };
  if (format === 'responses') return { ...common, input: prompt, max_output_tokens: max };
  return { ...common, messages: [{ role: 'user', content: prompt }], max_tokens: max };
}

/** A 200 text/event-stream, or the check ends here naming the answer. */
function expectEventStream(ctx: CheckContext, res: Exchange): void {
  needAnswer(res);
  const type = res.headers.get('content-type') ?? '';
  ctx.expect(type.startsWith('text/event-stream') && res.events.length > 0, 'a text/event-stream of events', res, 'text/event-stream', type);
}

/** The ending as the shared checker reads it (src/observed): the same reading as the rules over every call. */
function answerOf(res: Exchange, format: StreamFormat, max: number, streamed: boolean): TextAnswer {
  const common = { requestId: res.requestId, format, maxTokens: max, promptNonEmpty: true };
  const call: TextCallObservation = streamed
    ? { ...common, streamed: true, events: res.events.filter((e) => e.data !== '[DONE]').map((e) => parseJson(e.data)) }
    : { ...common, streamed: false, body: res.json };
  return readAnswer(call);
}

/**
 * One call and its ending: `cut` at the maximum (a single token of a long answer), or natural (a short answer far
 * within it; at exactly the maximum either is allowed). A Responses-style answer says why it is incomplete
 * (`max_output_tokens`) and a completed one says nothing of it; a stream also keeps its format's event order.
 */
async function expectEnding(ctx: CheckContext, format: StreamFormat, streamed: boolean, cut: boolean): Promise<void> {
  const max = cut ? 1 : LONG;
  const extra = streamed && format === 'chat' ? { stream_options: { include_usage: true } } : {};
  const res = await ctx.api.request('POST', PATHS[format], { body: textBody(ctx, format, cut ? LONG_PROMPT : SHORT_PROMPT, max, streamed, extra) });
  const how = `${streamed ? 'a streamed' : 'a whole'} ${format} answer ${cut ? `cut at its maximum of ${max} token` : 'that ends by itself'}`;
  if (streamed) {
    expectEventStream(ctx, res);
    const request: StreamRequest = format === 'chat' ? { includeUsage: true } : format === 'messages' ? { stopSequences: false } : {};
    for (const problem of streamOrderProblems(format, res.events, request)) ctx.expect(false, `${how}: ${problem.message}`, res, problem.expected, problem.actual);
    ctx.expect(streamError(format, res.events) === null, `${how}: no error event`, res, 'a whole stream', streamError(format, res.events));
  } else {
    needAnswer(res);
  }
  const answer = answerOf(res, format, max, streamed);
  const ending = ENDINGS[format];
  const atMax = answer.outputTokens === max;
  const allowed = cut ? [ending.cut] : atMax ? [ending.natural, ending.cut] : [ending.natural];
  ctx.expect(typeof answer.stop === 'string' && allowed.includes(answer.stop), `${how} ends ${allowed.join(' or ')}`, res, allowed.join(' or '), answer.stop);
  if (format !== 'responses') return;
  const details = answer.incompleteDetails;
  const reason = isPlainObject(details) ? details['reason'] : undefined;
  if (answer.stop === 'incomplete') {
    ctx.expect(reason === 'max_output_tokens', `${how} says why: incomplete_details.reason max_output_tokens`, res, 'max_output_tokens', details);
    ctx.expect(INCOMPLETE_REASONS.includes(String(reason)), `${how} gives a documented reason`, res, INCOMPLETE_REASONS.join(' or '), reason);
  } else {
    ctx.expect(details === null || details === undefined, `${how} has no incomplete_details`, res, null, details);
  }
  if (streamed) ctx.expect(answer.endEvent === `response.${String(answer.stop)}`, `${how} ends in the event of its status`, res, `response.${String(answer.stop)}`, answer.endEvent);
}

/** The emulator's scenarios that cut a stream with an error event after 5 chunks (scenarios/text.yaml), one code per format. */
const MID_STREAM: Readonly<Record<StreamFormat, { scenario: string; code: string }>> = {
  chat: { scenario: 'text-service-unavailable-midstream', code: 'service_unavailable' },
  responses: { scenario: 'text-content-rejected-midstream', code: 'content_rejected' },
  messages: { scenario: 'text-invalid-params-midstream', code: 'invalid_params' },
};

const ERROR_BODIES: Readonly<Record<StreamFormat, string>> = {
  chat: 'a data: line with {error: {message, type, code, param, request_id}}, then data: [DONE]',
  responses: 'an error event with {error: {message, type, code, param, request_id}}',
  messages: "an error event with {type: 'error', error: {type, message, code, request_id}}",
};

export const streamChecks: Check[] = [
  {
    id: 'text.chat.stream.without-usage',
    group: 'text',
    title: 'chat stream without stream_options.include_usage: role, content, finish_reason, [DONE], and no usage chunk',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', PATHS.chat, { body: textBody(ctx, 'chat', SHORT_PROMPT, 16, true) });
      expectEventStream(ctx, res);
      for (const problem of streamOrderProblems('chat', res.events, { includeUsage: false })) ctx.expect(false, problem.message, res, problem.expected, problem.actual);
      const withUsage = res.events.map((e) => parseJson(e.data)).filter((chunk) => isPlainObject(chunk) && isPlainObject(chunk['usage']));
      ctx.expect(withUsage.length === 0, 'no chunk carries usage when include_usage was not asked for', res, 'no usage', withUsage[0]);
    },
  },
  ...FORMATS.map(
    (format): Check => ({
      id: `text.${format}.stream.error-event`,
      group: 'text',
      title: `a ${format} stream cut by a service error ends with ${ERROR_BODIES[format]}, its code ${MID_STREAM[format].code}`,
      cost: 1,
      // Cut by the emulator's scenario; a deployment without the control API ignores the header.
      needs: ['admin'],
      async run(ctx) {
        const { scenario: name, code } = MID_STREAM[format];
        const res = await ctx.api.request('POST', PATHS[format], { body: textBody(ctx, format, SHORT_PROMPT, LONG, true), headers: scenario(name) });
        expectEventStream(ctx, res);
        const request: StreamRequest = format === 'chat' ? { includeUsage: false } : format === 'messages' ? { stopSequences: false } : {};
        for (const problem of streamOrderProblems(format, res.events, request)) ctx.expect(false, problem.message, res, problem.expected, problem.actual);
        const error = streamError(format, res.events);
        ctx.expect(error !== null, `ends with ${ERROR_BODIES[format]}`, res, ERROR_BODIES[format], res.events.slice(-2).map((e) => (e.event ? `${e.event}: ${e.data}` : e.data)));
        const problem = streamErrorProblem(format, error, res.requestId);
        ctx.expect(problem === null, `the error event has the ${format} error body: ${problem ?? ''}`, res, ERROR_BODIES[format], error);
        const got = isPlainObject(error) && isPlainObject(error['error']) ? error['error']['code'] : undefined;
        ctx.expect(got === code, `error.code ${code}, as the fault was`, res, code, got);
      },
    }),
  ),
  ...FORMATS.map(
    (format): Check => ({
      id: `text.${format}.stop-reasons`,
      group: 'text',
      title: `${format}: ${ENDINGS[format].natural} for an answer that ends by itself, ${ENDINGS[format].cut} for one cut at its maximum, whole and streamed`,
      cost: 4,
      async run(ctx) {
        for (const streamed of [false, true]) for (const cut of [false, true]) await expectEnding(ctx, format, streamed, cut);
      },
    }),
  ),
];
