import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { coerceNumbers } from '../contract/index.ts';
import type { JsonSchema } from '../contract/index.ts';
import type { Contract } from '../contract/index.ts';
import { mimeFromName } from '../files/index.ts';
import { ApiError } from '../errors/index.ts';
import { MAX_UPLOAD_BYTES } from '../service/index.ts';
import type { Api } from '../service/index.ts';
import { callerOf } from './api-key.ts';
import type { CallRecordDeps } from './call-records.ts';
import { rawBodyOf, requireObjectBody } from './json-body.ts';
import { readMultipart } from './multipart.ts';
import { recordCall } from './call-records.ts';

/** Base64 grows a file by a third, plus room for the other fields and multipart boundaries. */
export const UPLOAD_BODY_LIMIT = `${Math.ceil((MAX_UPLOAD_BYTES * 4) / 3 / 1024 + 64)}kb`;

export interface FilesRoutesDeps extends CallRecordDeps {
  contract: Contract;
  api: Pick<Api, 'uploadFile' | 'readFile'>;
}

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
export function uploadRoutes(deps: FilesRoutesDeps): Router {
  const { contract } = deps;
  const router = Router(ROUTING);
  router.post('/files', async (req, res) => {
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
      filename = fields.filename ?? 'upload';
      mimeType = fields.mime_type ?? mimeFromName(filename);
    }
    res.json(
      deps.api.uploadFile(
        callerOf(res),
        { filename, mimeType, bytes, duration: fields.duration ?? null, width: fields.width ?? null, height: fields.height ?? null },
        () => recordCall(deps, res),
      ),
    );
  });

  return router;
}

/**
 * `GET /files/{name}`: the emulator's file storage. Names are unguessable, so no key is asked, as with the
 * service's own storage; from `expires_at` on the address answers 404.
 */
export function fileServingRoutes(deps: Pick<FilesRoutesDeps, 'api'>): Router {
  const router = Router(ROUTING);
  router.get('/:name', (req, res) => {
    const { mimeType, bytes } = deps.api.readFile(req.params.name);
    res.setHeader('Content-Type', mimeType);
    res.setHeader('Cache-Control', 'private, max-age=0');
    res.end(bytes);
  });
  return router;
}
