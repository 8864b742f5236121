import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { coerceNumbers } from '../contract/index.ts';
import type { JsonSchema } from '../contract/index.ts';
import { addFile, fileByName, fileView, fixtureBytes, isBlobName, mimeFromName } from '../files/index.ts';
import { ApiError } from '../errors/index.ts';
import { accountOf } from './api-key.ts';
import type { AppDeps } from './context.ts';
import { rawBodyOf, requireObjectBody } from './json-body.ts';
import { readMultipart } from './multipart.ts';
import { recordCall } from './call-records.ts';

/** The largest input file any model takes (videos and audio, 50MB). */
const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** Base64 grows a file by a third, plus room for the other fields and multipart boundaries. */
export const UPLOAD_BODY_LIMIT = `${Math.ceil((MAX_UPLOAD_BYTES * 4) / 3 / 1024 + 64)}kb`;

interface UploadFields {
  filename?: string;
  mime_type?: string;
  content?: string;
  duration?: number;
  width?: number;
  height?: number;
}

/**
 * `POST /v1/files` (JSON with Base64 content, or multipart/form-data with a `file` part): the body shapes are
 * the emulator's, in openapi/service.yaml. Its body may be larger than others (UPLOAD_BODY_LIMIT).
 * @see reference "Other endpoints": POST /v1/files
 */
export function uploadRoutes(deps: AppDeps): Router {
  const { contract, db, clock } = deps;
  const router = Router(ROUTING);
  router.post('/files', async (req, res) => {
    const account = accountOf(res);
    let fields: UploadFields;
    let bytes: Buffer;
    let filename: string;
    let mimeType: string;
    if (req.is('multipart/form-data')) {
      const upload = await readMultipart(req, rawBodyOf(req) ?? Buffer.alloc(0), MAX_UPLOAD_BYTES);
      const schema = contract.documents.service.components?.schemas?.['UploadFileMultipart'] as JsonSchema;
      const properties = schema['properties'] as Record<string, JsonSchema>;
      const raw = Object.fromEntries(
        Object.entries(upload.fields)
          .filter(([name]) => name !== 'file' && Object.hasOwn(properties, name))
          .map(([name, value]) => [name, coerceNumbers(properties[name] ?? {}, value)]),
      );
      fields = contract.body<UploadFields>('service', 'UploadFileMultipart', { ...raw, ...(upload.file ? { file: '' } : {}) });
      if (!upload.file) throw new ApiError('invalid_params', 'file is required', [{ field: 'file', message: 'is required' }]);
      bytes = upload.file.bytes;
      filename = upload.file.filename || 'upload';
      mimeType = upload.file.mimeType === 'application/octet-stream' ? mimeFromName(filename) : upload.file.mimeType;
    } else {
      fields = contract.body<UploadFields>('service', 'UploadFileJson', requireObjectBody(req));
      bytes = Buffer.from(fields.content ?? '', 'base64');
      if (bytes.length > MAX_UPLOAD_BYTES) throw new ApiError('payload_too_large', 'The file is larger than 50MB.');
      filename = fields.filename ?? 'upload';
      mimeType = fields.mime_type ?? mimeFromName(filename);
    }
    const file = db.store.transaction(() => {
      const added = addFile(db, deps.random, clock.now(), deps.config.fileRetentionMs, {
        accountId: account.id,
        filename,
        mimeType,
        size: bytes.length,
        duration: fields.duration ?? null,
        width: fields.width ?? null,
        height: fields.height ?? null,
        source: { kind: 'blob' },
      });
      // The bytes before the record that points at them is committed: a crash between leaves only stray bytes.
      deps.blobs.put(added.name, bytes);
      recordCall(deps, res);
      return added;
    });
    deps.files.track(file.expires_ms);
    res.json(fileView(file, deps.config.publicUrl));
  });

  return router;
}

/**
 * `GET /files/{name}`: the emulator's file storage. Names are unguessable, so no key is asked, as with the
 * service's own storage; from `expires_at` on the address answers 404.
 */
export function fileServingRoutes(deps: AppDeps): Router {
  const router = Router(ROUTING);
  router.get('/:name', (req, res) => {
    // Only a plain file name is looked up: `..`, separators, NUL or their encoded forms never reach the store.
    const file = isBlobName(req.params.name) ? fileByName(deps.db, req.params.name, deps.clock.now()) : undefined;
    const bytes = !file ? undefined : file.source.kind === 'blob' ? deps.blobs.get(file.name) : fixtureBytes(file.source.fixture);
    if (!file || !bytes) throw new ApiError('not_found', 'No such file, or it has expired.');
    res.setHeader('Content-Type', file.mime_type);
    res.setHeader('Cache-Control', 'private, max-age=0');
    res.end(bytes);
  });
  return router;
}
