import { Router } from 'express';
import { ROUTING } from './routing.ts';
import type { Routes } from './route-table.ts';
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
export function uploadRoutes(deps: FilesRoutesDeps, router: Routes): void {
  const { contract } = deps;
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
}

/**
 * Types a browser shows inline as a picture or a player, which run no script of the file: raster images (not
 * SVG, a document that may hold scripts), audio and video. Every other file is served as a download.
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  ...['jpeg', 'png', 'gif', 'webp', 'avif', 'bmp'].map((subtype) => `image/${subtype}`),
  ...['mp4', 'webm', 'ogg', 'quicktime'].map((subtype) => `video/${subtype}`),
  ...['mpeg', 'mp4', 'aac', 'wav', 'x-wav', 'wave', 'ogg', 'webm', 'flac'].map((subtype) => `audio/${subtype}`),
]);

/**
 * Whoever uploads a file chooses its type, and the files share the origin of the dashboard and the control API:
 * a file shown as a page would run its scripts with the admin token in reach. So no file is a document of this
 * origin: `sandbox` gives any document made of it an opaque origin and no scripts; `default-src 'none'` lets it
 * load nothing, but for the file itself as the image or media of the browser's own image or player document
 * (without `media-src` chromium's player is refused it) and that document's inline style; `nosniff` keeps the
 * declared type from being second-guessed.
 */
const FILE_HEADERS = {
  'Content-Security-Policy': "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'",
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'private, max-age=0',
} as const;

/** A type, parameters included, as a header may carry it; a stored one that is not (an odd imported record) is sent as bytes. */
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;[\t\x20-\x7e]*)?$/i;

/**
 * The headers a stored file is served with, by its declared type (kept as Content-Type: the record says it, and
 * the download, nosniff and the sandbox leave a browser nothing to run). A picture or player shown inline is a
 * document of an opaque origin loading the file from this one: chromium's player loads it in CORS mode, so
 * those files allow any origin (their names are the secret, as for an <img> or <video> of any site).
 */
function fileHeaders(mimeType: string): Record<string, string> {
  const type = MIME_TYPE.test(mimeType) ? mimeType : 'application/octet-stream';
  const inline = INLINE_TYPES.has(type.split(';')[0]?.trim().toLowerCase() ?? '');
  return {
    'Content-Type': type,
    'Content-Disposition': inline ? 'inline' : 'attachment',
    ...FILE_HEADERS,
    ...(inline ? { 'Access-Control-Allow-Origin': '*' } : {}),
  };
}

/**
 * `GET /files/{name}`: the emulator's file storage (uploads, and result files: generated media, the fixtures of
 * older records). Names are unguessable, so no key is asked, as with the service's own storage; from
 * `expires_at` on the address answers 404. Each is served with `fileHeaders`.
 * @see docs/reference/security.md
 */
export function fileServingRoutes(deps: Pick<FilesRoutesDeps, 'api'>): Router {
  const router = Router(ROUTING);
  router.get('/:name', (req, res) => {
    const { mimeType, bytes } = deps.api.readFile(req.params.name);
    // setHeader, not res.set: Express would add a charset to the declared type.
    for (const [name, value] of Object.entries(fileHeaders(mimeType))) res.setHeader(name, value);
    res.end(bytes);
  });
  return router;
}
