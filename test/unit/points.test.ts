import { describe, expect, it } from 'vitest';
import { add, freezeAmount, mul, sub, toPoints } from '../../src/points/index.ts';
import type { PriceRule } from '../../src/points/index.ts';

describe('points', () => {
  it('adds decimals exactly where floats would not', () => {
    expect(add('0.100', '0.200')).toBe('0.300');
    expect(sub('100000.000', '1188.000')).toBe('98812.000');
    expect(mul('97.2', 3)).toBe('291.600');
  });

  it('always writes three decimals, rounding half up at the thousandth', () => {
    expect(toPoints('40')).toBe('40.000');
    expect(toPoints('0.0005')).toBe('0.001');
    expect(toPoints('0.0004')).toBe('0.000');
  });
});

const video: PriceRule = {
  rule: 'per_second',
  seconds_field: 'duration',
  price_field: 'resolution',
  per_second: { '480p': '97.2', '720p': '237.6', '1080p': '587.5' },
};
const avatar: PriceRule = {
  rule: 'per_second',
  price_field: 'quality',
  per_second: { fast: '4', standard: '6', max: '8' },
  estimate_seconds_per_material: 10,
  material_fields: ['audio', 'voice_audio'],
};

describe('freeze amounts', () => {
  it.each([
    ['a fixed price', { rule: 'fixed', points: '40.000' } as PriceRule, {}, '40.000'],
    ['5 s at 720p', video, { duration: 5, resolution: '720p' }, '1188.000'],
    ['4 s at 480p', video, { duration: 4, resolution: '480p' }, '388.800'],
    ['15 s at 1080p', video, { duration: 15, resolution: '1080p' }, '8812.500'],
    ['standard avatar with audio', avatar, { quality: 'standard', audio: 'file_1' }, '60.000'],
    ['fast avatar with a reference voice', avatar, { quality: 'fast', voice_audio: 'file_1' }, '40.000'],
    ['max avatar', avatar, { quality: 'max', audio: 'file_1' }, '80.000'],
  ])('freezes %s', (_name, rule, input, expected) => {
    expect(freezeAmount(rule, input)).toBe(expected);
  });
});
