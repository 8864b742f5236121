import fc from 'fast-check';
import { safeRegExp } from './flat.ts';
import type { Flat } from './flat.ts';

/**
 * Strings and numbers of a flattened schema: `pattern` through fc.stringMatching, `format` through fast-check's
 * web and date arbitraries, lengths counted in code points as JSON Schema counts them, and the boundaries
 * (minLength, maxLength, minimum, maximum) drawn on purpose now and then, as Schemathesis does.
 */

/** JSON Schema lengths count code points, not UTF-16 units. */
export const codePoints = (s: string): number => [...s].length;

/** Whether a string meets the string keywords of a flat (formats are left to Ajv). */
export function stringFits(flat: Flat, s: string): boolean {
  const n = codePoints(s);
  if (n < flat.minLength || (flat.maxLength !== null && n > flat.maxLength)) return false;
  return flat.patterns.every((p) => safeRegExp(p)?.test(s) ?? true);
}

const FORMATS: Record<string, () => fc.Arbitrary<string>> = {
  'date-time': () => isoDate().chain((iso) => fc.constantFrom(iso, iso.replace(/\.\d{3}Z$/, 'Z'), iso.replace(/Z$/, '+08:00'))),
  date: () => isoDate().map((iso) => iso.slice(0, 10)),
  time: () => isoDate().map((iso) => iso.slice(11)),
  uri: () => fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.webUrl({ validSchemes: ['ftp', 'ws', 'wss', 'file'] })),
  'uri-reference': () => fc.oneof(fc.webUrl(), fc.webPath()),
  iri: () => fc.webUrl(),
  'iri-reference': () => fc.oneof(fc.webUrl(), fc.webPath()),
  'uri-template': () => fc.webUrl(),
  email: () => fc.emailAddress(),
  'idn-email': () => fc.emailAddress(),
  hostname: () => fc.domain(),
  'idn-hostname': () => fc.domain(),
  ipv4: () => fc.ipV4(),
  ipv6: () => fc.ipV6(),
  uuid: () => fc.uuid(),
  byte: () => fc.base64String(),
  regex: () => fc.constantFrom('^a$', '.*', '[0-9]+'),
  duration: () => fc.constantFrom('P1D', 'PT1H', 'P1Y2M3DT4H5M6S', 'PT0.5S'),
  'json-pointer': () => fc.array(fc.stringMatching(/^[a-z0-9]{0,6}$/), { maxLength: 3 }).map((parts) => parts.map((p) => `/${p}`).join('')),
};

function isoDate(): fc.Arbitrary<string> {
  return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
}

function matching(pattern: string, maxLength: number | null): fc.Arbitrary<string> | null {
  const regex = safeRegExp(pattern);
  if (!regex) return null;
  const attempts = maxLength === null ? [{}] : [{ maxLength }, {}];
  for (const constraints of attempts) {
    try {
      return fc.stringMatching(regex, constraints);
    } catch {
      // Syntax fast-check does not generate from, or a length it cannot meet with this bound: try the next way.
    }
  }
  return fc.string().filter((s) => regex.test(s));
}

function plainString(flat: Flat): fc.Arbitrary<string> {
  const min = flat.minLength;
  const max = flat.maxLength ?? undefined;
  const of = (unit: 'binary-ascii' | 'binary', minLength: number, maxLength: number | undefined): fc.Arbitrary<string> =>
    fc.string({ unit, minLength, ...(maxLength === undefined ? {} : { maxLength }) });
  const arbitraries: fc.WeightedArbitrary<string>[] = [
    { weight: 6, arbitrary: of('binary-ascii', min, max) },
    { weight: 2, arbitrary: of('binary', min, max) },
  ];
  if (min > 0) arbitraries.push({ weight: 1, arbitrary: of('binary-ascii', min, min) });
  if (max !== undefined && max <= 10_000) arbitraries.push({ weight: 1, arbitrary: of('binary-ascii', max, max) });
  return fc.oneof(...arbitraries);
}

/**
 * Strings of a flat: from its pattern, or its format, or plain; with both a pattern and a known format, from
 * either. `formatFits` (Ajv's format check) filters here, so a miss is drawn again instead of discarding a case.
 */
export function stringArbitrary(
  flat: Flat,
  keep: (predicate: (s: string) => boolean) => (s: string) => boolean,
  formatFits: (format: string, s: string) => boolean = () => true,
): fc.Arbitrary<string> {
  const [pattern] = flat.patterns;
  const fromPattern = pattern !== undefined ? matching(pattern, flat.maxLength) : null;
  const fromFormat = flat.formats.flatMap((f) => (FORMATS[f] ? [FORMATS[f]()] : []));
  const sources = [...(fromPattern ? [fromPattern] : []), ...fromFormat];
  const base = sources.length === 0 ? plainString(flat) : sources.length === 1 ? (sources[0] as fc.Arbitrary<string>) : fc.oneof(...sources);
  return base.filter(keep((s) => stringFits(flat, s) && flat.formats.every((f) => formatFits(f, s))));
}

/** Least and greatest allowed numbers, integers when `integer`. */
function bounds(flat: Flat, integer: boolean): { lo: number; hi: number; loExcluded: boolean; hiExcluded: boolean } {
  const span = integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE;
  let lo = -span;
  let hi = span;
  let loExcluded = false;
  let hiExcluded = false;
  if (flat.minimum !== null) lo = flat.minimum;
  if (flat.exclusiveMinimum !== null && flat.exclusiveMinimum >= lo) [lo, loExcluded] = [flat.exclusiveMinimum, true];
  if (flat.maximum !== null) hi = flat.maximum;
  if (flat.exclusiveMaximum !== null && flat.exclusiveMaximum <= hi) [hi, hiExcluded] = [flat.exclusiveMaximum, true];
  if (integer) {
    lo = loExcluded ? Math.floor(lo) + 1 : Math.ceil(lo);
    hi = hiExcluded ? Math.ceil(hi) - 1 : Math.floor(hi);
    lo = Math.max(lo, -Number.MAX_SAFE_INTEGER);
    hi = Math.min(hi, Number.MAX_SAFE_INTEGER);
    return { lo, hi, loExcluded: false, hiExcluded: false };
  }
  return { lo, hi, loExcluded, hiExcluded };
}

export function integerArbitrary(flat: Flat): fc.Arbitrary<number> | null {
  const { lo, hi } = bounds(flat, true);
  if (lo > hi) return null;
  const integerSteps = flat.multipleOf.filter(Number.isInteger);
  const step = integerSteps.reduce((a, b) => (a * b) / gcd(a, b), 1);
  const fits = (n: number): boolean => flat.multipleOf.every((m) => Number.isInteger(n / m));
  if (step > 1) {
    const kLo = Math.ceil(lo / step);
    const kHi = Math.floor(hi / step);
    return kLo > kHi ? null : fc.integer({ min: kLo, max: kHi }).map((k) => k * step).filter(fits);
  }
  const unbounded = flat.minimum === null && flat.maximum === null && flat.exclusiveMinimum === null && flat.exclusiveMaximum === null;
  const base = unbounded ? fc.oneof({ weight: 3, arbitrary: fc.integer() }, { weight: 1, arbitrary: fc.maxSafeInteger() }) : fc.integer({ min: lo, max: hi });
  return base.filter(fits);
}

export function numberArbitrary(flat: Flat): fc.Arbitrary<number> | null {
  if (flat.multipleOf.length > 0) {
    const [m = 1] = flat.multipleOf;
    const { lo, hi, loExcluded, hiExcluded } = bounds(flat, false);
    const low = Math.max(lo, -1e12) / m;
    const high = Math.min(hi, 1e12) / m;
    const kLo = loExcluded && Number.isInteger(low) ? low + 1 : Math.ceil(low);
    const kHi = hiExcluded && Number.isInteger(high) ? high - 1 : Math.floor(high);
    if (kLo > kHi) return null;
    return fc.integer({ min: Math.max(kLo, -Number.MAX_SAFE_INTEGER), max: Math.min(kHi, Number.MAX_SAFE_INTEGER) }).map((k) => k * m);
  }
  const { lo, hi, loExcluded, hiExcluded } = bounds(flat, false);
  if (lo > hi) return null;
  const double = fc.double({ min: lo, max: hi, minExcluded: loExcluded, maxExcluded: hiExcluded, noNaN: true, noDefaultInfinity: true });
  const whole = integerArbitrary(flat);
  return whole ? fc.oneof({ weight: 3, arbitrary: double }, { weight: 1, arbitrary: whole }) : double;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
