import { HOP_BY_HOP, toExchange, unreachableReason } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import { harHeader, REDACTED } from '../recording/index.ts';
import type { HarEntry } from '../recording/index.ts';
import type { IdMap } from './ids.ts';

/** The deployment answered nothing at all (refused, unknown host, TLS, no answer in time): the run stops, exit 2. */
export class ParityUnreachable extends Error {}

export interface Target {
  /** Scheme and host of the deployment. */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

/** A recorded request as it is sent again. */
export interface ReplayRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The recorded request carried X-Svc-Timestamp, X-Svc-Nonce or X-Svc-Signature: it goes unsigned. */
  wasSigned: boolean;
  /** The recorded key was refused (401): the request carries REFUSED_KEY in its place. */
  keyRefused: boolean;
}

// Hop-by-hop headers, and what the transport sets for itself (fetch: host, length, encodings).
const NOT_REPLAYED = new Set([...HOP_BY_HOP, 'host', 'content-length', 'accept-encoding']);
const SIGNING = new Set(['x-svc-timestamp', 'x-svc-nonce', 'x-svc-signature']);
const CREDENTIALS = new Set(['authorization', 'x-api-key']);
/** Sent where a recorded key was refused (401): its value is redacted, and the deployment must refuse it too. */
export const REFUSED_KEY = 'sk-parity-not-a-key';

/** The request's path and query, from `/v1` on when the recorded upstream had a path prefix. */
function pathOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.startsWith('/') ? url : `/${url}`;
  }
  const at = parsed.pathname.search(/\/v1(\/|$)/);
  return `${at > 0 ? parsed.pathname.slice(at) : parsed.pathname}${parsed.search}`;
}

/**
 * The recorded request as it goes again: method, path, query, body and headers as recorded, the recorded ids
 * replaced by the replay's, minus hop-by-hop headers and redacted credentials; the key goes where the recording
 * had one (Authorization: Bearer, or x-api-key). Signing headers cannot be made again and are left out.
 */
export function replayRequest(entry: HarEntry, ids: IdMap, apiKey: string): ReplayRequest {
  const recorded = entry.request.headers;
  const named = new Set((harHeader(recorded, 'connection') ?? '').split(',').map((n) => n.trim().toLowerCase()));
  const refused = entry.response.status === 401;
  const headers: Record<string, string> = {};
  let [wasSigned, keyRefused] = [false, false];
  for (const { name, value } of recorded) {
    const lower = name.toLowerCase();
    if (lower.startsWith(':') || NOT_REPLAYED.has(lower) || named.has(lower)) continue;
    if (SIGNING.has(lower)) {
      wasSigned = true;
      continue;
    }
    // A credential the recorder replaced whole (a cookie, a token) is not sent as its marker.
    if (!CREDENTIALS.has(lower) && value === REDACTED) continue;
    if (CREDENTIALS.has(lower)) keyRefused = refused;
    const key = refused ? REFUSED_KEY : apiKey;
    const sent = lower === 'authorization' ? `Bearer ${key}` : lower === 'x-api-key' ? key : ids.rewrite(value);
    const had = headers[name];
    headers[name] = had === undefined || CREDENTIALS.has(lower) ? sent : `${had}, ${sent}`;
  }
  const text = entry.request.postData?.text;
  return { method: entry.request.method.toUpperCase(), path: ids.rewrite(pathOf(entry.request.url)), headers, body: text === undefined ? undefined : ids.rewrite(text), wasSigned, keyRefused };
}

/** Sends a request and reads the answer to its end (a stream included); an answer cut off keeps what came. */
export async function send(target: Target, request: ReplayRequest): Promise<{ exchange: Exchange; cutOff: string | null }> {
  const signal = AbortSignal.timeout(target.timeoutMs);
  let res: Response;
  try {
    const init: RequestInit = { method: request.method, headers: request.headers, signal, redirect: 'manual' };
    if (request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD') init.body = request.body;
    res = await fetch(`${target.baseUrl}${request.path}`, init);
  } catch (err) {
    throw new ParityUnreachable(`cannot reach ${target.baseUrl} (${unreachableReason(err, target.timeoutMs)})`);
  }
  let text = '';
  let cutOff: string | null = null;
  const decoder = new TextDecoder();
  try {
    const reader = res.body?.getReader();
    for (let part = await reader?.read(); part && !part.done; part = await reader?.read()) text += decoder.decode(part.value, { stream: true });
    text += decoder.decode();
  } catch (err) {
    cutOff = (err as Error).name === 'TimeoutError' ? `no complete answer within ${target.timeoutMs} ms` : `the answer was cut off (${(err as Error).message})`;
  }
  return { exchange: toExchange(sentAs(request), { status: res.status, headers: res.headers, text }), cutOff };
}

/** The recorded answer in the same form as a replayed one. */
export function recordedExchange(entry: HarEntry, request: ReplayRequest): Exchange {
  const headers = new Headers();
  for (const { name, value } of entry.response.headers) {
    try {
      headers.append(name, value);
    } catch {
      // A header name fetch's Headers refuses (HTTP/2 pseudo-headers): not one the checks read.
    }
  }
  return toExchange(sentAs(request), { status: entry.response.status, headers, text: entry.response.content.text ?? '' });
}

/** The request's side of an exchange. */
const sentAs = (request: ReplayRequest): Pick<Exchange, 'method' | 'path' | 'requestHeaders' | 'requestBody'> => ({
  method: request.method,
  path: request.path,
  requestHeaders: request.headers,
  requestBody: request.body,
});
