import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { createProxy } from '../../src/proxy/index.ts';
import type { Proxy, ProxyOptions } from '../../src/proxy/index.ts';

/** Something a test started and the file closes after it. */
export interface Closable {
  close(): Promise<void>;
}

/** A list for what each test starts (proxies, stand-in upstreams, children), closed in order after each test. */
export function closedAfterEach(): Closable[] {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const item of open.splice(0)) await item.close();
  });
  return open;
}

/**
 * A proxy in front of `upstream` on a free local port, its log lines collected in `lines`, closed with `closing`;
 * `options` adds to or overrides the defaults (an upstream timeout, a recorder).
 */
export async function startProxy(
  upstream: string,
  closing: Closable[],
  lines: string[] = [],
  options: Partial<ProxyOptions> = {},
): Promise<{ proxy: Proxy; url: string; lines: string[] }> {
  const proxy = createProxy({ upstream, log: (line) => lines.push(line), ...options });
  const url = await proxy.listen(0);
  closing.push(proxy);
  return { proxy, url, lines };
}

/** A stand-in upstream listening on a free local port, closed with `closing`: its address. */
export function listenLocal(server: Server, closing: Closable[]): Promise<string> {
  closing.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}
