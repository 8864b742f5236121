import { createServer } from 'node:http';
import { leaveWithLauncher } from './launcher.ts';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HelpRequested, parseCommandArgs, UsageError } from './args.ts';
import { RECEIVE_HELP } from './help.ts';


export interface ReceiveOptions {
  secret: string;
  port: number;
  host: string;
  failFirst: number;
  delayMs: number;
}

export function parseReceiveOptions(argv: string[], env: NodeJS.ProcessEnv): ReceiveOptions {
  const { values } = parseCommandArgs('receive', argv, {
    secret: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'fail-first': { type: 'string' },
    'delay-ms': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) throw new HelpRequested(RECEIVE_HELP);
  const secret = values.secret ?? env['SVC_EMULATOR_WEBHOOK_SECRET'];
  if (secret === undefined) throw new UsageError(`svc-emulator receive: --secret whsec_... is required (or SVC_EMULATOR_WEBHOOK_SECRET)\n\n${RECEIVE_HELP}`);
  // The secret itself stays out of the message: it may sit in a terminal's scrollback or a CI log.
  const secretWhere = values.secret !== undefined ? '--secret' : 'SVC_EMULATOR_WEBHOOK_SECRET';
  if (!secret.startsWith('whsec_')) throw new UsageError(`svc-emulator receive: ${secretWhere}: must start with whsec_ (the account's signing secret)`);
  const number = (name: 'port' | 'fail-first' | 'delay-ms', fallback: number, max = Infinity): number => {
    const value = values[name];
    if (value === undefined) return fallback;
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isInteger(n) || n < 0 || n > max) {
      throw new UsageError(`svc-emulator receive: --${name} ${value === '' ? '""' : value}: must be ${max === Infinity ? 'a whole number, 0 or more' : `0-${max}`}`);
    }
    return n;
  };
  return {
    secret,
    port: number('port', 4020, 65535),
    host: values.host ?? '127.0.0.1',
    failFirst: number('fail-first', 0),
    delayMs: number('delay-ms', 0),
  };
}

const WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/**
 * Starts the receiver; resolves with its server and address. Each request prints one line:
 * `accepted|failing|duplicate|rejected|health|effects <webhook-id> <type> <task id> <detail>` (`health`: a plain GET;
 * `effects`: `GET /effects?task_id=T`, answering `{"count": N}`, how many times it acted on the task).
 */
export async function startReceiving(options: ReceiveOptions, print: (line: string) => void): Promise<{ server: Server; url: string }> {
  const verifier = new Webhook(options.secret);
  const attempts = new Map<string, number>();
  const delivered = new Set<string>();
  // How many times it acted on each task (a message handled once, whatever its attempts): its effects hook,
  // `GET /effects?task_id=T`, which `receiver-check --effects-url` asks after sending a duplicate.
  const acted = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '-');
      const answer = (status: number, word: string, detail: string, event?: { type?: string; data?: { id?: string } }): void => {
        print(`${word} ${id} ${event?.type ?? '-'} ${event?.data?.id ?? '-'} ${detail}`);
        setTimeout(() => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(word), options.delayMs);
      };
      // A plain GET with none of the webhook headers is a script asking whether the receiver is up (the recipes'
      // wait loops), not a delivery: answered 200 and logged as such, never as a rejected delivery.
      const plain = req.method === 'GET' && !WEBHOOK_HEADERS.some((name) => name in req.headers);
      const effects = plain ? /^\/effects\?task_id=([^&]+)$/.exec(req.url ?? '') : null;
      if (effects) {
        const task = decodeURIComponent(effects[1] ?? '');
        print(`effects - - ${task} acted on ${acted.get(task) ?? 0} time(s)`);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ count: acted.get(task) ?? 0 }));
        return;
      }
      if (plain) return answer(200, 'health', `${req.url ?? '/'} answered, the receiver is up`);
      let event: { type?: string; data?: { id?: string } };
      try {
        event = verifier.verify(raw, req.headers as Record<string, string>) as typeof event;
      } catch (err) {
        answer(401, 'rejected', (err as Error).message);
        return;
      }
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      if (attempt <= options.failFirst) return answer(500, 'failing', `attempt ${attempt} (told to fail the first ${options.failFirst})`, event);
      if (delivered.has(id)) return answer(200, 'duplicate', `attempt ${attempt}, already handled`, event);
      delivered.add(id);
      const task = event.data?.id;
      if (task) acted.set(task, (acted.get(task) ?? 0) + 1);
      answer(200, 'accepted', `attempt ${attempt}`, event);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${options.host}:${port}/` };
}

/** `svc-emulator receive`: runs until a signal. */
export async function receive(options: ReceiveOptions): Promise<void> {
  const { server, url } = await startReceiving(options, (line) => console.log(line));
  console.log(`svc-emulator receiver listening on ${url}`);
  const stop = (): void => void server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  leaveWithLauncher(stop);
}
