import { describe, expect, it } from 'vitest';
import { depthScan } from '../../src/http/json-scan.ts';

/** Where a scan with `maxDepth` stops over `text`, its bytes given in chunks of `chunk` bytes (all at once by default). */
function overAt(text: string | Buffer, maxDepth = 64, chunk = Infinity): number | null {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const scan = depthScan(maxDepth);
  for (let at = 0; at < bytes.length; at += Math.min(chunk, bytes.length)) {
    if (!scan.write(bytes.subarray(at, at + chunk))) break;
  }
  return scan.overAt;
}

const nested = (levels: number, open = '[', close = ']'): string => open.repeat(levels) + close.repeat(levels);

/** The nesting JSON.parse finds: the top-level array or object is level 1. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

it('takes 64 levels and stops at the bracket that opens the 65th', () => {
  expect(overAt(nested(64))).toBeNull();
  expect(overAt(nested(65))).toBe(64);
  // The object is level 1: the 64th bracket of the array inside opens level 65.
  expect(overAt(`{"a":${nested(64)}}`)).toBe('{"a":'.length + 63);
  expect(overAt(`{"a":${nested(63)}}`)).toBeNull();
});

it('counts objects and arrays alike, and a closed level no more', () => {
  expect(overAt('{"a":{"b":[{"c":[]}]}}', 5)).toBeNull();
  expect(overAt('{"a":{"b":[{"c":[]}]}}', 4)).toBe(16);
  // Siblings one after another never add up.
  expect(overAt(`[${Array.from({ length: 100 }, () => nested(3)).join(',')}]`, 4)).toBeNull();
});

/** The offset of the bracket that opens level 65 in brackets that follow `before`, which leaves them `depth` levels in. */
const at = (before: string, depth: number): number => Buffer.byteLength(before) + 64 - depth;

it.each([
  ['brackets in a string', `["${'['.repeat(200)}"]`, null],
  ['braces in an object key and value', `{"${'{'.repeat(100)}":"${'['.repeat(100)}"}`, null],
  ['an escaped quote that does not end the string', `["\\"${'['.repeat(100)}"]`, null],
  ['an escaped backslash before the closing quote', `["\\\\",${nested(65)}]`, at('["\\\\",', 1)],
  ['three backslashes and a quote: still in the string', `["\\\\\\"${'['.repeat(100)}"]`, null],
  ['four backslashes and a quote: the string ends', `["\\\\\\\\",${nested(65)}]`, at('["\\\\\\\\",', 1)],
  ['a \\u escape of a quote', `["\\u0022${'['.repeat(100)}"]`, null],
  ['multi-byte UTF-8 around brackets', `["中文😀[[[","é",${nested(63)}]`, null],
  ['multi-byte UTF-8 and then too deep', `["中文😀[[[",${nested(64)}]`, at('["中文😀[[[",', 1)],
])('reads %s', (_name, text, expected) => {
  expect(overAt(text)).toBe(expected);
});

it('finds the same however the bytes are cut into chunks', () => {
  const texts = [
    `["\\\\",${nested(65)}]`,
    `["\\\\\\"${'['.repeat(70)}",${nested(64)}]`,
    `{"k\\"[":"\\\\\\\\","v":["中😀",${nested(70, '{"a":', '}')}]}`,
    `[${'"\\\\\\"",'.repeat(20)}${nested(66)}]`,
  ];
  for (const text of texts) {
    const whole = overAt(text);
    expect(whole).not.toBeNull();
    for (const chunk of [1, 2, 3, 5, 7, 64]) expect(overAt(text, 64, chunk), `${text} in chunks of ${chunk}`).toBe(whole);
  }
});

it('agrees with JSON.parse on generated JSON full of quotes, backslashes and brackets in strings', () => {
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pieces = ['[', ']', '{', '}', '"', '\\', 'a', '中', '😀', ' '];
  const text = (): string => Array.from({ length: next(6) }, () => pieces[next(pieces.length)]).join('');
  const value = (depth: number): unknown => {
    const kind = next(depth > 12 ? 2 : 5);
    if (kind === 0) return text();
    if (kind === 1) return next(100);
    if (kind === 2) return Array.from({ length: next(4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: next(4) }, () => [text(), value(depth + 1)]));
  };
  for (let i = 0; i < 300; i++) {
    const json = JSON.stringify(value(0));
    const depth = depthOf(JSON.parse(json));
    expect(overAt(json, depth), json).toBeNull();
    if (depth > 0) expect(overAt(json, depth - 1, 1 + (i % 5)), json).not.toBeNull();
  }
});

describe('a body far past the limit', () => {
  it('is refused at byte 64 and the rest is not read', () => {
    const scan = depthScan(64);
    expect(scan.write(Buffer.from(nested(1000).slice(0, 1000)))).toBe(false);
    expect(scan.overAt).toBe(64);
    expect(scan.write(Buffer.from(']'.repeat(1000)))).toBe(false);
    expect(scan.overAt).toBe(64);
  });

  it('is refused where it goes too deep even when it never closes (JSON.parse would only call it malformed)', () => {
    expect(overAt(`{"model":"x","messages":${'['.repeat(10_000)}`)).toBe(at('{"model":"x","messages":', 1));
  });
});
