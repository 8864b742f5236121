import type { EndedExchange } from '../wire/index.ts';
import { textFingerprint, textFormatOf } from '../text-formats/index.ts';
import type { HarEntry, HarEntryExtra, HarNameValue, HarRequest, HarResponse } from './har.ts';
import { harHeader } from './har.ts';
import { parseJson } from './recorded-content.ts';
import { redactSecrets } from '../wire/index.ts';
import { contentRoute, redactBody, redactHeaders } from './redact.ts';
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

/** What redacting one exchange needs, and what it notes as it goes. */
interface Redacting {
  route: ContentRoute | null;
  keepContent: boolean;
  /** What was replaced, for `_svcEmulator.redacted`. */
  redacted: Set<Redaction>;
  extra: HarEntryExtra;
}

/** Headers as recorded (credentials replaced), with the body's type and its Content-Length (null when none). */
function headersOf(pairs: HarNameValue[], r: Redacting): { headers: HarNameValue[]; mimeType: string; length: number | null } {
  const done = redactHeaders(pairs);
  done.redacted.forEach((what) => r.redacted.add(what));
  const length = Number(harHeader(done.headers, 'content-length') ?? NaN);
  return { headers: done.headers, mimeType: harHeader(done.headers, 'content-type') ?? '', length: Number.isFinite(length) ? length : null };
}

/** A body's text as recorded: content x-ed out per the route (unless kept), secrets replaced. */
function bodyText(text: string, side: 'request' | 'response', mimeType: string, r: Redacting): string {
  const done = redactBody({ route: r.route, side, text, mimeType, keepContent: r.keepContent });
  done.redacted.forEach((what) => r.redacted.add(what));
  return done.text;
}

function requestOf(ended: EndedExchange, r: Redacting): HarRequest {
  const address = addressOf(`${ended.upstream}${ended.exchange.path}`, r.redacted);
  // As forwarded: the proxy sends the upstream's Host.
  const host = new URL(ended.upstream).host;
  const sent = pairsOf(ended.request.rawHeaders).map((h) => (h.name.toLowerCase() === 'host' ? { name: h.name, value: host } : h));
  const { headers, mimeType, length } = headersOf(sent, r);
  const body = ended.request.body;
  const request: HarRequest = {
    method: ended.exchange.method,
    url: address.url,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers,
    queryString: address.query,
    headersSize: -1,
    bodySize: body?.length ?? length ?? -1,
  };
  if (body === null) {
    r.extra.truncated = true;
    request.postData = { mimeType, text: '', comment: CAP_NOTE };
  } else if (body.length > 0) {
    const text = utf8(body);
    request.postData = text === null ? { mimeType, text: '', comment: 'not UTF-8 text: left out' } : { mimeType, text: bodyText(text, 'request', mimeType, r) };
  }
  return request;
}

function responseOf(ended: EndedExchange, r: Redacting): HarResponse {
  const { headers, mimeType, length } = headersOf(pairsOf(ended.response.rawHeaders), r);
  const encoding = (harHeader(headers, 'content-encoding') ?? '').trim().toLowerCase();
  const identity = encoding === '' || encoding === 'identity';
  const decoded = ended.response.decoded;
  const content: HarResponse['content'] = { size: decoded?.length ?? (identity && length !== null ? length : -1), mimeType };
  if (decoded === null) {
    if (ended.response.truncated) {
      r.extra.truncated = true;
      content.comment = CAP_NOTE;
    } else content.comment = `content-encoding ${encoding}: not decoded, left out`;
  } else if (decoded.length > 0) {
    const text = utf8(decoded);
    if (text !== null) content.text = bodyText(text, 'response', mimeType, r);
    else if (r.keepContent) Object.assign(content, { text: decoded.toString('base64'), encoding: 'base64' as const });
    else {
      content.comment = 'binary content: left out';
      r.redacted.add('content');
    }
  }
  return {
    status: ended.exchange.status,
    statusText: ended.response.statusMessage,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers,
    content,
    redirectURL: '',
    headersSize: -1,
    // Bytes as received: Content-Length, or (a chunked stream without an encoding) the bytes kept.
    bodySize: length ?? (identity && decoded !== null ? decoded.length : -1),
  };
}

/**
 * One exchange as a HAR 1.2 entry, redacted (secrets always, content unless `keepContent`). The text format and
 * fingerprint of a text call come from the request as it was sent, before redaction.
 */
export function harEntry(ended: EndedExchange, options: { keepContent: boolean }): RecordedEntry {
  const { method, path, status } = ended.exchange;
  const r: Redacting = { route: contentRoute(method, path), keepContent: options.keepContent, redacted: new Set(), extra: {} };
  const { extra } = r;

  const format = method === 'POST' ? textFormatOf(path) : null;
  if (format) {
    extra.textFormat = format.name;
    const fingerprint = textFingerprint(format, parseJson(ended.request.body === null ? null : utf8(ended.request.body)));
    if (fingerprint) extra.textFingerprint = fingerprint;
  }
  const task = taskOf(method, path, status, ended.exchange.json);
  if (task) extra.task = task.id;

  const request = requestOf(ended, r);
  const response = responseOf(ended, r);
  if (r.redacted.size > 0) extra.redacted = [...r.redacted].sort();
  if (ended.injected) extra.injectedFault = { ...ended.injected };

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
