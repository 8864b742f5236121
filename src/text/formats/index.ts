export { chatFormat } from './chat.ts';
export { responsesFormat } from './responses.ts';
export { messagesFormat } from './messages.ts';
export type { TextFormat, TextCallView, ParsedCall } from './types.ts';
