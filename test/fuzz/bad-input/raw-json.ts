// Raw JSON: deep nesting and duplicate keys cannot go through JSON.stringify

/** A JSON text to splice in as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text =
    JSON.stringify(value, (_key, v: unknown) => {
      if (v instanceof RawJson) {
        raws.push(v.text);
        return `\u0000raw${raws.length - 1}\u0000`;
      }
      return v;
    }) ?? 'null';
  return raws.length === 0 ? text : text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)] ?? 'null');
}

export const deepText = (depth: number, kind: 'array' | 'object' | 'mixed'): string =>
  kind === 'array'
    ? '['.repeat(depth) + ']'.repeat(depth)
    : kind === 'object'
      ? '{"a":'.repeat(depth) + '0' + '}'.repeat(depth)
      : '[{"a":'.repeat(Math.ceil(depth / 2)) + 'null' + '}]'.repeat(Math.ceil(depth / 2));

/** Every endpoint refuses JSON nested deeper than this (400 bad_request; README "Errors"). */
export const MAX_BODY_DEPTH = 64;

/** How deep arrays and objects nest in a body as the server parses it (the top-level object is 1), found without recursion. */
export function containerDepth(value: unknown): number {
  const parsed: unknown = JSON.parse(toJsonText(value));
  let deepest = 0;
  const stack: [unknown, number][] = [[parsed, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export const dupObject = (entries: [string, unknown][]): RawJson =>
  new RawJson(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`);
