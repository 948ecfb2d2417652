import { describe, expect, it } from 'vitest';
import { Lanes } from '../../src/worker/lanes.js';

describe('Lanes', () => {
  it('rotates the first lane each round and shares the free slots', () => {
    const lanes = new Lanes('workflow', () => ['a', 'b', 'c'], 1_000);
    expect(lanes.next(10)).toEqual({ lanes: ['b', 'c', 'a'], share: 4 });
    expect(lanes.next(10).lanes).toEqual(['c', 'a', 'b']);
    expect(lanes.next(1)).toEqual({ lanes: ['a', 'b', 'c'], share: 1 });
  });

  it('a lane a notice named goes first, once', () => {
    const lanes = new Lanes('workflow', () => ['a', 'b', 'c'], 1_000);
    lanes.prefer('a');
    expect(lanes.next(3).lanes).toEqual(['a', 'b', 'c']); // rotation alone gives b, c, a
    expect(lanes.next(3).lanes).toEqual(['c', 'a', 'b']); // the preference is spent
  });

  it('single: one lane for all, and preferences are ignored', () => {
    const lanes = new Lanes('single', () => ['a', 'b'], 1_000);
    lanes.prefer('b');
    expect(lanes.next(5)).toEqual({ lanes: [''], share: 5 });
  });

  it('skips double up to 5 minutes, are counted per lane, and reset once stepped', () => {
    const lanes = new Lanes('workflow', () => ['a'], 1_000);
    expect(lanes.skip('x', 'a', 0)).toBe(1_000);
    expect(lanes.skip('x', 'a', 0)).toBe(2_000);
    for (let i = 0; i < 20; i++) lanes.skip('x', 'a', 0);
    expect(lanes.skip('x', 'a', 0)).toBe(300_000);
    lanes.skip('y', 'b', 0);
    expect(lanes.skipping('x', 299_999)).toBe(true);
    expect(lanes.skippedIn('a', 10)).toBe(1);
    expect(lanes.skippedIn('', 10)).toBe(2);
    lanes.stepped('x');
    expect(lanes.skipping('x', 10)).toBe(false);
    expect(lanes.skip('x', 'a', 0)).toBe(1_000);
  });
});
