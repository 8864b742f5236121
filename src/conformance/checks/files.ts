import { randomBytes } from 'node:crypto';
import { toExchange, unreachableReason } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import { CheckFailure } from '../client.ts';
import type { Check, CheckContext } from '../types.ts';
import { body, needAnswer } from './shared.ts';

interface UploadedFile {
  id?: unknown;
  url?: unknown;
  size?: unknown;
  created_at?: unknown;
  expires_at?: unknown;
}

const TIMEOUT_MS = 60_000;

/**
 * Fetches a file address as any holder of it would: no key (the address is the secret), the bytes as they come.
 * The exchange names the address (its path when it is on the deployment's own host).
 */
export async function download(ctx: CheckContext, url: string): Promise<{ exchange: Exchange; bytes: Buffer }> {
  const path = url.startsWith(`${ctx.api.baseUrl}/`) ? url.slice(ctx.api.baseUrl.length) : url;
  let res: Response;
  let bytes: Buffer;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    throw new CheckFailure(`GET ${url}: cannot download (${unreachableReason(err, TIMEOUT_MS)})`, null);
  }
  const exchange = toExchange({ method: 'GET', path, requestHeaders: {}, requestBody: undefined }, { status: res.status, headers: res.headers, text: bytes.toString('utf8') });
  return { exchange, bytes };
}

/** The upload's record as the reference gives it (an id `file_<number>`, an address), then its bytes back. */
async function expectRoundTrip(ctx: CheckContext, uploaded: Exchange, sent: Buffer): Promise<void> {
  needAnswer(uploaded);
  const file = body<UploadedFile>(uploaded);
  ctx.expect(typeof file.id === 'string' && /^file_\d+$/.test(file.id), 'id file_<number>', uploaded, 'file_<number>', file.id);
  ctx.expect(typeof file.url === 'string' && /^https?:\/\/[^/]/.test(file.url), 'url is an address', uploaded, 'http(s)://…', file.url);
  ctx.expect(file.size === sent.length, 'size is the bytes sent', uploaded, sent.length, file.size);
  const [created, expires] = [Date.parse(String(file.created_at)), Date.parse(String(file.expires_at))];
  ctx.expect(expires > created, 'expires_at after created_at', uploaded, `after ${String(file.created_at)}`, file.expires_at);
  if (typeof file.url !== 'string') return;
  const { exchange, bytes } = await download(ctx, file.url);
  ctx.expect(exchange.status === 200, 'the file address answers 200', exchange, 200, exchange.status);
  ctx.expect(bytes.equals(sent), 'the download is the bytes uploaded', exchange, `${sent.length} bytes as sent`, `${bytes.length} bytes${bytes.length === sent.length ? ', others' : ''}`);
}

export const fileChecks: Check[] = [
  {
    id: 'exercise.files.upload-download',
    group: 'files',
    title: 'POST /v1/files (multipart and JSON) yields a file_<number> id and an address that gives back the same bytes',
    cost: 0,
    async run(ctx) {
      // Text through multipart/form-data, as the reference names it ...
      const text = Buffer.from(`svc conformance upload ${randomBytes(8).toString('hex')}\n`, 'utf8');
      const boundary = `conformance${randomBytes(8).toString('hex')}`;
      const raw = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="conformance.txt"\r\nContent-Type: text/plain\r\n\r\n${text.toString('utf8')}\r\n--${boundary}--\r\n`;
      await expectRoundTrip(ctx, await ctx.api.request('POST', '/v1/files', { raw, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } }), text);
      // ... and every byte value through JSON (Base64 content, the emulator's documented shape).
      const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(16)]);
      const json = { filename: 'conformance.bin', mime_type: 'application/octet-stream', content: binary.toString('base64') };
      await expectRoundTrip(ctx, await ctx.api.request('POST', '/v1/files', { body: json }), binary);
    },
  },
];
