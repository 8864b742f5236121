import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapFlags, YOUNG_KEPT_FROM_BYTES } from '../../src/cli/heap-growth.ts';

const MB16 = 16 * 1024 * 1024;

describe('the start process bounds how far V8 grows its heap (issue 42)', () => {
  it('bounds the old generation and keeps the young one at its start-up size when the process was given neither', () => {
    expect(heapFlags({ execArgv: ['--enable-source-maps'], nodeOptions: '--max-old-space-size=512', youngBytes: MB16 })).toEqual([
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
      '--semi-space-growth-factor=1',
    ]);
  });

  it('lets a young generation smaller than the threshold grow as V8 would', () => {
    expect(heapFlags({ execArgv: [], nodeOptions: '', youngBytes: YOUNG_KEPT_FROM_BYTES - 1 })).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it('leaves values given on the command line or in NODE_OPTIONS alone, in either spelling', () => {
    expect(heapFlags({ execArgv: ['--heap-growing-percent=200', '--max-semi-space-size=64'], nodeOptions: '', youngBytes: MB16 })).toEqual([]);
    expect(heapFlags({ execArgv: [], nodeOptions: '--inspect --heap_growing_percent=0  --semi_space_growth_factor=2 ', youngBytes: MB16 })).toEqual([]);
    expect(heapFlags({ execArgv: [], nodeOptions: '--min-semi-space-size=4', youngBytes: MB16 })).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it('does not mistake a longer flag for one it sets', () => {
    expect(heapFlags({ execArgv: ['--heap-growing-percentage-x=1'], nodeOptions: '', youngBytes: 0 })).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
