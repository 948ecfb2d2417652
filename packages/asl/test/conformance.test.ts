import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CaseResult, runConformance } from '../src/conformance/index.js';

// The recorded Step Functions executions are kept outside the repository: STEPFOLD_ASL_CORPUS
// names their folder (default: the corpus folder beside the repository). Without it these tests
// are skipped. `floor.json` names, per level, the cases that pass it (names only): none may regress.

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const corpus = process.env['STEPFOLD_ASL_CORPUS'] ?? resolve(repo, '../shared/asl');
const floor = JSON.parse(readFileSync(join(here, 'floor.json'), 'utf8')) as Record<
  'l1' | 'l2' | 'l3',
  string[]
>;

describe.skipIf(!existsSync(corpus))('the recorded Step Functions executions, replayed', () => {
  it('every case that passed a level still passes it', { timeout: 600_000 }, async () => {
    const { results, summary } = await runConformance(corpus);
    const byCase = new Map<string, CaseResult>(results.map((r) => [r.case, r]));
    const regressed = (['l1', 'l2', 'l3'] as const).flatMap((level) =>
      floor[level]
        .filter((id) => byCase.get(id)?.[level] !== 'pass')
        .map((id) => `${level} ${id}: ${byCase.get(id)?.reason ?? 'missing from the corpus'}`),
    );
    expect(regressed).toEqual([]);
    // Printed so a run shows how far the importer got (the floor only ever grows).
    const counts = (['l1', 'l2', 'l3'] as const).map(
      (l) => `${l.toUpperCase()} ${summary[l].pass}/${summary.cases - summary[l]['n/a']}`,
    );
    console.log(`ASL conformance over ${summary.cases} cases: ${counts.join(', ')} pass`);
  });
});
