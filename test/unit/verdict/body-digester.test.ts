import { expect, it } from 'vitest';
import { bodyDigest, bodyDigester } from '../../../src/verdict/index.ts';

/** The digester's digest of `body` fed in chunks of `size` bytes. */
function fed(body: Buffer, size: number, digested: Buffer = body): string {
  const digester = bodyDigester();
  for (let at = 0; at < body.length; at += size) digester.update(body.subarray(at, at + size));
  return digester.digest(digested);
}

it.each([
  ['a body over 64 KB, in socket-sized chunks', Buffer.from(JSON.stringify({ b: 1, a: 'x'.repeat(300_000) })), 65_536],
  ['a body over 64 KB, in odd chunks', Buffer.from(JSON.stringify({ b: 1, a: 'é'.repeat(40_000) })), 7_777],
  ['a body of exactly 64 KB, whose keys are sorted first', Buffer.from(`{"b":1,"a":"${'x'.repeat(65_536 - 15)}"}`), 1000],
  ['a small JSON body, whose keys are sorted first', Buffer.from('{"b":{"d":3,"c":2},"a":1}'), 3],
])('gives %s the digest bodyDigest gives it whole', (_name, body, size) => {
  expect(fed(body, size)).toBe(bodyDigest(body));
});

it('digests whole a body that is not the bytes it was fed (an inflated one), and gives one digest however often asked', () => {
  const sent = Buffer.from('y'.repeat(100_000));
  const inflated = Buffer.from('z'.repeat(200_000));
  expect(fed(sent, 65_536, inflated)).toBe(bodyDigest(inflated));
  const digester = bodyDigester();
  digester.update(sent);
  expect(digester.digest(sent)).toBe(bodyDigest(sent));
  expect(digester.digest(sent)).toBe(bodyDigest(sent));
  expect(bodyDigester().digest(undefined)).toBe('');
});
