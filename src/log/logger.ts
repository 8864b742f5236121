/**
 * Log lines of the running emulator: for people (`pretty`) or one JSON object per line (`json`), at a level.
 * In-process emulators (tests) log nothing unless given a logger.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** Whether a line at `level` would be written: a caller skips building one that would not. */
  enabled?(level: Exclude<LogLevel, 'silent'>): boolean;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createLogger(options: {
  level: LogLevel;
  format: 'pretty' | 'json';
  /** The wall-clock time of a line (from the clock module). */
  now: () => number;
  write?: (line: string) => void;
}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields: LogFields = {}): void => {
    if (ORDER[level] < ORDER[options.level]) return;
    const time = new Date(options.now()).toISOString();
    if (options.format === 'json') {
      write(JSON.stringify({ time, level, message, ...fields }));
      return;
    }
    const detail = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    write(`${time.slice(11, 23)} ${level.padEnd(5)} ${message}${detail ? ` ${detail}` : ''}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    enabled: (level) => ORDER[level] >= ORDER[options.level],
  };
}

/** A key as logs show it: enough to tell keys apart, not enough to use one. */
export const keyId = (key: string | null | undefined): string | null => (key ? `${key.slice(0, 3)}…${key.slice(-4)}` : null);
