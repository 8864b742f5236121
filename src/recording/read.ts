import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { HarEntry, HarEntryExtra, HarNameValue, HarPage } from './har.ts';
import { isPlainObject } from '../contract/index.ts';

/** A recording as one list: every `.har` file of a directory (by name), or one file, entries in time order. */
export interface Recording {
  files: string[];
  pages: HarPage[];
  entries: HarEntry[];
}

/** Thrown for a path that holds no recording, or a file that is not HAR 1.2: the message names the file. */
export class RecordingError extends Error {}

export function readRecording(path: string): Recording {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path).filter((name) => name.endsWith('.har')).sort().map((name) => join(path, name))
      : [path];
  } catch {
    throw new RecordingError(`${path}: no such file or directory`);
  }
  if (files.length === 0) throw new RecordingError(`${path}: no .har files in it`);
  const pages: HarPage[] = [];
  const entries: HarEntry[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      // A file over V8's longest string (about 512 MB) lands here too.
      throw new RecordingError(`${file}: cannot be read (${(err as Error).message})`);
    }
    let har: unknown;
    try {
      har = JSON.parse(text);
    } catch (err) {
      throw new RecordingError(`${file}: not JSON (${(err as Error).message})`);
    }
    const log = isPlainObject(har) && isPlainObject(har['log']) ? har['log'] : null;
    if (log?.['version'] !== '1.2' || !Array.isArray(log['entries'])) throw new RecordingError(`${file}: not a HAR 1.2 log (log.version and log.entries)`);
    if (Array.isArray(log['pages'])) pages.push(...log['pages'].filter(isPlainObject).flatMap(pageOf));
    log['entries'].forEach((entry: unknown, i: number) => entries.push(entryOf(entry, `${file}: log.entries[${i}]`)));
  }
  // Stable: entries of one instant keep their order within their file.
  entries.sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  return { files, pages, entries };
}

const number = (value: unknown, otherwise: number): number => (typeof value === 'number' && Number.isFinite(value) ? value : otherwise);
const string = (value: unknown, otherwise: string): string => (typeof value === 'string' ? value : otherwise);
const nameValues = (value: unknown): HarNameValue[] =>
  Array.isArray(value) ? value.filter(isPlainObject).filter((h) => typeof h['name'] === 'string' && typeof h['value'] === 'string').map((h) => ({ name: h['name'] as string, value: h['value'] as string })) : [];

/**
 * An entry as the commands read it: what they cannot do without (a time, a method and address, a status) must be
 * there, else the file is refused with the entry named; what HAR writers leave out or write otherwise (devtools'
 * -1 timings, no content text, no `_svcEmulator`) gets the value that means "not known", so the readers never
 * meet a missing field.
 */
function entryOf(value: unknown, where: string): HarEntry {
  const fail = (what: string): never => {
    throw new RecordingError(`${where}: ${what}`);
  };
  if (!isPlainObject(value)) return fail('not an object');
  const { request, response, timings } = value;
  if (typeof value['startedDateTime'] !== 'string' || Number.isNaN(Date.parse(value['startedDateTime']))) fail('startedDateTime is not an ISO 8601 time');
  if (!isPlainObject(request) || typeof request['method'] !== 'string' || typeof request['url'] !== 'string') return fail('request.method and request.url are not strings');
  if (!isPlainObject(response) || !Number.isInteger(response['status'])) return fail('response.status is not a number');
  const content = isPlainObject(response['content']) ? response['content'] : {};
  const postData = isPlainObject(request['postData']) && typeof request['postData']['text'] === 'string' ? request['postData'] : undefined;
  const time = isPlainObject(timings) ? timings : {};
  const extra = isPlainObject(value['_svcEmulator']) ? extraOf(value['_svcEmulator']) : undefined;
  return {
    ...(typeof value['pageref'] === 'string' ? { pageref: value['pageref'] } : {}),
    startedDateTime: value['startedDateTime'] as string,
    time: number(value['time'], 0),
    request: {
      method: request['method'],
      url: request['url'],
      httpVersion: string(request['httpVersion'], 'HTTP/1.1'),
      cookies: [],
      headers: nameValues(request['headers']),
      queryString: nameValues(request['queryString']),
      ...(postData
        ? { postData: { mimeType: string(postData['mimeType'], ''), text: postData['text'] as string, ...(typeof postData['comment'] === 'string' ? { comment: postData['comment'] } : {}) } }
        : {}),
      headersSize: -1,
      bodySize: number(request['bodySize'], -1),
    },
    response: {
      status: response['status'] as number,
      statusText: string(response['statusText'], ''),
      httpVersion: string(response['httpVersion'], 'HTTP/1.1'),
      cookies: [],
      headers: nameValues(response['headers']),
      content: {
        size: number(content['size'], -1),
        mimeType: string(content['mimeType'], ''),
        ...(typeof content['text'] === 'string' ? { text: content['text'] } : {}),
        ...(typeof content['comment'] === 'string' ? { comment: content['comment'] } : {}),
        ...(content['encoding'] === 'base64' ? { encoding: 'base64' as const } : {}),
      },
      redirectURL: '',
      headersSize: -1,
      bodySize: number(response['bodySize'], -1),
    },
    cache: {},
    // HAR writes -1 for a timing that does not apply.
    timings: { send: Math.max(0, number(time['send'], 0)), wait: Math.max(0, number(time['wait'], 0)), receive: Math.max(0, number(time['receive'], 0)) },
    ...(extra ? { _svcEmulator: extra } : {}),
  };
}

/** A page that names a task (the recorder's), or none. */
function pageOf(raw: Record<string, unknown>): HarPage[] {
  if (typeof raw['id'] !== 'string') return [];
  const model = isPlainObject(raw['_svcEmulator']) ? raw['_svcEmulator']['model'] : undefined;
  return [
    {
      startedDateTime: string(raw['startedDateTime'], ''),
      id: raw['id'],
      title: string(raw['title'], raw['id']),
      pageTimings: {},
      ...(typeof model === 'string' ? { _svcEmulator: { model } } : {}),
    },
  ];
}

/** The emulator's facts of an entry, each kept only when it has its documented type. */
function extraOf(raw: Record<string, unknown>): HarEntryExtra {
  const extra: HarEntryExtra = {};
  if (raw['textFormat'] === 'chat' || raw['textFormat'] === 'responses' || raw['textFormat'] === 'messages') extra.textFormat = raw['textFormat'];
  // The form a text scenario's match.text_request takes: anything else could never be matched.
  if (typeof raw['textFingerprint'] === 'string' && /^sha256:[0-9a-f]{64}$/.test(raw['textFingerprint'])) extra.textFingerprint = raw['textFingerprint'];
  if (typeof raw['task'] === 'string') extra.task = raw['task'];
  if (Array.isArray(raw['redacted'])) extra.redacted = raw['redacted'].filter((r): r is string => typeof r === 'string');
  if (raw['truncated'] === true) extra.truncated = true;
  const fault = raw['injectedFault'];
  if (isPlainObject(fault) && typeof fault['rule'] === 'string' && typeof fault['kind'] === 'string') extra.injectedFault = { rule: fault['rule'], kind: fault['kind'] };
  return extra;
}
