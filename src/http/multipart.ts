import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from '../errors/index.ts';

export interface MultipartUpload {
  fields: Record<string, string>;
  file: { bytes: Buffer; filename: string; mimeType: string } | null;
}

/**
 * Reads a multipart/form-data body (already read, for request signatures) with busboy: text parts as fields, the part named `file` as the upload.
 * Over `maxBytes` is 413 payload_too_large; a body busboy cannot read is 400 bad_request.
 */
export function readMultipart(req: Request, body: Buffer, maxBytes: number): Promise<MultipartUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: maxBytes + 1, files: 1, fields: 20, parts: 21 } });
    } catch (err) {
      reject(new ApiError('bad_request', `The multipart body cannot be read: ${(err as Error).message}.`));
      return;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let file: MultipartUpload['file'] = null;
    let failed: ApiError | null = null;
    parser.on('field', (name, value) => {
      fields[name] = value;
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
        failed = new ApiError('payload_too_large', `The file is larger than ${maxBytes / 1048576}MB.`);
      });
      stream.on('end', () => {
        if (name === 'file') file = { bytes: Buffer.concat(chunks), filename: info.filename ?? '', mimeType: info.mimeType };
      });
    });
    parser.on('filesLimit', () => {
      failed ??= new ApiError('invalid_params', 'Send one file, in the part named file.', [
        { field: 'file', message: 'only one file part is accepted' },
      ]);
    });
    parser.on('error', (err: Error) => reject(new ApiError('bad_request', `The multipart body cannot be read: ${err.message}.`)));
    parser.on('close', () => (failed ? reject(failed) : resolve({ fields, file })));
    parser.end(body);
  });
}
