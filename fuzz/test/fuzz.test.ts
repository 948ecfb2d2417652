import { describe, expect, it } from 'vitest';
import { runTarget } from '../src/driver.js';
import { TARGETS } from '../src/targets/index.js';

// The short version of `pnpm fuzz` for `pnpm test`: every target with a few hundred inputs (fewer
// for the store-facing ones), from a fixed seed so a run is repeatable; FUZZ_SEED picks another.

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_126);
const RUNS: Record<string, number> = {
  definitions: 400,
  events: 400,
  notices: 400,
  'notice-worker': 100,
  inbox: 100,
  'stored-memory': 300,
  'stored-pg': 150,
  cli: 100,
  inspector: 200,
};

describe(`pnpm fuzz, short (seed ${SEED})`, () => {
  for (const target of TARGETS) {
    it(`${target.name}: typed errors or correct results only`, async () => {
      const r = await runTarget(target, { runs: RUNS[target.name] ?? 100, seed: SEED });
      const failure =
        r.failure &&
        `${r.failure.message}\ninput: ${r.failure.input}\nreplay: pnpm fuzz --target ${target.name} --seed ${r.seed} --path ${r.failure.path}`;
      expect(failure).toBeUndefined();
      expect(r.runs).toBe(RUNS[target.name] ?? 100);
    });
  }
});
