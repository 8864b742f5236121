/** A request over real HTTP with a bearer token and a JSON body, and its whole answer. */

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text of any other answer (an event stream). */
  body: unknown;
}

/**
 * Sends one request and reads the whole answer; rejects when no whole answer came (the process died under it, or
 * 15 s went by), so a resolved reply is an answer the server finished.
 */
export async function sendJson(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('application/json');
  return { status: res.status, headers: res.headers, body: json ? (JSON.parse(text) as unknown) : text };
}
