import type { ErrorRequestHandler, Request, Response } from 'express';
import { MOST_BODY_BYTES, recordedBody } from '../calls/index.ts';
import type { CallRecord, RecordedBody } from '../calls/index.ts';
import { hasBody, rawBodyOf } from './json-body.ts';
import { contextOf } from './request-context.ts';
import type { BodyNotes } from './request-context.ts';

/**
 * The bodies of a /v1 call, for its record, with `--record-content` only: nothing here runs without it (the
 * /v1 path then patches nothing and keeps no bytes). The answer's bytes are noted as they are written, the first
 * ones only; the request's are the bytes read for it, or, for a call refused before its body was read (401, 421),
 * read by `readUnreadBody` before the refusal goes out.
 */

/** Bytes kept of a body: the record's limit and the margin its secret masking looks past it. */
const KEPT_BYTES = MOST_BODY_BYTES + 1024;

const notesOf = (res: Response): BodyNotes | undefined => contextOf(res).callStart?.bodies;

/** Starts noting the answer's bytes: `res.write` and `res.end` of this response pass through `note`. */
export function noteBodies(res: Response): BodyNotes {
  const notes: BodyNotes = { sent: [], keptBytes: 0, sentBytes: 0 };
  res.write = writeNoting as Response['write'];
  res.end = endNoting as Response['end'];
  return notes;
}

type Chunk = string | Uint8Array | ((...args: unknown[]) => void) | undefined | null;

function note(res: Response, chunk: Chunk, encoding: unknown): void {
  const notes = notesOf(res);
  if (!notes || chunk === undefined || chunk === null || typeof chunk === 'function') return;
  const enc = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
  const length = typeof chunk === 'string' ? Buffer.byteLength(chunk, enc) : chunk.byteLength;
  if (notes.keptBytes < KEPT_BYTES) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, enc) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // A copy: the writer may reuse its buffer once the write is done.
    const kept = Buffer.from(bytes.subarray(0, KEPT_BYTES - notes.keptBytes));
    notes.sent.push(kept);
    notes.keptBytes += kept.length;
  }
  notes.sentBytes += length;
}

// One function for every response (they read it as `this`), calling node's own from the prototype.
function writeNoting(this: Response, chunk: Chunk, ...rest: unknown[]): boolean {
  note(this, chunk, rest[0]);
  return (Object.getPrototypeOf(this) as Response).write.call(this, chunk, ...(rest as [BufferEncoding])) as boolean;
}
function endNoting(this: Response, chunk?: Chunk, ...rest: unknown[]): Response {
  note(this, chunk, rest[0]);
  return (Object.getPrototypeOf(this) as Response).end.call(this, chunk, ...(rest as [BufferEncoding])) as Response;
}

/** The call's bodies as its record keeps them, so far (a record written mid-answer is written again at its end). */
export function bodiesOf(req: Request, res: Response, notes: BodyNotes): NonNullable<CallRecord['bodies']> {
  notes.request ??= requestBody(req, notes);
  const type = res.getHeader('content-type');
  const response =
    notes.sentBytes === 0 && !res.headersSent
      ? null
      : recordedBody({ head: Buffer.concat(notes.sent), size: notes.sentBytes, contentType: typeof type === 'string' ? type : null });
  return { request: notes.request, response };
}

function requestBody(req: Request, notes: BodyNotes): RecordedBody | null {
  const contentType = req.get('content-type') ?? null;
  const raw = rawBodyOf(req);
  if (raw !== undefined) return recordedBody({ head: raw.subarray(0, KEPT_BYTES), size: raw.length, contentType });
  if (notes.unread) return recordedBody({ ...notes.unread, contentType });
  if (!hasBody(req)) return null;
  // Refused as it was read (413 too large, a broken encoding): its beginning was not kept.
  return recordedBody({ head: Buffer.alloc(0), size: declaredLength(req), contentType, partial: true });
}

const declaredLength = (req: Request): number | null => {
  const length = Number(req.headers['content-length']);
  return Number.isSafeInteger(length) ? length : null;
};

/**
 * The last step of the /v1 router with `--record-content`: a request refused before its body was read (a bad
 * key, another host) has its body read now, its first bytes kept, then the refusal goes on to be answered. The
 * refusal waits for at most the bytes kept; the rest is left to node, which drains it after the answer.
 */
export const readUnreadBody: ErrorRequestHandler = (err, req, res, next) => {
  const notes = notesOf(res);
  if (!notes || rawBodyOf(req) !== undefined || req.readableDidRead || req.readableEnded || !hasBody(req)) {
    next(err);
    return;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  let done = false;
  const finish = (partial: boolean): void => {
    if (done) return;
    done = true;
    req.off('data', onData).off('end', onEnd).off('error', onEnd).off('close', onEnd);
    notes.unread = { head: Buffer.concat(chunks), size: partial ? declaredLength(req) : bytes, partial };
    next(err);
  };
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= KEPT_BYTES) finish(true);
  };
  const onEnd = (): void => finish(false);
  req.on('data', onData).on('end', onEnd).on('error', onEnd).on('close', onEnd);
};
