import { CANONICAL_BODY_BYTES, jsonDigest } from './log.ts';
import { isSubmit } from './requests.ts';
import type { ClientRequest } from './types.ts';

/** What a request is, as the verdict tells one request from another. */
export type RequestIdentity = Pick<ClientRequest, 'bodyDigest' | 'steering'>;

/** A request as it arrived: where it went, its body's bytes, and the names the emulator steers by. */
export interface SentRequest {
  method: string;
  path: string;
  body: Buffer | undefined;
  /** The X-Emulator-Scenario header as sent, if it was. */
  header: string | undefined;
  /** The metadata key a submit names its scenario with (`emulator_scenario`). */
  metadataKey: string;
  /** The body's digest as the log works it out for any body (it may have been hashed while the body arrived). */
  digest: () => string;
}

/**
 * The body's digest and the test's steering, apart. The verdict pairs requests ("sent again", "retried") by what
 * the client sent: a client's retry, its own or an SDK's, sends the body again byte for byte, whereas other headers
 * change between attempts (the SDKs' retry count, a signature's timestamp, a trace id); so a request is its body,
 * not its headers. Steering is the exception both ways: the scenario header and a submit's metadata
 * `emulator_scenario` are the test's instructions to the emulator, which no client changes between two attempts of
 * one request. Two requests that differ in them are two steps of the test, never a retry, so they are part of what
 * a request is; and they are kept out of the body's digest so that a request that differs from an earlier one
 * only in its steering (the test steering the same call anew) can be told apart from one that differs in what the
 * client sent. A body over 64 KB is not parsed (as for any digest): its digest keeps the metadata as sent, which
 * still tells requests apart, and only that recognition is lost for it.
 */
export function requestIdentity(sent: SentRequest): RequestIdentity {
  const parsed = isSubmit(sent) ? submitSteering(sent.body, sent.metadataKey) : null;
  const bodyDigest = parsed?.digest ?? sent.digest();
  const named = parsed?.named;
  const steering =
    sent.header === undefined && named === undefined ? null : JSON.stringify({ header: sent.header ?? null, ...(named === undefined ? {} : { metadata: named }) });
  return { bodyDigest, steering };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A submit body's digest without its metadata's scenario (and without a `metadata` left empty by that: the same
 * body sent without metadata is the same request), and the scenario it named; null for a body the digest does not
 * parse. Parsed here once, the digest costs no second parse.
 */
function submitSteering(body: Buffer | undefined, key: string): { digest: string; named: unknown } | null {
  if (body === undefined || body.length === 0 || body.length > CANONICAL_BODY_BYTES) return null;
  // Not JSON, or nested too deep to sort (a body may be anything): the digest of the bytes, as bodyDigest gives.
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (!isObject(value) || !isObject(value['metadata']) || !Object.hasOwn(value['metadata'], key)) return { digest: jsonDigest(value), named: undefined };
    const { [key]: named, ...metadata } = value['metadata'];
    const { metadata: _steered, ...rest } = value;
    return { digest: jsonDigest(Object.keys(metadata).length > 0 ? { ...rest, metadata } : rest), named };
  } catch {
    return null;
  }
}
