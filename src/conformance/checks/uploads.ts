import { randomBytes } from 'node:crypto';
import type { Exchange } from '../../wire/index.ts';
import type { Check, CheckContext } from '../types.ts';
import { download } from './files.ts';
import { body, needAnswer } from './shared.ts';

/** The record POST /v1/files answers (UploadedFile in openapi/service.yaml), read defensively. */
interface UploadRecord {
  id?: unknown;
  url?: unknown;
  type?: unknown;
  mime_type?: unknown;
  size?: unknown;
}

/** What a JSON upload may declare besides its bytes: the emulator does not decode media, so lengths are declared. */
interface JsonUpload {
  filename: string;
  mime_type: string;
  duration?: number;
  width?: number;
  height?: number;
}

/** Uploads `bytes` as JSON (Base64 content, padded); anything but 200 ends the check. */
async function uploadJson(ctx: CheckContext, bytes: Buffer, fields: JsonUpload): Promise<{ uploaded: Exchange; record: UploadRecord }> {
  const uploaded = await ctx.api.request('POST', '/v1/files', { body: { ...fields, content: bytes.toString('base64') } });
  needAnswer(uploaded);
  return { uploaded, record: body<UploadRecord>(uploaded) };
}

/** Uploads UTF-8 `text` as the multipart part `file`, typed `contentType`; anything but 200 ends the check. */
async function uploadMultipart(ctx: CheckContext, text: string, filename: string, contentType: string): Promise<{ uploaded: Exchange; record: UploadRecord }> {
  const boundary = `conformance${randomBytes(8).toString('hex')}`;
  const raw = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n${text}\r\n--${boundary}--\r\n`;
  const uploaded = await ctx.api.request('POST', '/v1/files', { raw, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } });
  needAnswer(uploaded);
  return { uploaded, record: body<UploadRecord>(uploaded) };
}

/** A MIME type without its parameters, lower case (`image/svg+xml; charset=utf-8` → `image/svg+xml`). */
export const mediaType = (value: string | null | undefined): string => (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** The record keeps the type the upload was sent with, and the file address serves it under that type. */
async function expectTypeKept(ctx: CheckContext, uploaded: Exchange, record: UploadRecord, sentType: string): Promise<void> {
  ctx.expect(record.mime_type === sentType, `mime_type is the type sent (${sentType})`, uploaded, sentType, record.mime_type);
  const kind = sentType.split('/')[0];
  ctx.expect(record.type === kind, `type is ${kind ?? '?'}, as its mime_type says`, uploaded, kind, record.type);
  if (typeof record.url !== 'string') return;
  const { exchange } = await download(ctx, record.url);
  ctx.expect(exchange.status === 200, 'the file address answers 200', exchange, 200, exchange.status);
  const served = mediaType(exchange.headers.get('content-type'));
  ctx.expect(served === sentType, 'the file address serves the type sent', exchange, sentType, served);
}

/** `size` is the file's byte count, and the address gives back those very bytes. */
async function expectSize(ctx: CheckContext, uploaded: Exchange, record: UploadRecord, sent: Buffer, how: string): Promise<void> {
  ctx.expect(record.size === sent.length, `size is the decoded byte count (${how})`, uploaded, sent.length, record.size);
  if (typeof record.url !== 'string') return;
  const { exchange, bytes } = await download(ctx, record.url);
  ctx.expect(exchange.status === 200, 'the file address answers 200', exchange, 200, exchange.status);
  ctx.expect(bytes.equals(sent), 'the download is the bytes uploaded', exchange, `${sent.length} bytes as sent`, `${bytes.length} bytes${bytes.length === sent.length ? ', others' : ''}`);
}

// Text with characters of two, three and four bytes in UTF-8: its byte count is not its length in characters.
const MULTIBYTE = 'Größe 尺寸 📐 — conformance\r\n';

export const uploadChecks: Check[] = [
  {
    id: 'files.upload.type-kept',
    group: 'files',
    title: "an upload's record keeps the type it was sent with (a multipart part's Content-Type, JSON's mime_type), and its address serves that type",
    cost: 0,
    async run(ctx) {
      // File names whose extensions say nothing (or something else): the type must come from what was sent.
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"><title>${MULTIBYTE.trim()}</title></svg>\n`;
      const multipart = await uploadMultipart(ctx, svg, 'drawing.svg', 'image/svg+xml');
      await expectTypeKept(ctx, multipart.uploaded, multipart.record, 'image/svg+xml');
      const json = await uploadJson(ctx, randomBytes(64), { filename: 'speech.bin', mime_type: 'audio/mpeg' });
      await expectTypeKept(ctx, json.uploaded, json.record, 'audio/mpeg');
    },
  },
  {
    id: 'files.upload.size-decoded',
    group: 'files',
    title: "an upload's size is its decoded byte count: Base64 with either padding, and multi-byte UTF-8 text in a multipart part",
    cost: 0,
    async run(ctx) {
      // 1000 and 1001 bytes end their Base64 in `==` and `=`: neither is 3/4 of the Base64 length.
      for (const length of [1000, 1001]) {
        const sent = randomBytes(length);
        const { uploaded, record } = await uploadJson(ctx, sent, { filename: `bytes-${length}.bin`, mime_type: 'application/octet-stream' });
        await expectSize(ctx, uploaded, record, sent, `${length} bytes sent as ${sent.toString('base64').length} Base64 characters`);
      }
      const text = MULTIBYTE.repeat(3);
      const { uploaded, record } = await uploadMultipart(ctx, text, 'sizes.txt', 'text/plain; charset=utf-8');
      await expectSize(ctx, uploaded, record, Buffer.from(text, 'utf8'), `${Buffer.byteLength(text)} UTF-8 bytes, ${text.length} characters`);
    },
  },
];
