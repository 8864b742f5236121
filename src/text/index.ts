export { startTextCall, textModelOf } from './call.ts';
export type { AnswerChoice, TextCall, TextCallContext } from './call.ts';
// The formats and the SSE encoder live in src/text-formats, which the client side shares; the HTTP routes and the
// service take them from here with the text calls they write.
export { chatFormat, responsesFormat, messagesFormat, encodeEvent, STREAM_HEADERS } from '../text-formats/index.ts';
export type { TextFormat } from '../text-formats/index.ts';
export { generate } from './generate.ts';
export { refundInterruptedTextCalls } from './recover.ts';
