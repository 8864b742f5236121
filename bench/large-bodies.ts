/**
 * Issue 36 item 5: what one client sending large text bodies costs every other client. A normal client reads a task
 * (`GET /v1/tasks/{id}`, one request at a time on one connection) alone, then while another connection keeps
 * posting 19 MB bodies to `POST /v1/chat/completions` (the text endpoints take 20 MB): nested `[[[…]]]` (refused
 * with 400 bad_request), then one 19 MB prompt string (a call that is answered). Its p99 in each, the ratio to its
 * p99 alone against the goal (nested: within 5x), and the emulator's peak RSS in each phase, read from
 * `/proc/<pid>/status`. The emulator runs in a process of its own; the bodies are built once, so sending one costs
 * this process a socket write.
 */
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { SECONDS } from './load.ts';
import { benchKey, emulatorCommand, json, startServer, stopServer } from './servers.ts';

/** Just under the text endpoints' 20 MB limit. */
const BODY_BYTES = 19 * 1024 * 1024;
/** The done-when: the normal client's p99 while nested bodies arrive is at most this many times its p99 alone. */
const GOAL_RATIO = 5;

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });

export interface PhaseFigures {
  name: string;
  p50Ms: number;
  p99Ms: number;
  /** The longest read: one read at a time samples a stall once, however long it is. */
  maxMs: number;
  reads: number;
  /** Large bodies answered during the phase, and their statuses. */
  bodies: number;
  statuses: string;
  peakRssMb: number;
}

export interface LargeBodyFigures {
  alone: PhaseFigures;
  nested: PhaseFigures;
  string: PhaseFigures;
}

function nestedBody(): Buffer {
  return Buffer.from('['.repeat(BODY_BYTES / 2) + ']'.repeat(BODY_BYTES / 2));
}

function stringBody(): Buffer {
  const head = '{"model":"svc-text-pro","max_tokens":16,"messages":[{"role":"user","content":"';
  const tail = '"}]}';
  const words = 'Summarise this long report, please. ';
  const fill = BODY_BYTES - head.length - tail.length;
  return Buffer.from(head + words.repeat(Math.ceil(fill / words.length)).slice(0, fill) + tail);
}

export async function largeBodies(): Promise<LargeBodyFigures> {
  const server = await startServer(emulatorCommand(['--memory']), '/_emulator/health');
  try {
    const key = await benchKey(server.base);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT });
    const read = new URL(`/v1/tasks/${String(task['id'])}`, server.base);
    const post = new URL('/v1/chat/completions', server.base);
    const pid = server.child.pid ?? 0;
    const ms = SECONDS * 1000;
    // Each phase after a second of the same, uncounted (the JIT warms up on the read and on the body's path), and
    // in this order, so that the RSS of the read alone is not what a string body's garbage left.
    const run = async (name: string, body: Buffer | null): Promise<PhaseFigures> => {
      const sender = body && { url: post, key, body };
      await phase('warm-up', pid, read, key, 1000, sender);
      return phase(name, pid, read, key, ms, sender);
    };
    const alone = await run('alone', null);
    const nested = await run('19 MB nested [[[…]]] bodies', nestedBody());
    const string = await run('19 MB prompt string bodies', stringBody());
    return { alone, nested, string };
  } finally {
    await stopServer(server);
  }
}

interface Sender {
  url: URL;
  key: string;
  body: Buffer;
}

/** The normal client reads for `ms` while the sender (if any) posts its body again and again on its own connection. */
async function phase(name: string, pid: number, read: URL, key: string, ms: number, sender: Sender | null): Promise<PhaseFigures> {
  const readAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sendAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  let peakRssMb = await rssMb(pid);
  const sampler = setInterval(() => {
    void rssMb(pid).then((mb) => (peakRssMb = Math.max(peakRssMb, mb)));
  }, 10);
  const statuses = new Map<number, number>();
  let stop = false;
  const sending = (async () => {
    while (sender && !stop) {
      const status = await send(sendAgent, sender);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  })();
  try {
    // The sender's first body is on its way before the first counted read.
    if (sender) await new Promise((resolve) => setTimeout(resolve, 50));
    const latencies: number[] = [];
    const end = performance.now() + ms;
    while (performance.now() < end) {
      const started = performance.now();
      const status = await get(readAgent, read, key);
      if (status !== 200) throw new Error(`GET ${read.pathname}: ${status}`);
      latencies.push(performance.now() - started);
    }
    stop = true;
    await sending;
    latencies.sort((a, b) => a - b);
    const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return {
      name,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: latencies.at(-1) ?? 0,
      reads: latencies.length,
      bodies: [...statuses.values()].reduce((a, b) => a + b, 0),
      statuses: [...statuses].map(([status, n]) => `${n} × ${status}`).join(', '),
      peakRssMb: Math.max(peakRssMb, await rssMb(pid)),
    };
  } finally {
    stop = true;
    clearInterval(sampler);
    readAgent.destroy();
    sendAgent.destroy();
  }
}

function get(agent: Agent, url: URL, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

function send(agent: Agent, sender: Sender): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${sender.key}`, 'Content-Type': 'application/json', 'Content-Length': String(sender.body.length) };
    const req = request(sender.url, { agent, method: 'POST', headers }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end(sender.body);
  });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export function printLargeBodies(f: LargeBodyFigures, line: (text: string) => void): void {
  line(`large bodies: a normal client's GET /v1/tasks/{id} (one at a time, one connection), ${SECONDS} s per phase`);
  for (const p of [f.alone, f.nested, f.string]) {
    const sent = p === f.alone ? '' : `; ${p.bodies} bodies answered (${p.statuses})`;
    line(
      `  ${p.name.padEnd(30)} p50 ${p.p50Ms.toFixed(2).padStart(6)} ms, p99 ${p.p99Ms.toFixed(2).padStart(6)} ms, ` +
        `max ${p.maxMs.toFixed(0).padStart(4)} ms (${String(p.reads).padStart(5)} reads); emulator peak RSS ${p.peakRssMb.toFixed(0)} MB${sent}`,
    );
  }
  const ratio = f.nested.p99Ms / f.alone.p99Ms;
  line(
    `  p99 while nested bodies arrive / p99 alone: ${ratio.toFixed(1)}x (goal: within ${GOAL_RATIO}x): ${ratio <= GOAL_RATIO ? 'met' : 'not met'}; ` +
      `while prompt strings arrive: ${(f.string.p99Ms / f.alone.p99Ms).toFixed(1)}x (for information)`,
  );
}
