import { isObject } from './document.ts';
import type { OpenApiDocument } from './document.ts';

/**
 * What the fuzzer sets up before its cases, Schemathesis' "test data": a funded account with an unsigned key of
 * generous limits (through the control API, openapi/admin.yaml), and uploads for the `x-file` notes.
 */

/** Points and limits high enough that 402 and 429 do not hide what the cases find. */
const FUNDS = '999999999999.000';
const KEY_SETTINGS = { rpm: 1_000_000, concurrency: 100_000, quota: null, signing: false };

async function call(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A new account funded with FUNDS, and a key of it without signing and with generous limits. */
export async function fundedKey(baseUrl: string, adminToken: string): Promise<{ account: string; key: string }> {
  const headers = { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' };
  const account = await call(`${baseUrl}/_emulator/accounts`, { method: 'POST', headers, body: JSON.stringify({ points: FUNDS }) }, 'create the fuzz account');
  const id = String(account['id']);
  await call(`${baseUrl}/_emulator/accounts/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ concurrency: null }) }, 'lift its concurrency cap');
  const key = await call(`${baseUrl}/_emulator/accounts/${id}/keys`, { method: 'POST', headers, body: JSON.stringify(KEY_SETTINGS) }, 'create its key');
  return { account: id, key: String(key['key']) };
}

/** An `x-file` note: the kind of file an address must name, and its limits. */
export interface FileNote {
  kind: string;
  max_bytes?: number;
  mime_types?: string[];
  min_seconds?: number;
  max_seconds?: number;
  max_total_seconds?: number;
}

const isNote = (v: unknown): v is FileNote => isObject(v) && typeof v['kind'] === 'string';

/** Every `x-file` note of the document, with the most items its array holds (for a total-duration limit). */
export function fileNotes(document: OpenApiDocument): { note: FileNote; maxItems: number }[] {
  const found = new Map<string, { note: FileNote; maxItems: number }>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!isObject(node)) return;
    const note = node['x-file'];
    if (isNote(note)) {
      const maxItems = typeof node['maxItems'] === 'number' ? node['maxItems'] : 1;
      found.set(noteKey(note), { note, maxItems });
    }
    Object.values(node).forEach(walk);
  };
  walk(document.root);
  return [...found.values()];
}

export const noteKey = (note: unknown): string => JSON.stringify(note);

const DEFAULT_MIME: Record<string, string> = { image: 'image/png', video: 'video/mp4', audio: 'audio/mpeg' };
const EXTENSION: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'video/mp4': 'mp4', 'video/quicktime': 'mov', 'audio/mpeg': 'mp3' };

/** Seconds within the note's limits, short enough that a full array stays within its total. */
function durationFor(note: FileNote, maxItems: number): number | null {
  if (note.kind !== 'audio' && note.kind !== 'video') return null;
  const lo = note.min_seconds ?? 1;
  let hi = note.max_seconds ?? lo + 4;
  if (note.max_total_seconds !== undefined) hi = Math.min(hi, Math.floor(note.max_total_seconds / Math.max(1, maxItems)));
  return Math.max(lo, Math.min(hi, lo + 3));
}

/**
 * Uploads files (multipart, `POST /v1/files`) for every `x-file` note, of its kind, MIME type, size and
 * duration; answers each note's addresses (the id and the URL of each upload).
 */
export async function uploadSeedFiles(baseUrl: string, key: string, document: OpenApiDocument, perNote = 2): Promise<Map<string, string[]>> {
  const addresses = new Map<string, string[]>();
  for (const { note, maxItems } of fileNotes(document)) {
    const list: string[] = [];
    const mimes = note.mime_types ?? [DEFAULT_MIME[note.kind] ?? `${note.kind}/octet-stream`];
    for (let n = 0; n < Math.max(perNote, mimes.length); n++) {
      const mime = mimes[n % mimes.length] as string;
      const form = new FormData();
      const bytes = Math.min(note.max_bytes ?? 4096, 256 + n);
      form.append('file', new Blob([Buffer.alloc(bytes, n + 1)], { type: mime }), `seed-${n}.${EXTENSION[mime] ?? 'bin'}`);
      const seconds = durationFor(note, maxItems);
      if (seconds !== null) form.append('duration', String(seconds));
      if (note.kind === 'image' || note.kind === 'video') {
        form.append('width', '640');
        form.append('height', '480');
      }
      const file = await call(`${baseUrl}/v1/files`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form }, `upload a ${note.kind} file`);
      list.push(String(file['id']), String(file['url']));
    }
    addresses.set(noteKey(note), list);
  }
  return addresses;
}
