import { request as httpRequest } from 'node:http';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PriceRule } from '../points/index.ts';
import { loadResponseContract } from '../conformance/index.ts';
import type { ResponseContract } from '../conformance/index.ts';
import { createContract } from '../contract/index.ts';
import { machineNow } from '../clock/index.ts';
import { HOP_BY_HOP } from '../wire/index.ts';
import type { FaultRules } from '../faults/index.ts';
import { createRandom, ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { accountOf, keyOf } from './account.ts';
import { createAccountIds } from './account-ids.ts';
import { createCallbackDeadlines } from './callback-deadlines.ts';
import { signingSecrets } from './account-secrets.ts';
import { callbackDeviations, deviationLine, exchangeDeviations, overdueDeviations, timeoutDeviation } from './checks.ts';
import type { Deviation } from './checks.ts';
import type { Relayed } from './deliveries.ts';
import { controlTime, knownTime } from './deployment-time.ts';
import { capture, exchangeOf, keep } from './exchange.ts';
import type { EndedExchange, Injected } from '../wire/index.ts';
import { answerJson, forwardable, headerObject } from './headers.ts';
import { throughFaults } from './faults.ts';
import { createHistories } from './histories.ts';
import type { HistoryMemory } from './histories.ts';
import { CALLBACK_PATH, createRelay } from './relay.ts';
import type { RelayOptions } from './relay.ts';
import { relayRoutes } from './relay-routes.ts';
import type { ReadRequest } from './relay-routes.ts';
import { answerUpstreamFailure, UPSTREAM_FAILURES, UpstreamTimeout } from './upstream-failure.ts';
import { DEFAULT_CALLBACK_DEADLINE_MS, DEFAULT_UPSTREAM_TIMEOUT_MS, MAX_UPSTREAM_TIMEOUT_MS } from '../defaults/index.ts';

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
  /**
   * The deployment's time in ms (default: `now`, as a real deployment keeps real time), for the rules that compare
   * when a client read or received something with the times the service wrote (started_at, created_at,
   * webhook-timestamp). An emulator whose clock is moved by hand is read through its own clock, or through `admin`.
   */
  deploymentNow?: () => number;
  /**
   * An emulator's control API (`--admin-url`, `--admin-token`). Its clock (GET /_emulator/clock) is read for the
   * deployment's time, in place of `deploymentNow`: when an exchange arrives (before it goes on) and when its
   * answer comes, and when a callback comes. Relaying callbacks without `webhookSecret`, each is checked with the
   * secrets of the account whose key submitted the task.
   */
  admin?: { url: string; token: string };
  /**
   * Real ms the upstream has, from the request's arrival, to send its status line (default 60000; 0: no limit).
   * Then the proxy gives up on it, answers 504 `upstream_timeout` and reports `wire.upstream.timeout`. An answer
   * whose headers have come is never cut, however long its stream pauses.
   */
  upstreamTimeoutMs?: number;
  /** Request ids of the proxy's own answers (default: a random source of its own). */
  random?: Random;
  /**
   * Relay task callbacks (`--relay-callbacks`): each submission's `webhook_url` is replaced by an address of the
   * proxy's, whose callbacks are checked and passed on unchanged to the original. Without it, no body changes.
   */
  relay?: RelayOptions;
  /** How much of each account's history the shared checker judges, and how many accounts are followed. */
  historyMemory?: HistoryMemory;
  /**
   * Faults to inject (`--faults FILE`): an error or a reset is the proxy's own answer and never reaches the
   * service; latency, a cut and a trickle shape the service's answer, whose recording is marked.
   */
  faults?: FaultRules;
  /** Resolves after `ms` of real time (default: a timer); the pace of injected latency and trickles. */
  wait?: (ms: number) => Promise<void>;
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
  /** The fault rules in force, with their counts; empty without `faults`. */
  faults(): ReturnType<FaultRules['list']>;
}

/** Real ms each request to the control API has (a reading of the clock holds a request back until it is done). */
const CONTROL_TIMEOUT_MS = 5000;

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
  const admin = options.admin ?? null;
  const time = admin ? controlTime(admin, { timeoutMs: CONTROL_TIMEOUT_MS, wallNow: now, log }) : knownTime(options.deploymentNow ?? now);
  const random = options.random ?? createRandom();
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_UPSTREAM_TIMEOUT_MS) {
    throw new Error(`the upstream timeout must be a whole number of ms, 0-${MAX_UPSTREAM_TIMEOUT_MS} (0: no limit), not ${timeoutMs}`);
  }
  let contract: ResponseContract | null = null;
  let prices: Record<string, PriceRule> | null = null;
  // The price rules of the task models, as the document states them, for the shared checker's points rules.
  // Which keys are other accounts': the control API says, or the service shows it (a 404 for another key's task).
  const accountIds = createAccountIds(admin, CONTROL_TIMEOUT_MS);
  const histories = createHistories(() => ({ prices: (prices ??= Object.fromEntries([...createContract().taskModels.values()].map((m) => [m.id, m.pricing]))) }), options.historyMemory, accountIds);
  const relay = options.relay ? createRelay(options.relay) : null;
  const windowMs = options.relay?.callbackDeadlineMs ?? DEFAULT_CALLBACK_DEADLINE_MS;
  if (!Number.isInteger(windowMs) || windowMs < 0) throw new Error(`the callback deadline must be a whole number of ms, not ${windowMs}`);
  // A relayed task's callback, once a read showed the task terminal, within the window of the deployment's clock.
  const deadlines = relay ? createCallbackDeadlines({ windowMs, graceMs: options.relay?.callbackGraceMs ?? 1000 }) : null;
  /** The proxy's address as the service reaches it: given, or known once it listens. */
  let ownBase: string | null = options.relay?.publicUrl ?? null;
  let checked = 0;

  /** What the checks found: listed, and logged as found. */
  const list = (deviations: Deviation[]): void => {
    for (const deviation of deviations) {
      found.push(deviation);
      log(deviationLine(deviation));
    }
  };
  /** What the checks of one exchange found; the exchange counts as checked. */
  const report = (deviations: Deviation[]): void => {
    list(deviations);
    checked += 1;
  };

  /** Runs `work` after the current I/O callback, off the client's path; `settled()` waits for it. */
  const later = (what: string, work: () => void | Promise<void>): void => {
    const job = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((err: unknown) => log(`proxy: could not check ${what}: ${(err as Error).message}`))
      .finally(() => pending.delete(job));
    pending.add(job);
  };

  /**
   * Checks one exchange once it has ended. `stamps`: the deployment's time at the request's arrival and at the
   * answer's headers (the service read what it answered before it began the answer: the headers bound the read).
   */
  const check = (
    ended: () => EndedExchange,
    from: { account: string | null; key: string | null; relayed: boolean },
    stamps: { sentMs: number | Promise<number>; receivedMs: number | Promise<number> },
  ): void =>
    later('an exchange', async () => {
      const exchange = ended();
      contract ??= loadResponseContract();
      const { account, key } = from;
      const timed = { exchange: exchange.exchange, sentMs: await stamps.sentMs, receivedMs: await stamps.receivedMs };
      if (account !== null && key !== null) await accountIds.learn(account, key);
      const across = exchange.complete && account !== null ? histories.exchange(account, timed) : [];
      report(exchangeDeviations(contract, upstreamBase, exchange.exchange, exchange.complete, across));
      if (deadlines && exchange.complete) {
        deadlines.exchange(exchange.exchange, from.relayed, timed.receivedMs, now());
        list(overdueDeviations(deadlines.overdue(timed.receivedMs, now()), upstreamBase, windowMs));
      }
      options.onExchange?.(exchange);
    });

  const judgeCallback = (delivery: Promise<Relayed>): void =>
    later('a callback', async () => {
      const relayed = await delivery;
      list(callbackDeviations(histories.callback(relayed.target.account, relayed.observation), relayed.exchange, relayed.target.original));
      if (deadlines) list(overdueDeviations(deadlines.overdue(relayed.observation.receivedMs, now()), upstreamBase, windowMs));
    });

  /**
   * Passes one request on; `read`: its body, already read whole (a submission the relay may have changed). It goes
   * once the deployment's time at its arrival is known (at once, unless it is read through the control API).
   */
  const forward = (req: IncomingMessage, res: ServerResponse, read?: ReadRequest, injected: Injected | null = null): void => {
    const startedMs = read?.startedMs ?? now();
    const sentMs = read?.sentMs ?? time.before();
    if (typeof sentMs === 'number') return pass(req, res, read, startedMs, sentMs, injected);
    // A client gone meanwhile takes its request with it, as it does once the request has gone on.
    void sentMs.then((at) => (res.destroyed ? undefined : pass(req, res, read, startedMs, at, injected)));
  };

  /** `forward` once `sentMs`, the deployment's time at the request's arrival, is known. */
  const pass = (req: IncomingMessage, res: ServerResponse, read: ReadRequest | undefined, startedMs: number, sentMs: number, injected: Injected | null): void => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const account = accountOf(req.headers);
    const key = keyOf(req.headers);
    let clientGone = false;
    // No status line came in time and the client has the proxy's answer: what the upstream request does next is moot.
    let gaveUp = false;
    let firstByteMs = startedMs;
    const sent = capture();
    const received = capture();
    // A body read ahead goes on with its own length (the relay may have changed it); a request without one, without.
    const sized = read !== undefined && (read.body.length > 0 || req.headers['content-length'] !== undefined);
    const headers = forwardable(req.rawHeaders, new Set([...HOP_BY_HOP, 'host', ...(read ? ['content-length'] : [])]));
    headers.push(['Host', upstream.host]);
    if (read && sized) headers.push(['Content-Length', String(read.body.length)]);
    const out = send(`${upstreamBase}${path}`, { method, headers: headerObject(headers) });
    // A timer of real time, not the injected clock's: the proxy stands in front of a real service.
    // Counted from the request's arrival, a submission read whole before it went on included.
    const timer = timeoutMs > 0 ? setTimeout(() => out.destroy(new UpstreamTimeout(timeoutMs)), Math.max(1, timeoutMs - (now() - startedMs))) : undefined;
    out.on('response', (answer) => {
      clearTimeout(timer);
      const status = answer.statusCode ?? 502;
      firstByteMs = now();
      const receivedMs = time.after();
      answer.on('data', (chunk: Buffer) => keep(received, chunk, cap));
      // Registered before the pipe's own end handler, so the check is queued before the client sees the end.
      answer.on('end', () => {
        const endMs = now();
        check(
          () => ({
            ...exchangeOf(
              { method, path, headers: req.headers, rawHeaders: req.rawHeaders, body: sent },
              { status, statusMessage: answer.statusMessage ?? '', rawHeaders: answer.rawHeaders, body: received },
              { upstream: upstreamBase, startedMs, firstByteMs, endMs },
            ),
            ...(injected ? { injected } : {}),
          }),
          { account, key, relayed: read?.relayed === true },
          { sentMs, receivedMs },
        );
      });
      res.writeHead(status, answer.statusMessage, headerObject(forwardable(answer.rawHeaders, HOP_BY_HOP)));
      // Streams: the headers go now, each chunk as it comes (pipe writes through; nothing here buffers).
      res.flushHeaders();
      answer.pipe(res);
      // The upstream cut off mid-answer: the client's answer is cut off too, as a direct client's would be.
      answer.on('error', () => res.destroy());
    });
    /**
     * No status line in time: the proxy answers 504 itself and reports the upstream, at once (there is no answer to
     * wait for). Not passed to `onExchange`: the answer is the proxy's, not the service's, so it is not recorded.
     */
    const timedOut = (timeout: UpstreamTimeout): void => {
      gaveUp = true;
      const requestId = ids.requestId(random);
      const endMs = now();
      const ended = exchangeOf(
        { method, path, headers: req.headers, rawHeaders: req.rawHeaders, body: sent },
        { status: UPSTREAM_FAILURES.upstream_timeout, statusMessage: '', rawHeaders: ['X-Request-Id', requestId], body: capture() },
        { upstream: upstreamBase, startedMs, firstByteMs: endMs, endMs },
      );
      // Listed before the client hears of it: a client that asks for the deviations next finds it.
      report(timeoutDeviation(ended.exchange, upstreamBase, timeout));
      answerUpstreamFailure(res, path, 'upstream_timeout', `The proxy had no answer from ${upstreamBase} within ${timeout.timeoutMs} ms.`, requestId);
    };
    out.on('error', (err) => {
      clearTimeout(timer);
      // The client went away and the request to the upstream was dropped with it: nothing failed upstream. Or the
      // proxy gave up on the upstream and has answered already.
      if (clientGone || gaveUp) return;
      if (err instanceof UpstreamTimeout) return timedOut(err);
      log(`proxy: ${method} ${path}: the upstream ${upstreamBase} did not answer (${err.message})`);
      if (!res.headersSent) {
        answerUpstreamFailure(res, path, 'upstream_unreachable', `The proxy could not reach ${upstreamBase}: ${err.message}`, ids.requestId(random));
      } else {
        res.destroy();
      }
    });
    if (read) {
      keep(sent, read.sent, cap);
      out.end(read.body);
    } else {
      req.on('data', (chunk: Buffer) => keep(sent, chunk, cap));
      req.on('error', () => out.destroy());
      req.pipe(out);
    }
    // A client that goes away mid-request or mid-stream: the upstream request goes too. (The answer's close, not
    // the request's: node closes a request once its body is read.)
    res.on('close', () => {
      clearTimeout(timer);
      if (res.writableFinished) return;
      clientGone = true;
      out.destroy();
    });
  };

  const routes = relay
    ? relayRoutes(relay, {
        ownBase: () => ownBase,
        forward,
        now,
        time,
        signing: signingSecrets({ webhookSecret: options.relay?.webhookSecret, admin, timeoutMs: CONTROL_TIMEOUT_MS, wallNow: now, log }),
        log,
        relayed: judgeCallback,
        ...(deadlines ? { arrived: (body: Buffer) => deadlines.arrived(body) } : {}),
      })
    : null;

  const faults = options.faults ?? null;
  const wait = options.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  /** A `/v1` request on its way: the relay's submission route, or straight on. */
  const route = (req: IncomingMessage, res: ServerResponse, path: string, read?: ReadRequest, injected: Injected | null = null): void => {
    if (routes && req.method === 'POST' && path === '/v1/tasks') return routes.submit(req, res, read, injected);
    return forward(req, res, read, injected);
  };

  /**
   * Lists the relayed callbacks overdue now on the deployment's clock. At a stop (`last`), a task that is overdue
   * but was seen terminal less than the grace ago gets the rest of its grace first: the proxy still takes callbacks.
   */
  const lookForOverdue = async (last: boolean): Promise<void> => {
    if (!deadlines) return;
    await Promise.all([...pending]);
    const at = await Promise.resolve()
      .then(() => time.after())
      .catch(() => null);
    if (at === null) return log("proxy: the deployment's time could not be read: callbacks not yet come are not judged");
    const left = last ? deadlines.graceLeft(at, now()) : 0;
    if (left > 0) {
      await new Promise((resolve) => setTimeout(resolve, left));
      await Promise.all([...pending]);
    }
    list(overdueDeviations(deadlines.overdue(at, now()), upstreamBase, windowMs));
    const waiting = last ? deadlines.waiting() : 0;
    if (waiting > 0) log(`proxy: stopped with ${waiting} relayed task(s) seen terminal and still within their callback's window (${windowMs} ms of the deployment's clock): not judged`);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/v1' || path.startsWith('/v1/')) {
      // Without rules nothing is read ahead: the request streams on as it comes.
      if (faults === null || faults.empty) return route(req, res, path);
      return throughFaults({ rules: faults, random, now, time, wait }, req, res, (read, injected) => route(req, res, path, read, injected));
    }
    if (path === '/_emulator/proxy/faults' && req.method === 'GET') return answerJson(res, 200, { data: faults?.list() ?? [] });
    if (routes && path.startsWith(CALLBACK_PATH)) return routes.deliver(req, res, path.slice(CALLBACK_PATH.length));
    if (path === '/_emulator/proxy/deviations' && req.method === 'GET') {
      // Callbacks overdue by now are among them.
      void lookForOverdue(false).then(() => answerJson(res, 200, { data: found, count: found.length }));
      return;
    }
    answerJson(res, 404, {
      error: {
        code: 'not_found',
        message: `The proxy forwards /v1 requests to ${upstreamBase}${routes ? `, relays callbacks under ${CALLBACK_PATH}` : ''} and answers GET /_emulator/proxy/deviations; nothing else.`,
      },
    });
  });

  return {
    upstream: upstreamBase,
    async listen(port = 4011, host = '127.0.0.1') {
      // The deployment's clock read a first time (or said to be unreadable) before the first client comes.
      await time.ready();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
          ownBase ??= url;
          resolve(url);
        });
      });
    },
    async close() {
      // The last look for callbacks that never came, while the proxy still takes them.
      await lookForOverdue(true);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all([...pending]);
    },
    deviations: () => [...found],
    faults: () => faults?.list() ?? [],
    exchanges: () => checked,
    settled: async () => {
      await Promise.all([...pending]);
    },
  };
}
