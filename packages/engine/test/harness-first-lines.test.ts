import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The first line of the compiler's error for each mistake of the harness and the builder that the
// types catch names the culprit: a program of mistakes, one per line, is compiled by tsc under the
// strictest options a consumer may use, and each error's first line is checked.

const ENGINE = fileURLToPath(new URL('../', import.meta.url));
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

const PROGRAM = `
import { composition, createHarness, workflow, type HandlerContext } from '@stepfold/engine';
import * as z from 'zod/mini';

const line = workflow('line', 1).input<{ sku: string }>().task('pick', { handler: 'pick' }).build();
const handlers = {
  submit: async ({ input }: HandlerContext<{ amount: number }>) => ({ id: 'E-' + input.amount }),
  pay: async ({ input }: HandlerContext<{ by: string }>) => ({ paidBy: input.by }),
};
const expense = workflow('expense', 1)
  .handlers<typeof handlers>()
  .input(z.object({ amount: z.number() }))
  .signal('approve', z.object({ decision: z.enum(['approve', 'reject']), by: z.string() }))
  .signal('note', z.object({ text: z.string() }))
  .task('submit', { handler: 'submit' })
  .human('approve')
  .task('pay', { handler: 'pay', input: { by: 'outputs.approve.by' } })
  .child('first', { workflow: line, input: { sku: 'outputs.approve.by' } })
  .wait('noted', { signal: 'note' })
  .build();
const h = createHarness(expense, { kinds: [composition] });
const declared = workflow('w', 1).output<{ n: number }>();
export const mistakes = () => {
`;

/** Each mistake, one line of the program, with what the first line of its error must say. */
const MISTAKES: Array<[code: string, firstLine: string]> = [
  [`h.complete('approve', { decision: 'approve', by: 'ana' });`, `Argument of type '"approve"'`],
  [`h.complete('first', { picked: 'A' });`, `Argument of type '"first"'`],
  [`h.complete('sbumit', { id: 'E-1' });`, `Argument of type '"sbumit"'`],
  [`h.fail('noted', 'boom');`, `Argument of type '"noted"'`],
  [`h.complete('pay', { paidBy: 1 });`, `Type 'number' is not assignable to type 'string'`],
  [`h.signal('approve', { decision: 'aprove', by: 'ana' });`, `Type '"aprove"' is not assignable`],
  [`h.signal('aprove', { decision: 'approve', by: 'ana' });`, `Argument of type '"aprove"'`],
  [`h.signal('note');`, 'Expected 2-3 arguments, but got 1'],
  [`h.start();`, 'Expected 1-2 arguments, but got 0'],
  [`h.start({ amount: 'ten' });`, `Type 'string' is not assignable to type 'number'`],
  [`h.requeue({ step: 'approve' });`, `Type '"approve"' is not assignable`],
  [`h.output('paymnt');`, `Argument of type '"paymnt"'`],
  [`h.child('pay');`, `Argument of type '"pay"'`],
  [`void h.snapshot.steps.paymnt;`, `Property 'paymnt' does not exist`],
  [`declared.succeed('done', { end: true });`, 'a succeed before any parallel step ends the workflow'],
];

let work: string | undefined;
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** tsc's errors on the program, as the first line of each by its line number. */
async function firstLines(): Promise<Map<number, string>> {
  work = mkdtempSync(join(tmpdir(), 'stepfold-first-lines-'));
  mkdirSync(join(work, 'node_modules', '@stepfold'), { recursive: true });
  symlinkSync(ENGINE, join(work, 'node_modules', '@stepfold', 'engine'), 'dir');
  symlinkSync(join(ENGINE, 'node_modules', 'zod'), join(work, 'node_modules', 'zod'), 'dir');
  writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const program = `${PROGRAM}${MISTAKES.map(([code]) => `  ${code}`).join('\n')}\n};\n`;
  writeFileSync(join(work, 'app.ts'), program);
  const strictest = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noPropertyAccessFromIndexSignature: true,
    noImplicitReturns: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    allowUnusedLabels: false,
    allowUnreachableCode: false,
    isolatedModules: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    skipLibCheck: true,
    noEmit: true,
    types: [],
  };
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: strictest, files: ['app.ts'] }),
  );
  const out = await promisify(execFile)(process.execPath, [TSC, '-p', '.'], { cwd: work }).then(
    () => '',
    (e: { stdout?: string }) => e.stdout ?? String(e),
  );
  const first = new Map<number, string>();
  for (const m of out.matchAll(/^app\.ts\((\d+),\d+\): error TS\d+: (.*)$/gm)) {
    const line = Number(m[1]);
    if (!first.has(line)) first.set(line, m[2]!);
  }
  return first;
}

describe('first lines of the harness and builder errors', () => {
  it('name the culprit, one error per mistake and none elsewhere', async () => {
    const errors = await firstLines();
    const offset = PROGRAM.split('\n').length;
    const got = MISTAKES.map(([code], i) => [code, errors.get(offset + i) ?? '(no error)']);
    for (const [i, [, want]] of MISTAKES.entries())
      expect(got[i]![1], `${got[i]![0]}\n${[...errors].join('\n')}`).toContain(want);
    // No error outside the mistakes' lines: the program around them is correct.
    const lines = [...errors.keys()].filter((l) => l < offset || l >= offset + MISTAKES.length);
    expect(lines.map((l) => `${l}: ${errors.get(l)}`)).toEqual([]);
  }, 120_000);
});
