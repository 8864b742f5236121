import type { Response } from 'express';
import { SCENARIO_HEADER, SCENARIO_METADATA_KEY } from '../scenarios/index.ts';
import { bodyDigest, requestIdentity } from '../verdict/index.ts';
import type { RequestIdentity, RequestLater, SentRequest } from '../verdict/index.ts';
import { keySent } from './api-key.ts';
import type { AppDeps } from './context.ts';
import { bodyDigestOf, rawBodyOf } from './json-body.ts';
import { contextOf } from './request-context.ts';

/**
 * Notes a /v1 request in the client log once it is over, for the verdict: what the client sent (its key as sent,
 * so a refused key is judged too; its body's digest, and apart from it the scenario the test steered it to; its
 * Idempotency-Key) and what it got: the status, or `reset` when the answer never finished (the emulator cut the
 * connection, or the client gave up and left; from here the two look alike, and a client treats both as a request
 * without an answer). Only requests that began on the store of this run: a reset starts a new log.
 */
export function noteClientRequest(deps: Pick<AppDeps, 'db' | 'clientLog'>, res: Response): void {
  const context = contextOf(res);
  const start = context.callStart;
  if (!start || deps.db.store.epoch !== start.epoch) return;
  const { req } = res;
  const finished = res.writableFinished;
  const status = res.statusCode;
  const url = req.originalUrl;
  const query = url.indexOf('?');
  const retryAfter = status === 429 && finished ? Number(res.getHeader('retry-after')) : NaN;
  const idempotencyKey = req.headers['idempotency-key'];
  const path = query === -1 ? url : url.slice(0, query);
  const body = rawBodyOf(req);
  // A small body is kept (a copy: the request's bytes may share a larger buffer) and its identity worked out
  // when a verdict first reads it; a submit's digest parses and sorts its body, a tenth of a submit's time on a
  // path where nobody asks for it yet. A larger one is digested now, as it was hashed while it arrived; no
  // body costs nothing to tell.
  const later = body !== undefined && body.length > 0 && body.length <= KEPT_BODY_BYTES;
  const kept = later ? Buffer.from(body) : body;
  const sent: SentRequest = {
    method: req.method,
    path,
    body: kept,
    header: req.get(SCENARIO_HEADER),
    metadataKey: SCENARIO_METADATA_KEY,
    digest: later ? digestOfKept(kept) : () => bodyDigestOf(req),
  };
  const entry: RequestLater = {
    requestId: context.requestId,
    atMs: context.startedWall,
    key: keySent(res.req) ?? null,
    account: context.account?.id ?? null,
    method: req.method,
    path,
    bodyDigest: '',
    steering: null,
    idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : null,
    outcome: finished ? status : 'reset',
    errorCode: status >= 400 ? (context.call?.error_code ?? context.errorCode ?? null) : null,
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : null,
    taskId: context.task?.id ?? context.call?.task_id ?? null,
    taskStatus: context.task?.status ?? null,
    identity: undefined,
  };
  if (later) entry.identity = identityOf(sent);
  else Object.assign(entry, requestIdentity(sent));
  deps.clientLog.request(entry);
}

// Made here, not in noteClientRequest: a closure made beside one that reads the request shares its scope, and
// would keep the request (and its socket) for as long as the log keeps the entry.
const identityOf = (sent: SentRequest) => (): RequestIdentity => requestIdentity(sent);
const digestOfKept = (kept: Buffer | undefined) => (): string => bodyDigest(kept);

/** Bodies up to this size are kept with their entry and digested when a verdict reads them (the log's 20,000 entries at most: 20 MB). */
const KEPT_BODY_BYTES = 1024;
