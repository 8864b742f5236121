import { request as httpRequest } from 'node:http';
import { createServer } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadResponseContract } from '../conformance/spec.ts';
import { machineNow } from '../clock/index.ts';
import { createChecker, deviationLine } from './checks.ts';
import type { Deviation, ExchangeTimes } from './checks.ts';
import { capture, exchangeOf, keep } from './exchange.ts';
import { HOP_BY_HOP } from './hop-by-hop.ts';
import type { EndedExchange } from './exchange.ts';

export interface ProxyOptions {
  /** The service to forward to: scheme, host and port (a path prefix is kept). */
  upstream: string;
  /** Where each deviation's line goes as it is found (default: stderr). */
  log?: (line: string) => void;
  /** Bytes of each body kept for checking (default 1 MB); a longer answer is checked on status and headers only. */
  captureLimit?: number;
  /**
   * Called once for each exchange after it has ended and been checked, off the client's path (the recorder).
   * What it throws is logged, never sent to a client.
   */
  onExchange?: (ended: EndedExchange) => void;
  /** The machine's time in ms (default Date.now): exchanges are stamped and timed with real time. */
  now?: () => number;
}

export interface Proxy {
  readonly upstream: string;
  /** Resolves with the proxy's own address. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
  /** Every deviation found so far, oldest first. */
  deviations(): Deviation[];
  /** How many exchanges have been checked so far (a report says how much its verdict rests on). */
  exchanges(): number;
  /** Resolves once the checks of every exchange that has ended are done. */
  settled(): Promise<void>;
}


function forwardable(rawHeaders: string[], skip: ReadonlySet<string>): [string, string][] {
  const named = new Set(skip);
  // Headers the Connection header names are hop-by-hop too.
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'connection') for (const n of (rawHeaders[i + 1] ?? '').split(',')) named.add(n.trim().toLowerCase());
  }
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (!named.has(name.toLowerCase())) out.push([name, rawHeaders[i + 1] ?? '']);
  }
  return out;
}

/** Groups raw header pairs the way node's writeHead takes them, keeping repeated headers (set-cookie) apart. */
function headerObject(pairs: [string, string][]): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

function answerJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/**
 * A forwarding proxy in front of a deployment: every `/v1` request goes to the upstream as the client sent it and
 * the answer comes back as the upstream sent it, byte for byte and as it arrives. A copy of both (capped) is
 * checked against the contract once the exchange has ended, so checking never delays the client.
 */
export function createProxy(options: ProxyOptions): Proxy {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') throw new Error(`the upstream must be an http or https address, not ${options.upstream}`);
  const upstreamBase = `${upstream.origin}${upstream.pathname.replace(/\/+$/, '')}`;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const cap = options.captureLimit ?? 1024 * 1024;
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  const found: Deviation[] = [];
  const pending = new Set<Promise<void>>();
  const now = options.now ?? machineNow;
  let checker: ((exchange: EndedExchange['exchange'], complete: boolean, times: ExchangeTimes) => Deviation[]) | null = null;
  let checked = 0;

  const check = (ended: () => EndedExchange): void => {
    // After the current I/O callback: the client's answer is already on its way.
    const job = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const exchange = ended();
      checker ??= createChecker(loadResponseContract(), upstreamBase);
      for (const deviation of checker(exchange.exchange, exchange.complete, exchange)) {
        found.push(deviation);
        log(deviationLine(deviation));
      }
      checked += 1;
      options.onExchange?.(exchange);
    }).catch((err: unknown) => log(`proxy: could not check an exchange: ${(err as Error).message}`)).finally(() => pending.delete(job));
    pending.add(job);
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const startedMs = now();
    let clientGone = false;
    let firstByteMs = startedMs;
    const sent = capture();
    const received = capture();
    const headers = forwardable(req.rawHeaders, new Set([...HOP_BY_HOP, 'host']));
    headers.push(['Host', upstream.host]);
    const out = send(`${upstreamBase}${path}`, { method, headers: headerObject(headers) });
    out.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      firstByteMs = now();
      answer.on('data', (chunk: Buffer) => keep(received, chunk, cap));
      // Registered before the pipe's own end handler, so the check is queued before the client sees the end.
      answer.on('end', () => {
        const endMs = now();
        check(() =>
          exchangeOf(
            { method, path, headers: req.headers, rawHeaders: req.rawHeaders, body: sent },
            { status, statusMessage: answer.statusMessage ?? '', rawHeaders: answer.rawHeaders, body: received },
            { upstream: upstreamBase, startedMs, firstByteMs, endMs },
          ),
        );
      });
      res.writeHead(status, answer.statusMessage, headerObject(forwardable(answer.rawHeaders, HOP_BY_HOP)));
      // Streams: the headers go now, each chunk as it comes (pipe writes through; nothing here buffers).
      res.flushHeaders();
      answer.pipe(res);
      // The upstream cut off mid-answer: the client's answer is cut off too, as a direct client's would be.
      answer.on('error', () => res.destroy());
    });
    out.on('error', (err) => {
      // The client went away and the request to the upstream was dropped with it: nothing failed upstream.
      if (clientGone) return;
      log(`proxy: ${method} ${path}: the upstream ${upstreamBase} did not answer (${err.message})`);
      if (!res.headersSent) {
        answerJson(res, 502, { error: { code: 'upstream_unreachable', message: `The proxy could not reach ${upstreamBase}: ${err.message}` } });
      } else {
        res.destroy();
      }
    });
    req.on('data', (chunk: Buffer) => keep(sent, chunk, cap));
    req.on('error', () => out.destroy());
    req.pipe(out);
    // A client that goes away mid-request or mid-stream: the upstream request goes too. (The answer's close, not
    // the request's: node closes a request once its body is read.)
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      out.destroy();
    });
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/v1' || path.startsWith('/v1/')) return forward(req, res);
    if (path === '/_emulator/proxy/deviations' && req.method === 'GET') {
      void Promise.all([...pending]).then(() => answerJson(res, 200, { data: found, count: found.length }));
      return;
    }
    answerJson(res, 404, {
      error: { code: 'not_found', message: `The proxy forwards /v1 requests to ${upstreamBase} and answers GET /_emulator/proxy/deviations; nothing else.` },
    });
  });

  return {
    upstream: upstreamBase,
    listen(port = 4011, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          resolve(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
        });
      });
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all([...pending]);
    },
    deviations: () => [...found],
    exchanges: () => checked,
    settled: async () => {
      await Promise.all([...pending]);
    },
  };
}
