/**
 * 200 concurrent streamed chat calls of 500 tokens each with no configured latency: time to the first byte of
 * each stream and total time for all of them. The emulator runs in another process; this is the client side.
 *
 * The client is node:http, each call on a connection of its own: on two cores the client shares the machine with
 * the emulator, and `fetch` (undici) spent so much starting 200 calls at once that against a server answering
 * at once its first bytes came 50-130 ms late (node:http: 25-50 ms); the figures were the client's. A first round
 * of the same calls is not counted (the JIT and the emulator's request validator warm up, as the load runs'
 * warm-up does for them).
 */
import { Agent, request } from 'node:http';

export interface StreamFigures {
  streams: number;
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  totalMs: number;
  tokens: number;
}

const BODY = JSON.stringify({
  model: 'svc-text-pro',
  messages: [{ role: 'user', content: 'Write five hundred tokens.' }],
  max_tokens: 600,
  stream: true,
});

/** One stream as the emulator sends it, every byte of its body: the bare SSE baseline sends the same. */
export async function recordStream(base: string, key: string): Promise<string> {
  const res = await fetch(new URL('/v1/chat/completions', base), {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'text-long' },
    body: BODY,
  });
  if (res.status !== 200) throw new Error(`stream: ${res.status}`);
  return res.text();
}

export async function concurrentStreams(base: string, key: string, streams = 200): Promise<StreamFigures> {
  await round(base, key, streams);
  return round(base, key, streams);
}

async function round(base: string, key: string, streams: number): Promise<StreamFigures> {
  const url = new URL('/v1/chat/completions', base);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const headers = {
    Authorization: `Bearer ${key}`,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(BODY)),
    'X-Emulator-Scenario': 'text-long',
  };
  const started = performance.now();
  try {
    const results = await Promise.all(Array.from({ length: streams }, () => oneStream(url, agent, headers)));
    const totalMs = performance.now() - started;
    const ttfbs = results.map((r) => r.ttfb).sort((a, b) => a - b);
    const at = (q: number): number => ttfbs[Math.min(ttfbs.length - 1, Math.floor(q * ttfbs.length))] ?? 0;
    return { streams, ttfbP50Ms: at(0.5), ttfbP99Ms: at(0.99), totalMs, tokens: results.reduce((n, r) => n + r.tokens, 0) };
  } finally {
    agent.destroy();
  }
}

function oneStream(url: URL, agent: Agent, headers: Record<string, string>): Promise<{ ttfb: number; tokens: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`stream: ${res.statusCode}`));
        return;
      }
      let ttfb = 0;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (ttfb === 0) ttfb = performance.now() - t0;
        text += chunk;
      });
      res.once('end', () => {
        if (!text.trimEnd().endsWith('data: [DONE]')) reject(new Error('stream did not end with [DONE]'));
        else resolve({ ttfb, tokens: (text.match(/"content":"/g) ?? []).length - 1 });
      });
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(BODY);
  });
}
