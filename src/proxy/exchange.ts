import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { toExchange } from '../wire/index.ts';
import type { EndedExchange } from '../wire/index.ts';

/** Headers a curl line leaves out: the transport's own, and what fetch or an SDK adds about itself. */
export const NOT_IN_CURL = /^(host|content-length|connection|keep-alive|transfer-encoding|accept-encoding|accept-language|user-agent|sec-fetch-.*|x-stainless-.*)$/i;

/** The bytes of one direction of an exchange, kept up to a cap for checking. */
export interface Captured {
  chunks: Buffer[];
  size: number;
  /** More came than the cap: the body is not checked. */
  truncated: boolean;
}

export const capture = (): Captured => ({ chunks: [], size: 0, truncated: false });

export function keep(into: Captured, chunk: Buffer, cap: number): void {
  if (into.truncated) return;
  if (into.size + chunk.length > cap) {
    into.truncated = true;
    into.chunks = [];
    return;
  }
  into.chunks.push(chunk);
  into.size += chunk.length;
}

/** Undoes a content-encoding, so the checks see what the client's SDK sees; null when it cannot. */
function decoded(bytes: Buffer, encoding: string | null): Buffer | null {
  try {
    switch ((encoding ?? '').trim().toLowerCase()) {
      case '':
      case 'identity':
        return bytes;
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(bytes);
      case 'deflate':
        return inflateSync(bytes);
      case 'br':
        return brotliDecompressSync(bytes);
      default:
        return null;
    }
  } catch {
    return null;
  }
}

/** One proxied request and its answer, with the times the recorder needs. */
export function exchangeOf(
  request: { method: string; path: string; headers: IncomingHttpHeaders; rawHeaders: string[]; body: Captured },
  answer: { status: number; statusMessage: string; rawHeaders: string[]; body: Captured },
  times: { upstream: string; startedMs: number; firstByteMs: number; endMs: number },
): EndedExchange {
  const headers = new Headers();
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) headers.append(answer.rawHeaders[i] ?? '', answer.rawHeaders[i + 1] ?? '');
  const bytes = answer.body.truncated ? null : decoded(Buffer.concat(answer.body.chunks), headers.get('content-encoding'));
  const requestHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || NOT_IN_CURL.test(name) || (name === 'accept' && value === '*/*')) continue;
    requestHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const requestBody = request.body.size === 0 || request.body.truncated ? undefined : Buffer.concat(request.body.chunks).toString('utf8');
  return {
    exchange: toExchange({ method: request.method, path: request.path, requestHeaders, requestBody }, { status: answer.status, headers, text: bytes?.toString('utf8') ?? '' }),
    complete: bytes !== null,
    ...times,
    request: { rawHeaders: request.rawHeaders, body: request.body.truncated ? null : Buffer.concat(request.body.chunks) },
    response: { statusMessage: answer.statusMessage, rawHeaders: answer.rawHeaders, decoded: bytes, truncated: answer.body.truncated },
  };
}
