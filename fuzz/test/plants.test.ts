import { afterEach, describe, expect, it } from 'vitest';
import { runTarget } from '../src/driver.js';
import { PLANT_NAMES, plant, unplant } from '../src/plants.js';
import { definitions } from '../src/targets/definitions.js';

// The fuzzer catches a planted bug (a reserved-key check gone) within one run: here with a fixed
// seed, so the proof repeats; `pnpm fuzz --plant <name>` does the same over a full run.

afterEach(unplant);

describe('planted bugs are found', () => {
  for (const name of PLANT_NAMES) {
    it(`${name}: the definitions target reports it`, async () => {
      plant(name);
      const r = await runTarget(definitions, { runs: 20_000, seed: 2 });
      expect(r.failure?.message).toMatch(/defineWorkflow accepted/);
    });
  }

  it('without a plant, the same run is clean', async () => {
    const r = await runTarget(definitions, { runs: 3_000, seed: 2 });
    expect(r.failure).toBeUndefined();
  });
});
