import type { Request } from 'express';
import { bodyDigester } from '../verdict/index.ts';
import type { BodyDigester } from '../verdict/index.ts';
import { depthScan } from './json-scan.ts';
import type { DepthScan } from './json-scan.ts';

/**
 * What is worked out of a body's bytes while they arrive, a read from the socket at a time (64 KB), rather than
 * over the whole body once it is in: over 20 MB, the work done at once kept every other client waiting (a nesting
 * scan 30 ms, a SHA-256 20 ms). Only a body sent as it is (no Content-Encoding): the chunks of a compressed one
 * are not its text, which is worked on whole once inflated.
 */
export interface BodyChunks {
  /** The nesting of a JSON body. */
  depth: DepthScan | undefined;
  /** The client log's digest of the body. */
  digest: BodyDigester;
  /** Whether every byte of `body` went through the scan and the digest (else they are worked out of it whole). */
  covered(body: Buffer): boolean;
  /** No more chunks to read: the body is in, or was refused (and what followed drained). */
  stop(): void;
}

/** Past this much of a body, its reading yields to other connections after every chunk. */
const YIELD_AFTER_BYTES = 64 * 1024;

/** Starts reading `req`'s chunks beside the reader that keeps them; undefined for a compressed body. */
export function readChunks(req: Request, options: { json: boolean; maxDepth: number }): BodyChunks | undefined {
  const encoding = req.headers['content-encoding']?.toLowerCase() ?? 'identity';
  if (encoding !== 'identity') return undefined;
  const depth = options.json ? depthScan(options.maxDepth) : undefined;
  const digest = bodyDigester();
  let scanning = depth !== undefined;
  let bytes = 0;
  let stopped = false;
  const onChunk = (chunk: Buffer): void => {
    bytes += chunk.length;
    digest.update(chunk);
    if (scanning) scanning = depth?.write(chunk) === true;
    // Node reads a socket up to 32 times (2 MB) before it looks at another: the chunks of one large body, each
    // worked on here, would keep every other request waiting for milliseconds at a time. A pause until the other
    // connections have had their turn (setImmediate runs after the poll for them) lets one read through at a time.
    if (bytes > YIELD_AFTER_BYTES && !stopped) {
      req.pause();
      setImmediate(() => {
        if (!stopped) req.resume();
      });
    }
  };
  req.on('data', onChunk);
  return {
    depth,
    digest,
    covered: (body) => body.length === bytes,
    stop: () => {
      stopped = true;
      req.off('data', onChunk);
    },
  };
}
