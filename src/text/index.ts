export { startTextCall, textModelOf } from './call.ts';
export type { TextCall, TextCallContext } from './call.ts';
export { chatFormat, responsesFormat, messagesFormat } from './formats/index.ts';
export type { TextFormat, TextCallView } from './formats/index.ts';
export { encodeEvent, STREAM_HEADERS } from './sse.ts';
export type { SseEvent } from './sse.ts';
export { generate } from './generate.ts';
export type { TextRequest, Generated } from './generate.ts';
export { refundInterruptedTextCalls } from './recover.ts';
