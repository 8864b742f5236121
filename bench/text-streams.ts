/**
 * 200 concurrent streamed chat calls of 500 tokens each with no configured latency: time to the first byte of
 * each stream and total time for all of them. The emulator runs in another process; this is the client side.
 */
export interface StreamFigures {
  streams: number;
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  totalMs: number;
  tokens: number;
}

export async function concurrentStreams(base: string, key: string, streams = 200): Promise<StreamFigures> {
  const body = JSON.stringify({
    model: 'svc-text-pro',
    messages: [{ role: 'user', content: 'Write five hundred tokens.' }],
    max_tokens: 600,
    stream: true,
  });
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'text-long' };
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: streams }, async () => {
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers, body });
      if (res.status !== 200 || !res.body) throw new Error(`stream: ${res.status}`);
      let ttfb = 0;
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        if (ttfb === 0) ttfb = performance.now() - t0;
        text += decoder.decode(chunk as Uint8Array, { stream: true });
      }
      if (!text.trimEnd().endsWith('data: [DONE]')) throw new Error('stream did not end with [DONE]');
      return { ttfb, tokens: (text.match(/"content":"/g) ?? []).length - 1 };
    }),
  );
  const totalMs = performance.now() - started;
  const ttfbs = results.map((r) => r.ttfb).sort((a, b) => a - b);
  const at = (q: number): number => ttfbs[Math.min(ttfbs.length - 1, Math.floor(q * ttfbs.length))] ?? 0;
  return { streams, ttfbP50Ms: at(0.5), ttfbP99Ms: at(0.99), totalMs, tokens: results.reduce((n, r) => n + r.tokens, 0) };
}
