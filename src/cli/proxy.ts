import { writeFileSync } from 'node:fs';
import { HelpRequested, parseCommandArgs, UsageError } from './args.ts';
import { PROXY_HELP } from './help.ts';

export interface ProxyCommandOptions {
  upstream: string;
  port: number;
  host: string;
  json: string | null;
}

export function parseProxyOptions(argv: string[]): ProxyCommandOptions {
  const { values } = parseCommandArgs('proxy', argv, {
    upstream: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) throw new HelpRequested(PROXY_HELP);
  if (values.upstream === undefined) throw new UsageError(`svc-emulator proxy: --upstream URL is required\n\n${PROXY_HELP}`);
  let upstream: URL;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new UsageError(`svc-emulator proxy: --upstream ${values.upstream}: not an address (http://host:port or https://host)`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') {
    throw new UsageError(`svc-emulator proxy: --upstream ${values.upstream}: must start with http:// or https://`);
  }
  const port = values.port === undefined ? 4011 : values.port.trim() === '' ? NaN : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`svc-emulator proxy: --port ${values.port ?? ''}: must be 0-65535`);
  return { upstream: values.upstream, port, host: values.host ?? '127.0.0.1', json: values.json ?? null };
}

/** `svc-emulator proxy`: runs until SIGINT or SIGTERM, then writes the report (with --json) and exits 0. */
export async function proxy(options: ProxyCommandOptions): Promise<void> {
  const { createProxy } = await import('../proxy/index.ts');
  const server = createProxy({ upstream: options.upstream });
  const url = await server.listen(options.port, options.host);
  console.log(`proxy listening on ${url} → ${server.upstream}`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void server.close().then(() => {
      const deviations = server.deviations();
      if (options.json !== null) writeFileSync(options.json, `${JSON.stringify({ upstream: server.upstream, count: deviations.length, data: deviations }, null, 2)}\n`);
      console.log(`proxy stopped: ${deviations.length} deviation${deviations.length === 1 ? '' : 's'}${options.json !== null ? ` (written to ${options.json})` : ''}`);
      process.exit(0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
