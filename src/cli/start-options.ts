import { existsSync, readFileSync, statSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { HelpRequested, parseCommandArgs, suggestion, UsageError } from './args.ts';
import { parseYaml } from '../contract/index.ts';
import { DEFAULT_DB, START_DEFAULTS } from '../defaults/index.ts';
import type { EmulatorOptions } from '../emulator/index.ts';
import { budgetText, connectionBudget, openFileLimit, resolveLimits } from '../server/index.ts';
import type { ConnectionBudget, ServerLimits } from '../server/index.ts';

export interface StartOptions extends EmulatorOptions {
  host: string;
  port: number;
  logLevel: LogLevel;
  logFormat: 'pretty' | 'json';
  /** The connection cap in force (also in `limits`), where it came from, and what to warn about at start. */
  connections: { max: number; given: string | null; budget: ConnectionBudget; warnings: string[] };
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/**
 * `count`: a whole number above 0; `whole`: a whole number, 0 included (a timeout of 0 is none); `path`: a file
 * or folder that exists; `file`: a file that exists; `hosts`: host names without ports, separated by commas (a
 * list in the config file), or `*`.
 */
type Kind = 'string' | 'boolean' | 'port' | 'positive' | 'count' | 'whole' | 'path' | 'file' | 'hosts' | { oneOf: readonly string[] };

export interface Flag {
  name: string;
  kind: Kind;
  /** Shown in --help after the flag. */
  value?: string;
  help: string;
  /**
   * The value when none is given, as `check` would return it: the help states it and parseStartOptions resolves
   * it, so the two cannot disagree. From START_DEFAULTS when the emulator applies it in-process too.
   */
  default?: string | number;
  /** How the help states the default, when the value alone does not say it all (derived from the value). */
  shown?: (value: string | number) => string;
  /** What not giving an option without a default value means, as the help states it. */
  unset?: string;
}

/** Where `start` kept its store (DEFAULT_DB) before it moved to SQLite: imported once, on the first start after the move. */
const JOURNAL_DEFAULT_DB = './.svc-emulator/db.json';

/** The default connection cap of this process, as the help states it (with the default callback concurrency). */
const HELP_BUDGET = connectionBudget(openFileLimit(), START_DEFAULTS.webhookConcurrency);

/** Short, for the table's rows. */
const D = START_DEFAULTS;

/**
 * Every start option, once: its flag, its environment variable (SVC_EMULATOR_ + the name in capitals), its
 * config-file key (the flag's name), its check, its default and its help line. Flags beat the environment, which
 * beats the config file, which beats the defaults.
 */
export const FLAGS: readonly Flag[] = [
  { name: 'config', kind: 'string', value: 'FILE', help: 'a JSON or YAML file of these options (keys as the flags)' },
  { name: 'host', kind: 'string', value: 'HOST', help: 'address to listen on', default: D.host },
  { name: 'allowed-hosts', kind: 'hosts', value: 'A,B', help: "names a request's Host may give besides localhost, 127.0.0.1, [::1] and the listening address (others: 421; * any); needed with --host 0.0.0.0 or ::", unset: 'none' },
  { name: 'port', kind: 'port', value: 'PORT', help: 'port (0 picks a free one)', default: D.port },
  { name: 'db', kind: 'string', value: 'PATH', help: 'store file (SQLite; one emulator at a time)', default: DEFAULT_DB },
  { name: 'memory', kind: 'boolean', help: 'keep the store in memory only' },
  { name: 'store-sync', kind: 'boolean', help: 'wait for the disk on every commit (survives power loss, slower)' },
  { name: 'import', kind: 'file', value: 'FILE', help: 'start from a state document (replaces what the store holds)' },
  { name: 'export-on-exit', kind: 'string', value: 'FILE', help: 'write the state document to FILE when the emulator stops' },
  { name: 'clock', kind: { oneOf: ['real', 'manual'] }, value: 'real|manual', help: 'real follows wall time; manual stands still until advanced', default: D.clock },
  { name: 'speed', kind: 'positive', value: 'N', help: 'real clock only: run N times faster', default: D.speed },
  { name: 'admin-token', kind: 'string', value: 'T', help: 'control API token', unset: 'random, printed' },
  { name: 'allow-insecure-webhooks', kind: 'boolean', help: 'accept http and internal callback addresses (local development, tests)' },
  { name: 'seed', kind: 'string', value: 'S', help: 'repeatable ids and generated data' },
  { name: 'scenarios', kind: 'path', value: 'DIR|FILE', help: "scenario files added to the package's (a name in use replaces that scenario)", unset: 'none' },
  { name: 'faults', kind: 'file', value: 'FILE', help: 'fault rules in force from the start until removed or reset (YAML or JSON: the body of POST /_emulator/faults)', unset: 'none' },
  { name: 'public-url', kind: 'string', value: 'URL', help: 'address result files are served under', unset: 'the listening address' },
  { name: 'file-retention-hours', kind: 'positive', value: 'N', help: 'how long uploaded and result files live', default: D.fileRetentionHours },
  { name: 'delivery-retention-hours', kind: 'positive', value: 'N', help: 'how long finished callback messages stay listed and resendable', default: D.deliveryRetentionHours },
  { name: 'webhook-timestamps', kind: { oneOf: ['real', 'virtual'] }, value: 'real|virtual', help: 'webhook-timestamp from the wall clock or the virtual clock', default: D.webhookTimestamps },
  { name: 'webhook-timeout-ms', kind: 'count', value: 'N', help: 'real time a callback receiver has to answer', default: D.webhookTimeoutMs },
  { name: 'webhook-concurrency', kind: 'count', value: 'N', help: 'callback sends in flight at once, at most (the rest wait their turn)', default: D.webhookConcurrency },
  { name: 'max-header-bytes', kind: 'count', value: 'N', help: 'request line and headers at most (431 over it)', default: D.maxHeaderBytes },
  { name: 'max-text-body-bytes', kind: 'count', value: 'N', help: 'a text call\'s JSON body at most, images included (413 over it)', default: D.maxTextBodyBytes, shown: (bytes) => `${bytes} (${Number(bytes) / 1024 / 1024} MB)` },
  { name: 'headers-timeout-ms', kind: 'whole', value: 'N', help: 'real time to send the headers (408 after, or closed unanswered if nothing came; 0 none)', default: D.headersTimeoutMs, shown: (ms) => `${ms}, at most the request timeout` },
  { name: 'request-timeout-ms', kind: 'whole', value: 'N', help: 'real time to send a whole request (408 after; 0 none); answers are not limited', default: D.requestTimeoutMs },
  { name: 'keep-alive-timeout-ms', kind: 'whole', value: 'N', help: 'real time an idle kept-alive connection stays open (0 no limit)', default: D.keepAliveTimeoutMs },
  { name: 'max-connections', kind: 'count', value: 'N', help: 'open connections at most; at the cap the longest-idle one is closed for a new one, which is refused only while all are busy (with a warning)', unset: `${HELP_BUDGET.cap} here: ${budgetText(HELP_BUDGET)}` },
  { name: 'shutdown-grace-ms', kind: 'whole', value: 'N', help: 'on SIGTERM/SIGINT, real time requests in flight get before being cut', default: D.shutdownGraceMs },
  { name: 'text-answers', kind: { oneOf: ['generate', 'strict'] }, value: 'generate|strict', help: 'a text call no scenario answers: a generated answer, or strict: 422 no_matching_answer', default: D.textAnswers },
  { name: 'record-content', kind: 'boolean', help: "keep every /v1 call's request and answer bodies (first 64 KiB each, secrets masked), text calls' prompts and outputs included, in their call records" },
  { name: 'log-level', kind: { oneOf: ['debug', 'info', 'warn', 'error', 'silent'] }, value: 'LEVEL', help: 'debug|info|warn|error|silent (info logs one line per request)', default: D.logLevel },
  { name: 'log-format', kind: { oneOf: ['pretty', 'json'] }, value: 'pretty|json', help: 'log lines for people or one JSON object per line', default: D.logFormat },
];

const envName = (flag: string): string => `SVC_EMULATOR_${flag.replaceAll('-', '_').toUpperCase()}`;

/** The default as the help states it. */
const defaultOf = (flag: Flag): string | undefined =>
  flag.default === undefined ? flag.unset : flag.shown ? flag.shown(flag.default) : String(flag.default);

export const START_HELP = `Usage: svc-emulator start [options]

Each option is also the environment variable SVC_EMULATOR_<NAME> (SVC_EMULATOR_LOG_LEVEL=debug) and a key of
the --config file ({"port": 4011, "log-format": "json"}); flags win over the environment, the environment over
the file.

${FLAGS.map((f) => {
  const left = `  --${f.name}${f.value ? ` ${f.value}` : ''}`;
  const fallback = defaultOf(f);
  const right = `${f.help}${fallback ? ` (default ${fallback})` : ''}; ${envName(f.name)}`;
  return left.length < 31 ? `${left.padEnd(31)}${right}` : `${left}\n${' '.repeat(31)}${right}`;
}).join('\n')}
`;

/**
 * An option's value and where it came from, as a message names it: `--port abc`, `SVC_EMULATOR_PORT=abc`, or
 * `port in ./emu.yaml` (a file's value is quoted after the problem: `must be 0-65535, got abc`).
 */
interface Given {
  value: string | boolean;
  where: string;
  /** Appended to a problem with the value: the file's label does not show it. */
  got: string;
}

const shown = (value: string): string => (value === '' || /\s/.test(value) ? JSON.stringify(value) : value);

/** A start option the user must fix, in one line naming where the value came from. */
const problem = (given: Given, text: string): UsageError => new UsageError(`svc-emulator start: ${given.where}: ${text}${given.got}`);

/** Flags, then environment variables, then the config file, then defaults. */
export function parseStartOptions(argv: string[], env: NodeJS.ProcessEnv): StartOptions {
  const { values: parsed } = parseCommandArgs('start', argv, {
    ...Object.fromEntries(FLAGS.map((f) => [f.name, { type: f.kind === 'boolean' ? ('boolean' as const) : ('string' as const) }])),
    help: { type: 'boolean', short: 'h' },
  });
  const values = parsed as Record<string, string | boolean | undefined>;
  if (values['help']) throw new HelpRequested(START_HELP);
  const config = values['config'] ?? env[envName('config')];
  const configWhere = values['config'] !== undefined ? `--config ${shown(String(config))}` : `${envName('config')}=${shown(String(config))}`;
  const file = typeof config === 'string' ? readConfig(config, configWhere) : {};
  const given = (name: string): Given | undefined => {
    const flag = values[name];
    if (flag !== undefined) return { value: flag, where: typeof flag === 'boolean' ? `--${name}` : `--${name} ${shown(flag)}`, got: '' };
    const fromEnv = env[envName(name)];
    if (fromEnv !== undefined) return { value: fromEnv, where: `${envName(name)}=${shown(fromEnv)}`, got: '' };
    const fromFile = file[name];
    if (fromFile === undefined || fromFile === null) return undefined;
    const value = typeof fromFile === 'boolean' ? fromFile : typeof fromFile === 'object' ? JSON.stringify(fromFile) : String(fromFile);
    return { value, where: `${name} in ${config}`, got: `, got ${typeof value === 'string' ? shown(value) : value}` };
  };
  /** The value given, checked; else the table's default, if the option has one. */
  const get = (name: string): string | boolean | number | undefined => {
    const flag = FLAGS.find((f) => f.name === name);
    if (!flag) return undefined;
    const value = given(name);
    return value === undefined ? flag.default : check(flag, value);
  };
  if (values['memory'] && values['db'] !== undefined) throw new UsageError(`svc-emulator start: --db ${shown(String(values['db']))} and --memory exclude each other`);
  const port = get('port') as number;
  const db = get('memory') ? undefined : (get('db') as string);
  const optional = <T>(name: string, key: keyof StartOptions, map: (v: never) => T = (v) => v as T): Partial<StartOptions> => {
    const value = get(name);
    return value === undefined ? {} : { [key]: map(value as never) };
  };
  const { limits, connections } = limitsOf(get, given);
  const host = get('host') as string;
  return {
    host,
    allowedHosts: allowedHostsOf(host, get('allowed-hosts') as string | undefined, given),
    port,
    clock: get('clock') as 'real' | 'manual',
    allowInsecureWebhooks: (get('allow-insecure-webhooks') as boolean | undefined) ?? false,
    recordContent: (get('record-content') as boolean | undefined) ?? false,
    logLevel: get('log-level') as LogLevel,
    logFormat: get('log-format') as 'pretty' | 'json',
    ...(db !== undefined ? { db } : {}),
    ...(db === DEFAULT_DB ? { journalStore: JOURNAL_DEFAULT_DB } : {}),
    ...optional('import', 'importState'),
    ...optional('export-on-exit', 'exportOnExit'),
    ...optional('speed', 'speed'),
    ...optional('admin-token', 'adminToken'),
    ...optional('seed', 'seed'),
    ...optional('scenarios', 'scenariosDir'),
    ...optional('faults', 'faults'),
    ...optional('public-url', 'publicUrl', (v: string) => v.replace(/\/+$/, '')),
    ...optional('max-text-body-bytes', 'textBodyLimit'),
    ...optional('file-retention-hours', 'fileRetentionSeconds', (v: number) => v * 3600),
    ...optional('delivery-retention-hours', 'deliveryRetentionSeconds', (v: number) => v * 3600),
    ...optional('store-sync', 'storeSync'),
    ...optional('webhook-timestamps', 'webhookTimestamps'),
    ...optional('webhook-timeout-ms', 'webhookTimeoutMs'),
    ...optional('webhook-concurrency', 'webhookConcurrency'),
    ...optional('shutdown-grace-ms', 'shutdownGraceMs'),
    ...optional('text-answers', 'textAnswers'),
    limits,
    connections,
  };
}

/** Every address: `0.0.0.0`, `::` (and their other spellings), or no host at all. */
const isEveryAddress = (host: string): boolean => host === '' || (ipaddr.isValid(host) && ipaddr.parse(host).range() === 'unspecified');

/**
 * The host names answered besides the loopback ones (src/http/host-check.ts): those given, and `--host` when it
 * is a name (the name the user serves the emulator under). A --host of every address needs them given: clients
 * there address it by names the emulator cannot know, and answering any would leave the guard off unasked.
 */
function allowedHostsOf(host: string, allowed: string | undefined, given: (name: string) => Given | undefined): string[] {
  if (allowed === undefined && isEveryAddress(host)) {
    const where = given('host')?.where ?? `--host ${shown(host)}`;
    throw new UsageError(
      `svc-emulator start: ${where} listens on every address: name the hosts clients address it by with --allowed-hosts ` +
        `(emulator,192.168.1.20), or --allowed-hosts '*' to answer any (no guard against DNS rebinding)`,
    );
  }
  const names = allowed === undefined || allowed === '' ? [] : allowed.split(',');
  return isEveryAddress(host) || ipaddr.isValid(host) || names.includes(host.toLowerCase()) ? names : [...names, host.toLowerCase()];
}

/**
 * The server limits given (the emulator fills in the rest with resolveLimits, from the same defaults), and the
 * connection cap in force: the one given, else one below the open-file limit (see `connectionBudget`). The headers
 * are part of the request, so their timeouts must agree.
 */
function limitsOf(
  get: (name: string) => unknown,
  given: (name: string) => Given | undefined,
): { limits: Partial<ServerLimits>; connections: StartOptions['connections'] } {
  const limits: Partial<ServerLimits> = {};
  // Only those given: the headers timeout's default depends on the request timeout (resolveLimits applies it).
  const set = (name: string, key: keyof ServerLimits): void => {
    if (given(name) !== undefined) limits[key] = get(name) as number;
  };
  set('max-header-bytes', 'maxHeaderBytes');
  set('headers-timeout-ms', 'headersTimeoutMs');
  set('request-timeout-ms', 'requestTimeoutMs');
  set('keep-alive-timeout-ms', 'keepAliveTimeoutMs');
  set('max-connections', 'maxConnections');
  try {
    resolveLimits(limits);
  } catch (err) {
    const named = ['headers-timeout-ms', 'request-timeout-ms'].flatMap((name) => given(name)?.where ?? []);
    throw new UsageError(`svc-emulator start: ${named.join(' and ')}: ${(err as Error).message}`);
  }
  const budget = connectionBudget(openFileLimit(), get('webhook-concurrency') as number);
  const cap = given('max-connections');
  const warnings: string[] = [];
  if (cap && budget.openFiles !== null && (limits.maxConnections ?? 0) > budget.cap) {
    warnings.push(
      `${cap.where}: above the ${budget.cap} connections the open-file limit leaves room for (${budgetText(budget)}); ` +
        `past that, new clients may be reset with nothing logged. Raise ulimit -n, or lower the cap`,
    );
  }
  limits.maxConnections ??= budget.cap;
  return { limits, connections: { max: limits.maxConnections, given: cap?.where ?? null, budget, warnings } };
}

function check(flag: Flag, given: Given): string | boolean | number {
  const { kind } = flag;
  const { value } = given;
  if (kind === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no', ''].includes(value)) return false;
    throw problem(given, 'must be on or off (true, false, 1, 0, yes or no)');
  }
  const text = String(value);
  if (kind === 'string') return text;
  if (kind === 'hosts') return hostList(given, text);
  if (kind === 'path') {
    if (!existsSync(text)) throw problem(given, 'no such file or folder');
    return text;
  }
  if (kind === 'file') {
    if (!existsSync(text)) throw problem(given, 'no such file');
    if (statSync(text).isDirectory()) throw problem(given, 'a folder, not a file');
    return text;
  }
  if (typeof kind === 'object') {
    if (!kind.oneOf.includes(text)) throw problem(given, `must be ${kind.oneOf.join(' or ')}`);
    return text;
  }
  const n = text.trim() === '' ? NaN : Number(text);
  if (kind === 'port' && !(Number.isInteger(n) && n >= 0 && n <= 65535)) throw problem(given, 'must be 0-65535');
  if (kind === 'positive' && !(n > 0)) throw problem(given, 'must be a positive number');
  if (kind === 'count' && !(Number.isInteger(n) && n > 0)) throw problem(given, 'must be a positive whole number');
  if (kind === 'whole' && !(Number.isInteger(n) && n >= 0)) throw problem(given, 'must be a whole number, 0 or more');
  return n;
}

/**
 * A host name or IP address as a Host header names it (`[::1]` in brackets), without a port, or `*`: the names
 * src/http/host-check.ts compares (kept here too, so that parsing options loads no part of the app).
 */
const ALLOWED_HOST = /^(\*|\[[0-9a-f:.]+\]|[a-z0-9._~-]+)$/;

/** `--allowed-hosts`, checked and lower-cased, as one comma-separated string. A config file may give a list. */
function hostList(given: Given, text: string): string {
  let names: string[];
  try {
    const list: unknown = text.startsWith('[') ? JSON.parse(text) : null;
    names = Array.isArray(list) ? list.map(String) : text.split(',');
  } catch {
    names = text.split(',');
  }
  names = names.map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const bad = names.find((name) => !ALLOWED_HOST.test(name));
  if (bad !== undefined || names.length === 0) {
    const why = bad === undefined ? 'names no host' : `${shown(bad)} is not a host name without a port`;
    throw problem(given, `${why}: give host names separated by commas (emulator,192.168.1.20,[fd00::2]), or * for any`);
  }
  return names.join(',');
}

/** The config file's options; `where` names it as the user gave it (`--config ./emu.yaml`, `SVC_EMULATOR_CONFIG=…`). */
function readConfig(path: string, where: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : ((err as Error).message.split('\n')[0] ?? '');
    throw new UsageError(`svc-emulator start: ${where}: ${why}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`svc-emulator start: ${where}: not a mapping of options (port: 4011, log-format: json)`);
  const names = FLAGS.filter((f) => f.name !== 'config').map((f) => f.name);
  const unknown = Object.keys(parsed).filter((key) => !names.includes(key));
  if (unknown.length === 1) {
    const key = unknown[0] ?? '';
    throw new UsageError(`svc-emulator start: unknown option ${key} in ${path}${suggestion(key, names, '')} (svc-emulator start --help lists them)`);
  }
  if (unknown.length > 1) {
    const each = unknown.map((key) => `${key}${suggestion(key, names, '').replace(/^; (.*)$/, ' ($1)')}`);
    throw new UsageError(`svc-emulator start: unknown options in ${path}: ${each.join(', ')} (svc-emulator start --help lists them)`);
  }
  return parsed as Record<string, unknown>;
}
