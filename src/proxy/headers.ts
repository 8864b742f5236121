import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Raw header pairs less `skip` and the headers the Connection header names (hop-by-hop too). */
export function forwardable(rawHeaders: string[], skip: ReadonlySet<string>): [string, string][] {
  const named = new Set(skip);
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
export function headerObject(pairs: [string, string][]): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

/** An answer of the proxy's own. */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text);
}
