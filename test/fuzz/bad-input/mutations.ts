import fc from 'fast-check';
import { PUBLIC_URL, isObject } from './documents.ts';
import { RawJson, deepText, toJsonText } from './raw-json.ts';

// Mutations of valid bodies: fields replaced, deleted or added with random JSON and hand-made nasties

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
export const keyArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...PROTO_KEYS,
      'toString', 'hasOwnProperty', 'valueOf', '', ' ', 'model', 'input', 'params', 'metadata', 'webhook_url',
      'stream', 'tools', 'tool_choice', 'previous_response_id', 'n', 'max_tokens', 'emulator_scenario', 'mode',
      'agree', 'seconds', 'points', 'output', 'files', 'usage', 'code', 'url', 'size', 'type', 'expires_at',
      'mime_type', 'duration', 'content', 'scenarios', 'name', 'outcome', 'concurrency', 'signing', 'quota',
      'width', 'height', 'cover_url', 'text', 'status', 'id',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

export const PROTO_VALUES: unknown[] = [
  JSON.parse('{"__proto__":{"polluted":"yes"}}'),
  { constructor: { prototype: { polluted: 'yes' } } },
  JSON.parse('{"__proto__":{"toString":"polluted","isAdmin":true}}'),
  { prototype: { polluted: 'yes' } },
];

export const SCALAR_NASTIES: unknown[] = [
  null, true, false, 0, -0, -1, 1, 1.5, -0.5, 4, 15, 16, 101, 2 ** 31, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308,
  5e-324, '', ' ', '0', '1', '-1', '1e3', '0x10', 'NaN', 'Infinity', 'true', 'null', '\u0000', '\ud800', '\udfff',
  'é', '👍', 'x\r\nInjected: 1', '<script>alert(1)</script>', '../../etc/passwd', '%00', 'file_../../etc/passwd',
  `${PUBLIC_URL}/files/../../package.json`, [], {}, [[]], [null], { '': '' },
];

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 5, arbitrary: fc.constantFrom(...SCALAR_NASTIES) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 5 }).map((n) => 'x'.repeat(10 ** n)) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }).map((n) => new Array<number>(10 ** n).fill(0)) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_VALUES) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(50, 1000, 10_000), fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>)
      .map(([depth, kind]) => new RawJson(deepText(depth, kind))),
  },
);

export interface Mutation {
  path: number[];
  op: 'set' | 'delete' | 'add' | 'wrap' | 'stringify';
  key: string;
  pick: number;
  value: unknown;
}
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  path: fc.array(fc.nat(), { maxLength: 4 }),
  op: fc.constantFrom('set', 'set', 'delete', 'add', 'add', 'wrap', 'stringify') as fc.Arbitrary<Mutation['op']>,
  key: keyArb,
  pick: fc.nat(),
  value: nastyValue,
});

export const childKeys = (v: unknown): (string | number)[] =>
  Array.isArray(v) ? v.map((_x, i) => i) : isObject(v) ? Object.keys(v) : [];
export const childOf = (v: unknown, k: string | number): unknown =>
  Array.isArray(v) ? v[k as number] : isObject(v) ? v[k as string] : undefined;
/** Rebuilt with Object.fromEntries, so `__proto__` stays an ordinary own key. */
export const withChild = (v: unknown, k: string | number, child: unknown): unknown =>
  Array.isArray(v)
    ? v.map((x, i) => (i === k ? child : x))
    : Object.fromEntries([...Object.entries(v as Record<string, unknown>).filter(([kk]) => kk !== k), [k, child]]);
export const withoutChild = (v: unknown, k: string | number): unknown =>
  Array.isArray(v) ? v.filter((_x, i) => i !== k) : Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([kk]) => kk !== k));

export function mutate(node: unknown, path: number[], m: Mutation): unknown {
  const keys = childKeys(node);
  const [step, ...rest] = path;
  if (step !== undefined && keys.length > 0) {
    const k = keys[step % keys.length] as string | number;
    return withChild(node, k, mutate(childOf(node, k), rest, m));
  }
  switch (m.op) {
    case 'set':
      return m.value;
    case 'wrap':
      return [node];
    case 'stringify':
      return typeof node === 'string' ? node : toJsonText(node);
    case 'delete':
      return keys.length > 0 ? withoutChild(node, keys[m.pick % keys.length] as string | number) : undefined;
    case 'add':
      return isObject(node) ? withChild(node, m.key, m.value) : Array.isArray(node) ? [...node, m.value] : m.value;
  }
}

/** A valid body, then zero to three mutations. */
export const mutated = (base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.tuple(base, fc.array(mutationArb, { maxLength: 3 })).map(([b, ms]) => ms.reduce((v, m) => mutate(v, m.path, m), b));

/** Replaces `model` with a served one most of the time. */
export const withModel = (arb: fc.Arbitrary<unknown>, models: string[]): fc.Arbitrary<unknown> =>
  fc
    .tuple(arb, fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...models) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }))
    .map(([b, model]) => (isObject(b) ? { ...b, model } : b));
