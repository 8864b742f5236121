import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/cli/heap-growth.ts';

describe('the start process bounds how far V8 grows the heap (issue 42)', () => {
  it('applies its own factor when the process was given none', () => {
    expect(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=512')).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it('leaves a value given on the command line or in NODE_OPTIONS alone, in either spelling', () => {
    expect(heapGrowthFlag(['--heap-growing-percent=200'], '')).toBeNull();
    expect(heapGrowthFlag([], '--inspect --heap_growing_percent=0')).toBeNull();
    expect(heapGrowthFlag([], '  --heap-growing-percent=10  ')).toBeNull();
  });
});
