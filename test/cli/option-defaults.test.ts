import { expect, it } from 'vitest';
import { FLAGS, parseStartOptions, START_HELP } from '../../src/cli/start-options.ts';
import type { StartOptions } from '../../src/cli/start-options.ts';
import { DEFAULT_SERVER_LIMITS, resolveLimits } from '../../src/server/index.ts';
import { DEFAULT_DELIVERY_RETENTION_MS, DEFAULT_SEND_CONCURRENCY } from '../../src/webhooks/index.ts';

// Every start option once (issue 38, item 7): each default is a value in the option table, the help states it
// from there, and `start` with nothing given runs with it. This proves the help and the resolved options agree,
// option by option, and that the emulator's own in-process defaults are the same values.

/** Where each option with a default lands in the resolved options, in the table's units (the limits as the emulator resolves them). */
const RESOLVED: Record<string, (options: StartOptions) => unknown> = {
  host: (o) => o.host,
  port: (o) => o.port,
  db: (o) => o.db,
  clock: (o) => o.clock,
  speed: (o) => o.speed,
  'file-retention-hours': (o) => (o.fileRetentionSeconds ?? NaN) / 3600,
  'delivery-retention-hours': (o) => (o.deliveryRetentionSeconds ?? NaN) / 3600,
  'webhook-timestamps': (o) => o.webhookTimestamps,
  'webhook-timeout-ms': (o) => o.webhookTimeoutMs,
  'webhook-concurrency': (o) => o.webhookConcurrency,
  'max-header-bytes': (o) => resolveLimits(o.limits).maxHeaderBytes,
  'max-text-body-bytes': (o) => o.textBodyLimit,
  'headers-timeout-ms': (o) => resolveLimits(o.limits).headersTimeoutMs,
  'request-timeout-ms': (o) => resolveLimits(o.limits).requestTimeoutMs,
  'keep-alive-timeout-ms': (o) => resolveLimits(o.limits).keepAliveTimeoutMs,
  'shutdown-grace-ms': (o) => o.shutdownGraceMs,
  'text-answers': (o) => o.textAnswers,
  'log-level': (o) => o.logLevel,
  'log-format': (o) => o.logFormat,
};

/** The `(default …)` of a flag's help line. */
function helpDefault(name: string): string | undefined {
  const from = START_HELP.indexOf(`  --${name} `) >= 0 ? START_HELP.indexOf(`  --${name} `) : START_HELP.indexOf(`  --${name}\n`);
  const line = START_HELP.slice(from).split(`; SVC_EMULATOR_`)[0] ?? '';
  return /\(default (.*)\)$/s.exec(line)?.[1]?.replace(/\s+/g, ' ');
}

const withDefault = FLAGS.filter((flag) => flag.default !== undefined);

it('knows where every defaulted option resolves to', () => {
  expect(withDefault.map((flag) => flag.name).sort()).toEqual(Object.keys(RESOLVED).sort());
});

it.each(withDefault.map((flag) => [flag.name, flag] as const))('--%s: nothing given resolves to the default the help states', (name, flag) => {
  const resolved = RESOLVED[name]?.(parseStartOptions([], {}));
  expect(resolved).toBe(flag.default);
  expect(helpDefault(name)).toBe(flag.shown ? flag.shown(resolved as string | number) : String(resolved));
});

it('states the defaults it has always stated', () => {
  expect(helpDefault('port')).toBe('4010');
  expect(helpDefault('max-text-body-bytes')).toBe('20971520 (20 MB)');
  expect(helpDefault('headers-timeout-ms')).toBe('60000, at most the request timeout');
  expect(helpDefault('shutdown-grace-ms')).toBe('10000');
  expect(helpDefault('admin-token')).toBe('random, printed');
});

it('applies in-process the same defaults as the table', () => {
  const table = (name: string): unknown => FLAGS.find((flag) => flag.name === name)?.default;
  expect(DEFAULT_SERVER_LIMITS).toMatchObject({
    maxHeaderBytes: table('max-header-bytes'),
    headersTimeoutMs: table('headers-timeout-ms'),
    requestTimeoutMs: table('request-timeout-ms'),
    keepAliveTimeoutMs: table('keep-alive-timeout-ms'),
  });
  expect(DEFAULT_SEND_CONCURRENCY).toBe(table('webhook-concurrency'));
  expect(DEFAULT_DELIVERY_RETENTION_MS).toBe(Number(table('delivery-retention-hours')) * 3600 * 1000);
});
