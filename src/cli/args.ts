import { closest, distance } from 'fastest-levenshtein';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

/** A command line the user must fix: its message goes to stderr and the exit code is 2. */
export class UsageError extends Error {}

/** `--help` of a command: its text goes to stdout and the exit code is 0. */
export class HelpRequested extends UsageError {}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `parseArgs` in strict mode, with its errors said for people: an unknown flag names the command and the
 * nearest known flag (`--prot` → did you mean --port?), a flag without its value says which value it wants.
 */
export function parseCommandArgs<O extends Options>(
  command: string,
  argv: string[],
  options: O,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: boolean }>> {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const message = (err as Error).message;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const given = /'(-{1,2}[^'=]+)/.exec(message)?.[1] ?? argv.find((a) => a.startsWith('-')) ?? '';
      throw new UsageError(`svc-emulator ${command}: unknown option ${given}${suggestion(given, Object.keys(options))} (svc-emulator ${command} --help lists them)`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = /'(--[^' ]+)/.exec(message)?.[1] ?? '';
      // Node gives one code for a value missing and a value given to an on/off flag; only its message tells them apart.
      if (/does not take an argument/.test(message)) throw new UsageError(`svc-emulator ${command}: ${flag} takes no value (give ${flag} to turn it on)`);
      throw new UsageError(`svc-emulator ${command}: ${flag} needs a value (${flag} VALUE or ${flag}=VALUE)`);
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      const arg = /'([^']*)'/.exec(message)?.[1] ?? '';
      throw new UsageError(`svc-emulator ${command}: unexpected argument '${arg}' (options start with --; svc-emulator ${command} --help lists them)`);
    }
    throw err;
  }
}

/**
 * `; did you mean --port?` when one known name is close enough to be a typo, else nothing. `prefix` is how the
 * name is written where it was mistyped: `--` for a flag, nothing for a command or a config-file key.
 */
export function suggestion(given: string, known: readonly string[], prefix = '--'): string {
  const name = given.replace(/^-+/, '');
  if (name === '' || known.length === 0) return '';
  const best = closest(name, known as string[]);
  // Two edits (a swapped pair: `prot` → `port`) or a third of a longer name; a name of one or two letters, one.
  const allowed = name.length <= 2 ? 1 : Math.max(2, Math.floor(name.length / 3));
  const near = distance(name, best) <= allowed || (name.length >= 3 && (best.startsWith(name) || name.startsWith(best)));
  return near ? `; did you mean ${prefix}${best}?` : '';
}

/** The error for a first argument that is no command: an option before any command, or a mistyped command. */
export function notACommand(given: string, commands: readonly string[]): UsageError {
  if (given.startsWith('-')) return new UsageError(`svc-emulator: ${given} goes after a command (svc-emulator start ${given} …; svc-emulator --help lists them)`);
  return new UsageError(`svc-emulator: unknown command '${given}'${suggestion(given, commands, '')} (svc-emulator --help lists them)`);
}

/**
 * A deployment's address from `--flag`, as the reference gives one: scheme and host (and port), nothing after.
 * A bare host:port, the usual slip, gets the scheme suggested: http for local hosts, https for the rest.
 */
export function originOption(command: string, flag: string, value: string): string {
  const usage = (message: string): UsageError => new UsageError(`svc-emulator ${command}: --${flag} ${message}`);
  if (!/^https?:\/\//i.test(value)) {
    const bare = !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) && /^[^\s/]+(\/.*)?$/.test(value);
    const local = /^(localhost|127\.|0\.0\.0\.0|\[::1?\])/i.test(value);
    const guess = bare ? `; did you mean ${local ? 'http' : 'https'}://${value}?` : '';
    throw usage(`must start with http:// or https:// (got ${value}${guess})`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`is not a valid address (got ${value})`);
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') throw usage(`takes the scheme and host only, no path (got ${value}; did you mean ${url.origin}?)`);
  return url.origin;
}
