import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from '../errors/index.ts';

export interface MultipartUpload {
  fields: Record<string, string>;
  /** `filename` is '' for a part without one. */
  file: { bytes: Buffer; filename: string; mimeType: string } | null;
}

/** The part that carries the upload. */
const FILE_PART = 'file';

/**
 * Reads a multipart/form-data body (already read, for request signatures) with busboy: text parts as fields, the
 * part named `file` as the upload, with a file name or without one (busboy takes a part without a file name for
 * a text field unless its type is application/octet-stream; here it is the file all the same, its bytes as sent).
 * Over `maxBytes` is 413 payload_too_large; a body busboy cannot read is 400 bad_request; more than one file part
 * is 422 invalid_params.
 */
export async function readMultipart(req: Request, body: Buffer, maxBytes: number): Promise<MultipartUpload> {
  const read = await parse(req, body, maxBytes, 'utf8');
  const [field, ...more] = read.fileFields;
  if (!field) return { fields: read.fields, file: read.file };
  if (read.file || more.length > 0) throw onlyOneFile();
  // Read again with Latin-1 for parts that name no charset: one character per byte, so the bytes come back as sent.
  const asBytes = (await parse(req, body, maxBytes, 'latin1')).fileFields[0];
  if (field.value === undefined || asBytes?.value === undefined) {
    throw new ApiError('bad_request', 'The multipart body cannot be read: the file part names a charset that is not known.');
  }
  // The same text both times: the part names its charset (or is ASCII), and its text is stored in UTF-8.
  const bytes = asBytes.value === field.value ? Buffer.from(field.value, 'utf8') : Buffer.from(asBytes.value, 'latin1');
  return { fields: read.fields, file: { bytes, filename: '', mimeType: field.mimeType } };
}

interface Parsed {
  fields: Record<string, string>;
  /** Parts named `file` without a file name, as text in `charset` (undefined: a charset node cannot decode). */
  fileFields: { value: string | undefined; mimeType: string }[];
  file: MultipartUpload['file'];
}

const onlyOneFile = (): ApiError =>
  new ApiError('invalid_params', 'Send one file, in the part named file.', [{ field: 'file', message: 'only one file part is accepted' }]);

const tooLarge = (maxBytes: number): ApiError => new ApiError('payload_too_large', `The file is larger than ${maxBytes / 1048576}MB.`);

/** One busboy pass; text parts that name no charset are decoded with `charset`. */
function parse(req: Request, body: Buffer, maxBytes: number, charset: 'utf8' | 'latin1'): Promise<Parsed> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defCharset: charset,
        // A text part may be the file: as large as a file may be (the body as a whole is limited before this).
        limits: { fileSize: maxBytes + 1, fieldSize: maxBytes + 1, files: 1, fields: 20, parts: 21 },
      });
    } catch (err) {
      reject(new ApiError('bad_request', `The multipart body cannot be read: ${(err as Error).message}.`));
      return;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    const fileFields: Parsed['fileFields'] = [];
    let file: MultipartUpload['file'] = null;
    let failed: ApiError | null = null;
    parser.on('field', (name, value: string | undefined, info) => {
      if (name === FILE_PART) {
        if (info.valueTruncated) failed = tooLarge(maxBytes);
        fileFields.push({ value, mimeType: info.mimeType });
        return;
      }
      fields[name] = value as string;
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A truncated part errors the file stream: without a listener that would take the whole process down.
      stream.on('error', (err: Error) => {
        failed ??= new ApiError('bad_request', `The multipart body cannot be read: ${err.message}.`);
      });
      // busboy reports the limit when a file reaches it: one byte over the maximum is what is refused.
      stream.on('limit', () => {
        failed = tooLarge(maxBytes);
      });
      stream.on('end', () => {
        if (name === FILE_PART) file = { bytes: Buffer.concat(chunks), filename: info.filename ?? '', mimeType: info.mimeType };
      });
    });
    parser.on('filesLimit', () => {
      failed ??= onlyOneFile();
    });
    parser.on('error', (err: Error) => reject(new ApiError('bad_request', `The multipart body cannot be read: ${err.message}.`)));
    parser.on('close', () => (failed ? reject(failed) : resolve({ fields, fileFields, file })));
    parser.end(body);
  });
}
