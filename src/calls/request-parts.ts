import type { ErrorDetail } from '../errors/index.ts';
import { isSecretHeader, REDACTED, redactSecrets } from '../wire/index.ts';
import type { CallRecord } from './call-record.ts';

/** What a record keeps of an error message and its details: enough to debug, not a second copy of a huge body. */
const MOST_MESSAGE_CHARS = 2048;
const MOST_DETAILS = 50;
/** A header value longer than this is cut (the server's header limit bounds them all anyway). */
const MOST_HEADER_CHARS = 4096;
/** Headers kept at most, the first ones sent (openapi/admin.yaml StateCallRecord takes no more). */
const MOST_HEADERS = 100;

/**
 * The path and query string of a request target (`/v1/tasks?limit=5`), the query without its `?` and with
 * secret-named parameters masked (`?api_key=…`): a curl line made from the record sends it again.
 */
export function targetParts(url: string): { path: string; query?: string } {
  const at = url.indexOf('?');
  if (at === -1) return { path: url };
  const path = url.slice(0, at);
  const query = url.slice(at + 1);
  if (query === '') return { path };
  // Masked as a query (the patterns look for `?name=`), then without the `?` again.
  return { path, query: redactSecrets(`?${query}`).text.slice(1) };
}

/**
 * A request's headers as a record keeps them: names in lower case (as Node gives them), repeated ones joined
 * with `, `, the first MOST_HEADERS only; every credential or signature masked whole (Authorization, x-api-key,
 * cookies, the signing trio), any other secret-looking string in a value masked where it stands.
 * @see src/wire/secrets.ts for which headers count as secrets
 */
export function recordedHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const kept: Record<string, string> = {};
  let count = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (++count > MOST_HEADERS) break;
    const text = (Array.isArray(value) ? value.join(', ') : value).slice(0, MOST_HEADER_CHARS);
    kept[name] = secretName(name) ? REDACTED : maskedValue(text);
  }
  return kept;
}

/**
 * The masking of header names and values seen before: a client sends the same Host, User-Agent, Accept and
 * SDK headers with every request, and the secret patterns over each value were a tenth of a GET's record. Pure
 * functions of their text, each kept for at most MEMO_SIZE texts (forgotten all at once when full).
 */
const MEMO_SIZE = 512;
const MEMO_CHARS = 256;

function memo<T>(work: (text: string) => T): (text: string) => T {
  let seen = new Map<string, T>();
  return (text) => {
    if (text.length > MEMO_CHARS) return work(text);
    const known = seen.get(text);
    if (known !== undefined) return known;
    const made = work(text);
    if (seen.size >= MEMO_SIZE) seen = new Map();
    seen.set(text, made);
    return made;
  };
}

const secretName = memo(isSecretHeader);
const maskedValue = memo((text) => redactSecrets(text).text);

/**
 * The message and field details of an error answer's JSON body, in any of the three shapes
 * (src/errors/shapes.ts: `{error: {message, details}}`, the Messages one too); empty for any other body.
 */
export function errorParts(body: unknown): Pick<CallRecord, 'error_message' | 'error_details'> {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return {};
  const { message, details } = error as { message?: unknown; details?: unknown };
  const fields = Array.isArray(details) ? details.filter(isDetail).slice(0, MOST_DETAILS) : [];
  return {
    ...(typeof message === 'string' ? { error_message: message.slice(0, MOST_MESSAGE_CHARS) } : {}),
    ...(fields.length > 0 ? { error_details: fields.map(({ field, message: said }) => ({ field, message: said.slice(0, MOST_MESSAGE_CHARS) })) } : {}),
  };
}

const isDetail = (value: unknown): value is ErrorDetail =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ErrorDetail).field === 'string' &&
  typeof (value as ErrorDetail).message === 'string';
