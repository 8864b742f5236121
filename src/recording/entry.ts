import type { EndedExchange } from '../proxy/exchange.ts';
import { textFingerprint, textFormatOf } from '../text/fingerprint.ts';
import type { HarEntry, HarEntryExtra, HarNameValue, HarRequest, HarResponse } from './har.ts';
import { harHeader } from './har.ts';
import { contentRoute, redactBody, redactHeaders, redactSecrets } from './redact.ts';
import type { ContentRoute, Redaction } from './redact.ts';
import { isPlainObject } from '../contract/index.ts';

/** An exchange as a HAR entry, and the task it belongs to (the recorder makes its page). */
export interface RecordedEntry {
  entry: HarEntry;
  /** Machine time (ms) of the request, for ordering. */
  startedMs: number;
  task: { id: string; model: string | null; fromAnswer: boolean } | null;
}

const TASK_PATH = /^\/v1\/tasks\/([^/?]+)(?:\/cancel)?$/;

const pairsOf = (raw: string[]): HarNameValue[] => {
  const out: HarNameValue[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push({ name: raw[i] ?? '', value: raw[i + 1] ?? '' });
  return out;
};

/** UTF-8 text of a body, or null for bytes that are not. */
function utf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}


function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The task an exchange submitted, read or canceled. */
function taskOf(method: string, path: string, status: number, answer: unknown): RecordedEntry['task'] {
  const bare = path.split('?')[0] ?? '';
  const ok = status >= 200 && status < 300 && isPlainObject(answer);
  const model = ok && typeof answer['model'] === 'string' ? answer['model'] : null;
  if (method === 'POST' && bare === '/v1/tasks') return ok && typeof answer['id'] === 'string' ? { id: answer['id'], model, fromAnswer: true } : null;
  const match = TASK_PATH.exec(bare);
  if (!match?.[1]) return null;
  let id: string;
  try {
    id = decodeURIComponent(match[1]);
  } catch {
    id = match[1];
  }
  return { id, model, fromAnswer: ok };
}

/**
 * A request's address with its secrets replaced, and its query as HAR lists it (decoded, in order, repeats kept).
 * Decoding can bring out a secret the address hid (an address encoded twice inside a value): then the query is
 * written again from the redacted values.
 */
function addressOf(raw: string, redacted: Set<Redaction>): { url: string; query: HarNameValue[] } {
  const scanned = redactSecrets(raw);
  let url = scanned.text;
  if (scanned.changed) redacted.add('secret');
  const at = url.indexOf('?');
  if (at < 0) return { url, query: [] };
  const [search = '', hash] = url.slice(at + 1).split(/(?=#)/);
  let hidden = false;
  const query = [...new URLSearchParams(search).entries()].map(([name, value]) => {
    const inner = redactSecrets(value);
    hidden ||= inner.changed;
    return { name, value: inner.text };
  });
  if (hidden) {
    redacted.add('secret');
    url = `${url.slice(0, at)}?${new URLSearchParams(query.map((q): [string, string] => [q.name, q.value])).toString()}${hash ?? ''}`;
  }
  return { url, query };
}

const CAP_NOTE = "over the recorder's capture limit: left out";

function requestOf(ended: EndedExchange, route: ContentRoute | null, keepContent: boolean, redacted: Set<Redaction>, extra: HarEntryExtra): HarRequest {
  const { method, path } = ended.exchange;
  const address = addressOf(`${ended.upstream}${path}`, redacted);
  // As forwarded: the proxy sends the upstream's Host.
  const host = new URL(ended.upstream).host;
  const sent = pairsOf(ended.request.rawHeaders).map((h) => (h.name.toLowerCase() === 'host' ? { name: h.name, value: host } : h));
  const headers = redactHeaders(sent);
  headers.redacted.forEach((r) => redacted.add(r));
  const mimeType = harHeader(headers.headers, 'content-type') ?? '';
  const length = Number(harHeader(headers.headers, 'content-length') ?? NaN);
  const request: HarRequest = {
    method,
    url: address.url,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: headers.headers,
    queryString: address.query,
    headersSize: -1,
    bodySize: ended.request.body?.length ?? (Number.isFinite(length) ? length : -1),
  };
  const body = ended.request.body;
  if (body === null) {
    extra.truncated = true;
    request.postData = { mimeType, text: '', comment: CAP_NOTE };
  } else if (body.length > 0) {
    const text = utf8(body);
    if (text === null) {
      request.postData = { mimeType, text: '', comment: 'not UTF-8 text: left out' };
    } else {
      const done = redactBody({ route, side: 'request', text, mimeType, keepContent });
      done.redacted.forEach((r) => redacted.add(r));
      request.postData = { mimeType, text: done.text };
    }
  }
  return request;
}

const READABLE_ENCODINGS = new Set(['', 'identity', 'gzip', 'x-gzip', 'deflate', 'br']);

function responseOf(ended: EndedExchange, route: ContentRoute | null, keepContent: boolean, redacted: Set<Redaction>, extra: HarEntryExtra): HarResponse {
  const headers = redactHeaders(pairsOf(ended.response.rawHeaders));
  headers.redacted.forEach((r) => redacted.add(r));
  const mimeType = harHeader(headers.headers, 'content-type') ?? '';
  const encoding = (harHeader(headers.headers, 'content-encoding') ?? '').trim().toLowerCase();
  const length = Number(harHeader(headers.headers, 'content-length') ?? NaN);
  const decoded = ended.response.decoded;
  const identity = encoding === '' || encoding === 'identity';
  const content: HarResponse['content'] = { size: decoded?.length ?? (identity && Number.isFinite(length) ? length : -1), mimeType };
  if (decoded === null) {
    if (READABLE_ENCODINGS.has(encoding)) {
      extra.truncated = true;
      content.comment = CAP_NOTE;
    } else content.comment = `content-encoding ${encoding}: not decoded, left out`;
  } else if (decoded.length > 0) {
    const text = utf8(decoded);
    if (text === null) {
      if (keepContent) Object.assign(content, { text: decoded.toString('base64'), encoding: 'base64' as const });
      else {
        content.comment = 'binary content: left out';
        redacted.add('content');
      }
    } else {
      const done = redactBody({ route, side: 'response', text, mimeType, keepContent });
      done.redacted.forEach((r) => redacted.add(r));
      content.text = done.text;
    }
  }
  return {
    status: ended.exchange.status,
    statusText: ended.response.statusMessage,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: headers.headers,
    content,
    redirectURL: '',
    headersSize: -1,
    // Bytes as received: Content-Length, or (a chunked stream without an encoding) the bytes kept.
    bodySize: Number.isFinite(length) ? length : identity && decoded !== null ? decoded.length : -1,
  };
}

/**
 * One exchange as a HAR 1.2 entry, redacted (secrets always, content unless `keepContent`). The text format and
 * fingerprint of a text call come from the request as it was sent, before redaction.
 */
export function harEntry(ended: EndedExchange, options: { keepContent: boolean }): RecordedEntry {
  const { method, path, status } = ended.exchange;
  const route = contentRoute(method, path);
  const redacted = new Set<Redaction>();
  const extra: HarEntryExtra = {};

  const format = method === 'POST' ? textFormatOf(path) : null;
  if (format) {
    extra.textFormat = format.name;
    const fingerprint = textFingerprint(format, parseJson(ended.request.body === null ? null : utf8(ended.request.body)));
    if (fingerprint) extra.textFingerprint = fingerprint;
  }
  const task = taskOf(method, path, status, ended.exchange.json);
  if (task) extra.task = task.id;

  const request = requestOf(ended, route, options.keepContent, redacted, extra);
  const response = responseOf(ended, route, options.keepContent, redacted, extra);
  if (redacted.size > 0) extra.redacted = [...redacted].sort();

  const wait = Math.max(0, ended.firstByteMs - ended.startedMs);
  const receive = Math.max(0, ended.endMs - Math.max(ended.firstByteMs, ended.startedMs));
  const entry: HarEntry = {
    startedDateTime: new Date(ended.startedMs).toISOString(),
    time: wait + receive,
    request,
    response,
    cache: {},
    timings: { send: 0, wait, receive },
    _svcEmulator: extra,
  };
  return { entry, startedMs: ended.startedMs, task };
}
