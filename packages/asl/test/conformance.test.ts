import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CaseResult, runConformance } from '../src/conformance/index.js';

// The recorded Step Functions executions are kept outside the repository: STEPFOLD_ASL_CORPUS
// names their folder (default: the corpus folder beside the repository). Without it these tests
// are skipped. `l1-floor.json` names the cases that pass L1 (names only): none may regress.

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const corpus = process.env['STEPFOLD_ASL_CORPUS'] ?? resolve(repo, '../shared/asl');
const floor = JSON.parse(readFileSync(join(here, 'l1-floor.json'), 'utf8')) as string[];

describe.skipIf(!existsSync(corpus))('the recorded Step Functions executions, replayed', () => {
  it('every case that passed L1 still passes it', { timeout: 600_000 }, async () => {
    const { results, summary } = await runConformance(corpus);
    const byCase = new Map<string, CaseResult>(results.map((r) => [r.case, r]));
    const regressed = floor
      .filter((id) => byCase.get(id)?.l1 !== 'pass')
      .map((id) => `${id}: ${byCase.get(id)?.reason ?? 'missing from the corpus'}`);
    expect(regressed).toEqual([]);
    // Printed so a run shows how far the importer got (the floor only ever grows).
    console.log(
      `ASL conformance: ${summary.cases} cases, L1 ${summary.l1.pass} pass, ${summary.l1.fail} fail`,
    );
  });
});
