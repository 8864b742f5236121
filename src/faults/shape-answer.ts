import type { ServerResponse } from 'node:http';
import type { RequestFault } from './types.ts';

/** The faults that change how an answer goes out once its handler writes it. */
export type AnswerFault = Extract<RequestFault, { kind: 'latency' | 'cut' | 'trickle' }>;

/** Slices a trickled answer goes out in per second: smooth enough for a client's read timeouts to see the rate. */
const TRICKLE_SLICES_PER_SECOND = 10;

/**
 * Paces what a handler (or a piped upstream answer) writes to `res`: a wait between an event stream's events, a
 * rate in bytes per second, or a cut after some events. Writes queue behind the pacing and report backpressure
 * (`write` returns false, `drain` follows), so a writer that waits for `drain` counts what really went out.
 * `wait` is real time: the wire is slow in real time whatever the emulator's clock does.
 */
export function shapeAnswer(res: ServerResponse, fault: AnswerFault, wait: (ms: number) => Promise<void>): void {
  const writeOut = res.write.bind(res) as (chunk: Buffer, done: () => void) => boolean;
  // The last write handed to the socket: a cut waits for it, or destroying the socket would drop it unsent.
  let flushed = Promise.resolve();
  const write = (chunk: Buffer): void => {
    flushed = new Promise((resolve) => writeOut(chunk, () => resolve()));
  };
  const end = res.end.bind(res) as () => ServerResponse;
  let chain = Promise.resolve();
  let queued = 0;
  let owesDrain = false;
  let events = 0;
  let partial = Buffer.alloc(0);
  let stopped = false;
  res.once('close', () => {
    stopped = true;
  });

  // writeHead(status, headers) may bypass the header map getHeader reads (node's fast path): its type is kept here.
  let contentType = '';
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const headers = args.find((a, i) => i > 0 && typeof a === 'object' && a !== null);
    contentType = typeOf(headers) ?? contentType;
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
  const isStream = (): boolean => (contentType || String(res.getHeader('content-type') ?? '')).startsWith('text/event-stream');

  /** The bytes of one write, in the order and with the waits they go out with. */
  async function send(bytes: Buffer): Promise<void> {
    if (fault.kind === 'trickle') {
      const slice = Math.max(1, Math.floor(fault.bytes_per_second / TRICKLE_SLICES_PER_SECOND));
      for (let at = 0; at < bytes.length && !stopped; at += slice) {
        const piece = bytes.subarray(at, at + slice);
        write(piece);
        await wait(Math.round((piece.length * 1000) / fault.bytes_per_second));
      }
      return;
    }
    if (!isStream()) {
      // Not a stream: a cut takes the body half-way, as a dropped connection would; latency between chunks has none.
      if (fault.kind === 'cut') {
        write(bytes.subarray(0, Math.floor(bytes.length / 2)));
        return await cutOff();
      }
      write(bytes);
      return;
    }
    for (const event of completeEvents(bytes)) {
      if (stopped) return;
      if (fault.kind === 'cut' && events >= fault.after_chunks) return await cutOff();
      if (fault.kind === 'latency' && events > 0) await wait(fault.ms);
      if (stopped) return;
      write(event);
      events += 1;
    }
  }

  /** Whole events: a stream's chunk may end inside one, whose rest comes with the next write. */
  function completeEvents(bytes: Buffer): Buffer[] {
    const all = Buffer.concat([partial, bytes]);
    const out: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < all.length - 1; i++) {
      const lf = all[i] === 0x0a && all[i + 1] === 0x0a;
      const crlf = all[i] === 0x0d && all[i + 1] === 0x0a && all[i + 2] === 0x0d && all[i + 3] === 0x0a;
      if (lf || crlf) {
        const after = i + (lf ? 2 : 4);
        out.push(all.subarray(start, after));
        start = after;
        i = after - 1;
      }
    }
    partial = all.subarray(start);
    return out;
  }

  async function cutOff(): Promise<void> {
    stopped = true;
    await flushed;
    res.destroy();
  }

  function enqueue(work: () => Promise<void>): void {
    queued += 1;
    chain = chain
      .then(() => (stopped ? undefined : work()))
      .catch(() => {
        stopped = true;
        res.destroy();
      })
      .finally(() => {
        queued -= 1;
        if (queued === 0 && owesDrain && !stopped) {
          owesDrain = false;
          res.emit('drain');
        }
      });
  }

  const toBuffer = (chunk: unknown, encoding?: unknown): Buffer =>
    Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, (typeof encoding === 'string' ? encoding : 'utf8') as BufferEncoding) : Buffer.from(chunk as Uint8Array);

  res.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const bytes = toBuffer(chunk, encoding);
    enqueue(() => send(bytes));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') enqueue(async () => (done as () => void)());
    owesDrain = true;
    return false;
  }) as ServerResponse['write'];

  res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
      const bytes = toBuffer(chunk, encoding);
      enqueue(() => send(bytes));
    }
    enqueue(async () => {
      if (partial.length > 0 && !stopped) write(partial);
      end();
    });
    const done = [chunk, encoding, callback].find((a) => typeof a === 'function');
    if (done) res.once('finish', done as () => void);
    return res;
  }) as ServerResponse['end'];
}

/** The content type among headers given to writeHead: an object, or a flat list of names and values. */
function typeOf(headers: unknown): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'content-type') return String(headers[i + 1]);
    return undefined;
  }
  if (headers && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'content-type') return String(value);
  }
  return undefined;
}
