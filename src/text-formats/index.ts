/**
 * The three text formats (Chat Completions, Responses, Messages) as the wire has them: how each reads a request and
 * writes its answer and stream, the one SSE encoder, the token arithmetic, and the fingerprint that ties a recorded
 * answer to a call. The emulator's text calls (src/text) build on it, and so does the client side: the conformance
 * suite's and the proxy's stream checks, and the recording, which must parse a request and count its pieces as the
 * emulator does. Apart from src/text because src/text's index brings the engine (accounts, billing, keys, the
 * store) along, which the client side has no use for.
 */
export { chatFormat } from './chat.ts';
export { responsesFormat } from './responses.ts';
export { messagesFormat } from './messages.ts';
export type { TextFormat, TextCallView, ParsedCall, TextRequest, Generated, TextView, ToolCallOut } from './types.ts';
export { encodeEvent, STREAM_HEADERS } from './sse.ts';
export type { SseEvent } from './sse.ts';
export { countInputTokens, toPieces } from './tokens.ts';
export { textFingerprint, textFormatOf } from './fingerprint.ts';
