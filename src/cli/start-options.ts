import { parseArgs } from 'node:util';
import type { EmulatorOptions } from '../emulator.ts';

export interface StartOptions extends EmulatorOptions {
  host: string;
  port: number;
}

export class UsageError extends Error {}

/** `--help` of a command: its text goes to stdout and the exit code is 0. */
export class HelpRequested extends UsageError {}

export const START_HELP = `Usage: svc-emulator start [options]

  --host HOST                  address to listen on (default 127.0.0.1; env SVC_EMULATOR_HOST)
  --port PORT                  port (default 4010; env SVC_EMULATOR_PORT)
  --db PATH                    JSON store file (default ./.svc-emulator/db.json; env SVC_EMULATOR_DB)
  --memory                     keep the store in memory only
  --clock real|manual          real follows wall time; manual stands still until /_emulator/clock/advance
  --speed N                    real clock only: run N times faster
  --admin-token T              control API token (env SVC_EMULATOR_ADMIN_TOKEN; default: random, printed)
  --allow-insecure-webhooks    accept http and internal callback addresses (local development, tests)
  --seed S                     repeatable ids and generated data
  --scenarios DIR              scenario files to load (default: the package's scenarios/; env SVC_EMULATOR_SCENARIOS)
  --public-url URL             address result files are served under (default: the listening address)
  --file-retention-hours N     how long uploaded and result files live (default 168)
  --webhook-timestamps real|virtual
                               webhook-timestamp from the wall clock (default) or the virtual clock
  --webhook-timeout-ms N       real time a callback receiver has to answer (default 10000)
  --record-content             keep prompts and outputs of text calls in their call records
`;

/** Flags, then environment variables, then defaults. */
export function parseStartOptions(argv: string[], env: NodeJS.ProcessEnv): StartOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      db: { type: 'string' },
      memory: { type: 'boolean' },
      clock: { type: 'string' },
      speed: { type: 'string' },
      'admin-token': { type: 'string' },
      'allow-insecure-webhooks': { type: 'boolean' },
      seed: { type: 'string' },
      scenarios: { type: 'string' },
      'public-url': { type: 'string' },
      'file-retention-hours': { type: 'string' },
      'webhook-timestamps': { type: 'string' },
      'webhook-timeout-ms': { type: 'string' },
      'record-content': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) throw new HelpRequested(START_HELP);
  const port = Number(values.port ?? env['SVC_EMULATOR_PORT'] ?? 4010);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0-65535, got ${values.port}`);
  const clock = values.clock ?? env['SVC_EMULATOR_CLOCK'] ?? 'real';
  if (clock !== 'real' && clock !== 'manual') throw new UsageError(`--clock must be real or manual, got ${clock}`);
  const speed = values.speed === undefined ? undefined : Number(values.speed);
  if (speed !== undefined && !(speed > 0)) throw new UsageError(`--speed must be a positive number, got ${values.speed}`);
  if (values.memory && values.db) throw new UsageError('--db and --memory exclude each other');
  const adminToken = values['admin-token'] ?? env['SVC_EMULATOR_ADMIN_TOKEN'];
  const retentionHours = values['file-retention-hours'] === undefined ? undefined : Number(values['file-retention-hours']);
  if (retentionHours !== undefined && !(retentionHours > 0)) {
    throw new UsageError(`--file-retention-hours must be a positive number, got ${values['file-retention-hours']}`);
  }
  const scenariosDir = values.scenarios ?? env['SVC_EMULATOR_SCENARIOS'];
  const webhookTimestamps = values['webhook-timestamps'];
  if (webhookTimestamps !== undefined && webhookTimestamps !== 'real' && webhookTimestamps !== 'virtual') {
    throw new UsageError(`--webhook-timestamps must be real or virtual, got ${webhookTimestamps}`);
  }
  const webhookTimeoutMs = values['webhook-timeout-ms'] === undefined ? undefined : Number(values['webhook-timeout-ms']);
  if (webhookTimeoutMs !== undefined && !(Number.isInteger(webhookTimeoutMs) && webhookTimeoutMs > 0)) {
    throw new UsageError(`--webhook-timeout-ms must be a positive whole number, got ${values['webhook-timeout-ms']}`);
  }
  const db = values.memory ? undefined : (values.db ?? env['SVC_EMULATOR_DB'] ?? './.svc-emulator/db.json');
  return {
    host: values.host ?? env['SVC_EMULATOR_HOST'] ?? '127.0.0.1',
    port,
    clock,
    allowInsecureWebhooks: values['allow-insecure-webhooks'] ?? false,
    ...(db !== undefined ? { db } : {}),
    ...(speed !== undefined ? { speed } : {}),
    ...(adminToken ? { adminToken } : {}),
    ...(values.seed !== undefined ? { seed: values.seed } : {}),
    ...(scenariosDir !== undefined ? { scenariosDir } : {}),
    ...(values['public-url'] !== undefined ? { publicUrl: values['public-url'].replace(/\/+$/, '') } : {}),
    ...(retentionHours !== undefined ? { fileRetentionSeconds: retentionHours * 3600 } : {}),
    ...(webhookTimestamps !== undefined ? { webhookTimestamps } : {}),
    ...(webhookTimeoutMs !== undefined ? { webhookTimeoutMs } : {}),
    recordContent: values['record-content'] ?? false,
  };
}
