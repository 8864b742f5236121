import type { ErrorDetail } from '../errors/index.ts';
import type { FilesRepo, StoredFile } from './records.ts';
import { publicAddressProblem } from '../webhooks/index.ts';
import type { AddressProblem } from '../webhooks/index.ts';
import { FILES_PATH, ownFile } from './registry.ts';

/** What a model's input schema says of a file parameter (`x-file` in openapi/service.yaml). */
export interface FileRule {
  kind: 'image' | 'video' | 'audio';
  max_bytes: number;
  mime_types?: string[];
  min_seconds?: number;
  max_seconds?: number;
  max_total_seconds?: number;
}

export interface FileCheckContext {
  db: { files: FilesRepo };
  accountId: string;
  publicUrl: string;
  nowMs: number;
  /** `--allow-insecure-webhooks`: lifts the address policy for other addresses, as for callback addresses. */
  allowInsecure: boolean;
  /**
   * The address policy's verdict on other addresses, names resolved (`publicAddressProblems` over
   * `otherFileAddresses`, before the transaction); an address missing here is checked as written.
   */
  addressProblems?: ReadonlyMap<string, AddressProblem | null>;
}

const NOT_A_FILE_ADDRESS = 'must be a file address from POST /v1/files or a public https address';

/** Whether an address names one of the emulator's own files (`file_<n>` or under its public URL). */
function isOwnAddress(address: string, publicUrl: string): boolean {
  return /^file_[0-9]+$/.test(address) || address.startsWith(`${publicUrl}${FILES_PATH}`);
}

/** Each file parameter an input gives a value, with the model's rule for it. */
function eachFileParam(
  schema: Record<string, unknown>,
  input: Record<string, unknown>,
  visit: (name: string, rule: FileRule, value: unknown) => void,
): void {
  const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, prop] of Object.entries(properties)) {
    const rule = prop['x-file'] as FileRule | undefined;
    const value = input[name];
    if (rule && value !== undefined) visit(name, rule, value);
  }
}

/**
 * The file addresses of an input that are not the emulator's own: the ones the address policy applies to, whose
 * names the caller resolves (`publicAddressProblems`) before the synchronous checks.
 */
export function otherFileAddresses(schema: Record<string, unknown>, input: Record<string, unknown>, publicUrl: string): string[] {
  const addresses: string[] = [];
  eachFileParam(schema, input, (_name, _rule, value) => {
    for (const address of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (typeof address === 'string' && !isOwnAddress(address, publicUrl)) addresses.push(address);
    }
  });
  return addresses;
}

/**
 * Checks the file parameters of a normalized input against the model's `x-file` rules: an address from
 * `POST /v1/files` must be the caller's, live, of the right kind and within the size and duration limits; any
 * other address must pass the address policy of callback addresses (public https, not internal as written or as
 * resolved). Limits that need the file's bytes apply only where the emulator knows them.
 * @see reference "POST /v1/tasks" rule 3 and the model tables' size limits
 */
export function checkFileParams(
  schema: Record<string, unknown>,
  input: Record<string, unknown>,
  ctx: FileCheckContext,
  prefix: string,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  eachFileParam(schema, input, (name, rule, value) => {
    const addresses = Array.isArray(value) ? (value as string[]) : [value as string];
    let totalSeconds = 0;
    addresses.forEach((address, i) => {
      const field = Array.isArray(value) ? `${prefix}.${name}[${i}]` : `${prefix}.${name}`;
      const { file, own } = ownFile(ctx.db, address, ctx.publicUrl);
      if (!own) {
        const problem = ctx.addressProblems?.has(address)
          ? (ctx.addressProblems.get(address) ?? null)
          : publicAddressProblem(address, ctx.allowInsecure);
        if (problem) details.push({ field, message: problem.kind === 'internal' ? problem.message : NOT_A_FILE_ADDRESS });
        return;
      }
      if (!file || file.account_id !== ctx.accountId || file.expires_ms <= ctx.nowMs) {
        details.push({ field, message: `no file '${address}' in this account (or it has expired)` });
        return;
      }
      const problem = fileProblem(rule, file);
      // A file already refused on its own does not count again toward the total.
      if (problem) details.push({ field, message: problem });
      else totalSeconds += file.duration ?? 0;
    });
    if (rule.max_total_seconds !== undefined && totalSeconds > rule.max_total_seconds) {
      details.push({ field: `${prefix}.${name}`, message: `must total at most ${rule.max_total_seconds} seconds (has ${totalSeconds})` });
    }
  });
  return details;
}

function fileProblem(rule: FileRule, file: StoredFile): string | null {
  if (file.type !== rule.kind) return `must be ${rule.kind === 'video' ? 'a' : 'an'} ${rule.kind} file (is ${file.type})`;
  if (file.size > rule.max_bytes) return `must be at most ${rule.max_bytes / 1048576}MB (is ${file.size} bytes)`;
  if (rule.mime_types && !rule.mime_types.includes(file.mime_type)) {
    return `must be one of ${rule.mime_types.join(', ')} (is ${file.mime_type})`;
  }
  if (file.duration !== null) {
    if (rule.min_seconds !== undefined && file.duration < rule.min_seconds) return `must be at least ${rule.min_seconds} seconds long`;
    if (rule.max_seconds !== undefined && file.duration > rule.max_seconds) return `must be at most ${rule.max_seconds} seconds long`;
  }
  return null;
}

/** The emulator's own file behind a parameter value, if any (for settlement on actual durations). */
export function fileOf(db: { files: FilesRepo }, address: unknown, publicUrl: string): StoredFile | undefined {
  return typeof address === 'string' ? ownFile(db, address, publicUrl).file : undefined;
}
