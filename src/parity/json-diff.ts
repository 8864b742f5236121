import { lastKey, maskOf } from './masks.ts';
import type { Finding, CheckId } from './types.ts';
import { isPlainObject } from '../contract/index.ts';

type Segment = string | number;

export interface DiffOptions {
  /** Where the paths start: `$` for a body, `events[3]` for an event's data. */
  root: string;
  shapeCheck: CheckId;
  valuesCheck: CheckId;
  /** The exchange's recording replaced content or secrets (the `redacted` mask rule). */
  redacted: boolean;
  /** A recorded string with the recorded ids replaced by the replay's (an echoed file address, say). */
  rewrite: (recorded: string) => string;
}

export interface JsonDiff {
  shape: Finding[];
  values: Finding[];
}

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
const show = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

function pathText(root: string, path: readonly Segment[]): string {
  return path.reduce<string>((text, seg) => (typeof seg === 'number' ? `${text}[${seg}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg) ? `${text}.${seg}` : `${text}[${JSON.stringify(seg)}]`), root);
}

/**
 * Two JSON values side by side. Shape: the same keys, JSON types and array lengths at every path (a masked value
 * is held to this too). Values: each leaf present on both sides with one type, equal unless a mask rule applies.
 */
export function diffJson(recorded: unknown, replayed: unknown, options: DiffOptions): JsonDiff {
  const out: JsonDiff = { shape: [], values: [] };
  const shape = (path: Segment[], rec: unknown, rep: unknown, message: string): void => {
    out.shape.push({ check: options.shapeCheck, path: pathText(options.root, path), recorded: rec, replayed: rep, message: `${pathText(options.root, path)} ${message}` });
  };
  const walk = (path: Segment[], rec: unknown, rep: unknown, parent: Record<string, unknown> | undefined): void => {
    const [recType, repType] = [typeName(rec), typeName(rep)];
    if (recType !== repType) return shape(path, recType, repType, `is ${article(recType)} in the recording and ${article(repType)} in the replay`);
    if (isPlainObject(rec) && isPlainObject(rep)) {
      for (const key of Object.keys(rec)) {
        if (!(key in rep)) shape([...path, key], typeName(rec[key]), 'missing', 'is in the recording and missing from the replay');
        else walk([...path, key], rec[key], rep[key], rec);
      }
      for (const key of Object.keys(rep)) if (!(key in rec)) shape([...path, key], 'missing', typeName(rep[key]), 'is missing from the recording and present in the replay');
      return;
    }
    if (Array.isArray(rec) && Array.isArray(rep)) {
      if (rec.length !== rep.length) shape(path, `${rec.length} items`, `${rep.length} items`, `has ${rec.length} items in the recording and ${rep.length} in the replay`);
      for (let i = 0; i < Math.min(rec.length, rep.length); i++) walk([...path, i], rec[i], rep[i], undefined);
      return;
    }
    if (maskOf({ path, key: lastKey(path), parent, recorded: rec, replayed: rep, redacted: options.redacted }) !== null) return;
    const expected = typeof rec === 'string' ? options.rewrite(rec) : rec;
    if (expected !== rep) {
      const where = pathText(options.root, path);
      out.values.push({ check: options.valuesCheck, path: where, recorded: rec, replayed: rep, message: `${where} is ${show(rec)} in the recording and ${show(rep)} in the replay` });
    }
  };
  walk([], recorded, replayed, undefined);
  return out;
}

function article(type: string): string {
  if (type === 'missing') return 'missing';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
