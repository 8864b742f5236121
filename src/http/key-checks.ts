import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors/index.ts';
import { canonicalRequest, nonceExpiry, requestSignature, signaturesMatch, SIGNATURE_TOLERANCE_SECONDS } from '../keys/index.ts';
import type { NoncesRepo } from '../keys/index.ts';
import { keyOf } from './api-key.ts';
import type { AppDeps } from './context.ts';
import { rawBodyOf } from './json-body.ts';

/**
 * Per-key settings, checked in the documented order around body parsing: signing (over the raw bytes), then
 * the per-minute rate, then (once the body is parsed) the callable models. Quota, points and concurrency come
 * last, where the work is admitted (src/keys/admission.ts).
 * @see reference "Authentication" 2-3
 */
export function requestSigning(deps: Pick<AppDeps, 'clock' | 'db' | 'log'>): RequestHandler {
  return (req, res, next) => {
    const secret = keyOf(res).settings?.signing_secret;
    if (!secret) return next();
    const timestamp = req.get('x-svc-timestamp');
    const nonce = req.get('x-svc-nonce');
    const signature = req.get('x-svc-signature');
    if (!timestamp || !nonce || !signature) throw new ApiError('signature_required');
    if (!/^\d{1,12}$/.test(timestamp)) throw new ApiError('signature_invalid', 'X-Svc-Timestamp must be Unix seconds.');
    const nowSeconds = deps.clock.wallNow() / 1000;
    if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) throw new ApiError('signature_expired');
    if (!/^[\x21-\x7e]{8,64}$/.test(nonce)) {
      throw new ApiError('signature_invalid', 'X-Svc-Nonce must be 8 to 64 visible characters.');
    }
    const expected = requestSignature(secret, canonicalRequest(timestamp, nonce, req.method, req.originalUrl, rawBodyOf(req) ?? ''));
    if (!signaturesMatch(signature, expected)) throw new ApiError('signature_invalid');
    // Kept in the store as long as the timestamp could still pass, so a replay inside the tolerance is refused,
    // after a restart too.
    const { nonces } = deps.db;
    if (!nonces.claim(keyOf(res).key, nonce, nonceExpiry(Number(timestamp)), deps.clock.wallNow())) throw new ApiError('nonce_reused');
    savedBeforeAnswer(nonces, res, deps.log);
    next();
  };
}

/**
 * The answer of a signed request leaves only once its nonce is stored. A request that wrote something stored it
 * with its write; one that wrote nothing (a `GET`, a refusal) commits it here, as its head is written (node
 * writes every answer's head through `writeHead`). Should that commit fail (a full disk), the answer still goes:
 * the request changed nothing, and its nonce is written by the next commit.
 */
function savedBeforeAnswer(nonces: NoncesRepo, res: Response, log: (message: string) => void): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    if (nonces.unsaved) {
      try {
        nonces.save();
      } catch (err) {
        log(`a signed request's nonce could not be stored before its answer: ${String(err)}`);
      }
    }
    return (writeHead as (...args: unknown[]) => Response).apply(this, args);
  } as Response['writeHead'];
}

/** Requests per minute on the virtual clock; every request past signing counts, GET of a task included. */
export function rateLimit(deps: Pick<AppDeps, 'clock' | 'rateLimiter'>): RequestHandler {
  return (_req, res, next) => {
    const key = keyOf(res);
    const rpm = key.settings?.rpm;
    if (rpm === null || rpm === undefined) return next();
    const taken = deps.rateLimiter.take(key.key, rpm, deps.clock.now());
    if (!taken.ok) {
      throw new ApiError('rate_limited', `More than ${rpm} requests in a minute for this key.`, undefined, {
        'Retry-After': String(taken.retryAfterSeconds),
      });
    }
    next();
  };
}

/** 403 permission_denied for a model outside the key's list (the body's `model`, where it has one). */
export const modelPermission: RequestHandler = (req: Request, res: Response, next) => {
  const models = keyOf(res).settings?.models;
  const body: unknown = req.body;
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  if (models && typeof model === 'string' && !models.includes(model)) {
    throw new ApiError('permission_denied', `This key may call ${models.join(', ')}; not '${model}'.`);
  }
  next();
};
