import { isUtf8 } from 'node:buffer';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, endpointGroup } from '../errors/index.ts';
import { bodyDigest } from '../verdict/index.ts';
import { readChunks } from './body-chunks.ts';
import type { BodyChunks } from './body-chunks.ts';
import { depthScan } from './json-scan.ts';
import type { DepthScan } from './json-scan.ts';
import { parseYamlBody, YAML_TYPES } from './yaml-body.ts';

interface BodyParserError {
  type?: string;
}

/** The exact bytes a request sent (request signatures are over them), or undefined for no body. */
export const rawBodyOf = (req: Request): Buffer | undefined => (req as BodyState).rawBody;

/** What reading leaves on the request: the bytes, and what was worked out of them as they came. */
type BodyState = Request & { rawBody?: Buffer; chunks?: BodyChunks };

/** The client log's digest of the body ('' for none). */
export const bodyDigestOf = (req: Request): string => {
  const raw = rawBodyOf(req);
  return (req as BodyState).chunks?.digest.digest(raw) ?? bodyDigest(raw);
};

/** No valid request nests deeply; a body that does would exhaust the stack of whatever walks it later. */
const MAX_DEPTH = 64;

/**
 * Reads the body's bytes, whatever their type, up to a limit (413 payload_too_large beyond it). Parsing comes
 * later, after request signatures are checked over these bytes; a JSON body's nesting and the client log's digest
 * are worked out as the bytes arrive (body-chunks.ts).
 */
export function readBody(limitFor: (req: Request) => string | number): RequestHandler {
  const readers = new Map<string | number, RequestHandler>();
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      next();
      return;
    }
    const limit = limitFor(req);
    let read = readers.get(limit);
    if (!read) {
      read = express.raw({ limit, type: () => true });
      readers.set(limit, read);
    }
    const chunks = readChunks(req, { json: isJson(req), maxDepth: MAX_DEPTH });
    read(req, res, (err?: unknown) => {
      chunks?.stop();
      if (err) {
        next(bodyError(err as BodyParserError, limit, isTextEndpoint(req)));
        return;
      }
      const state = req as BodyState;
      state.rawBody = req.body as Buffer;
      if (chunks?.covered(state.rawBody)) state.chunks = chunks;
      req.body = undefined;
      next();
    });
  };
}

export interface JsonBodyOptions {
  /** The requests whose route takes multipart/form-data (POST /v1/files) and parses it itself. */
  takesMultipart?: (req: Request) => boolean;
  /** The requests whose route takes a YAML document too (POST /_emulator/scenarios: a scenario file's text). */
  takesYaml?: (req: Request) => boolean;
}

/**
 * Parses a read body as JSON and turns every way it can be wrong into a documented 4xx: malformed JSON, bytes
 * that are not UTF-8 and JSON nested deeper than 64 levels are 400 bad_request (the last two refused before
 * anything is decoded or built), a wrong content type 415 (400 on text endpoints, whose rule is "a body that is
 * not a valid JSON object gives 400"). A multipart body is left to the route that takes one; anywhere else it is
 * a wrong type. A YAML body is parsed where its route takes one (yaml-body.ts), a wrong type elsewhere too.
 * @see reference "Wire rules": JSON, and multipart/form-data additionally on POST /v1/files
 */
export function parseJsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const takesMultipart = options.takesMultipart ?? (() => false);
  const takesYaml = options.takesYaml ?? (() => false);
  return (req, _res, next) => {
    const raw = rawBodyOf(req);
    if (raw === undefined || (req.is('multipart/form-data') && takesMultipart(req))) {
      next();
      return;
    }
    const textEndpoint = isTextEndpoint(req);
    const yaml = Boolean(req.is(YAML_TYPES)) && takesYaml(req);
    if (!isJson(req) && !yaml) {
      throw wrongContent(textEndpoint, 'The request body must be a JSON object sent as application/json.');
    }
    const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw wrongContent(textEndpoint, 'The request body must be a UTF-8 JSON object.', 'The request body must be UTF-8 JSON.');
    }
    if (yaml) {
      if (!isUtf8(raw)) throw new ApiError('bad_request', 'The request body is not valid UTF-8.');
      req.body = parseYamlBody(raw.toString('utf8'));
      next();
      return;
    }
    // Before JSON.parse, which would build every level first; and first, as it was read with the bytes.
    const over = scannedDepth(req, raw).overAt;
    if (over !== null) {
      throw new ApiError('bad_request', `The request body nests deeper than ${MAX_DEPTH} levels: level ${MAX_DEPTH + 1} opens at byte offset ${over}.`);
    }
    // Decoding would put U+FFFD in place of every byte that is not UTF-8, and the body would be taken as another text.
    if (!isUtf8(raw)) throw new ApiError('bad_request', 'The request body is not valid UTF-8.');
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      throw new ApiError('bad_request', 'The request body is not valid JSON.');
    }
    req.body = body;
    next();
  };
}

/** The text endpoints answer every problem with a body's content with 400 bad_request (reference "Text endpoints"). */
/** The three text endpoints: their own error shapes, and their own body limit (a message may carry images). */
export const isTextEndpoint = (req: Request): boolean => endpointGroup(req.originalUrl) !== 'general';

/**
 * A body of the wrong type, charset or encoding: 415 unsupported_media_type, but 400 bad_request on the text
 * endpoints. `general` is the 415's message, when it has its own (else the catalog's).
 */
function wrongContent(textEndpoint: boolean, text: string, general?: string): ApiError {
  if (textEndpoint) return new ApiError('bad_request', text);
  return general === undefined ? new ApiError('unsupported_media_type') : new ApiError('unsupported_media_type', general);
}

/** The body's nesting: as read while it arrived, or (an inflated body) read now. */
function scannedDepth(req: Request, raw: Buffer): DepthScan {
  const read = (req as BodyState).chunks?.depth;
  if (read) return read;
  const scan = depthScan(MAX_DEPTH);
  scan.write(raw);
  return scan;
}

/** Reading and parsing at once, where nothing needs the bytes in between (the control API). */
export const jsonBody = (limit: string | number, options: JsonBodyOptions = {}): RequestHandler[] => [readBody(() => limit), parseJsonBody(options)];

/** The body must be a JSON object; routes that take no body accept none or an empty object. */
export function requireObjectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('bad_request', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

const isJson = (req: Request): boolean => Boolean(req.is(['application/json', 'application/*+json']));

/** The request says it sends a body (a length over 0, or chunks). */
export function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** A body that cannot be read: too large is 413 everywhere; an unknown encoding or charset 415 (400 on text endpoints). */
function bodyError(err: BodyParserError, limit: string | number, textEndpoint: boolean): ApiError {
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `The request body is larger than ${typeof limit === 'number' ? `${limit} bytes` : limit}.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return wrongContent(
        textEndpoint,
        'The request body must be a UTF-8 JSON object, sent without an unknown Content-Encoding.',
        'The request body must be UTF-8 JSON, sent without an unknown Content-Encoding.',
      );
    default:
      return new ApiError('bad_request', 'The request body cannot be read.');
  }
}

/**
 * Answers `body` as JSON, as `res.status(status).json(body)` does with this app's settings (no ETag, no
 * replacer or spaces): the same status, `Content-Type: application/json; charset=utf-8` and `Content-Length`,
 * and no body for HEAD (node drops it), without the steps the busiest answers (a task, a page of tasks) pay for
 * nothing. A conditional request goes the whole way: Express answers `If-None-Match: *` with a 304.
 */
export function sendJson(res: Response, body: unknown, status = 200): void {
  if (isConditional(res)) res.status(status).json(body);
  else writeJson(res, JSON.stringify(body), status);
}

/** `sendJson` of a body already serialized as `text` (`body` is what it says, for Express's own answer). */
export function sendJsonText(res: Response, text: string, body: unknown, status = 200): void {
  if (isConditional(res)) res.status(status).json(body);
  else writeJson(res, text, status);
}

const isConditional = (res: Response): boolean => res.req.headers['if-none-match'] !== undefined;

function writeJson(res: Response, text: string, status: number): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
