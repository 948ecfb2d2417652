// Type-checking cost of the typed builder: `tsc --noEmit` on a 50-step typed definition (handler
// types, a declared input, every step mapping earlier outputs) against the same 50 steps written as
// an untyped JSON definition, alternated in one run. Wall time of the whole tsc process.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { costRow, type Group } from '../row.js';

const STEPS = 50;
const WORK = fileURLToPath(new URL('../../.tsc-work/', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function typedSource(): string {
  const handlers = Array.from(
    { length: STEPS },
    (_, i) =>
      `  h${i}: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({ value: input.value + ${i}, label: \`\${input.label}-${i}\`, at: new Date() }),`,
  ).join('\n');
  const steps = Array.from({ length: STEPS }, (_, i) => {
    const from =
      i === 0
        ? "value: 'input.amount', label: 'input.name'"
        : `value: 'outputs.s${i - 1}.value', label: 'outputs.s${i - 1}.label'`;
    return `  .task('s${i}', { handler: 'h${i}', input: { ${from} } })`;
  }).join('\n');
  return `import { type HandlerContext, type StepOutputsOf, type, workflow } from '@stepfold/engine';
const handlers = {
${handlers}
};
export const wf = workflow('typed', 1)
  .handlers<typeof handlers>()
  .input(type<{ amount: number; name: string }>())
${steps}
  .build();
export type Last = StepOutputsOf<typeof wf>['s${STEPS - 1}'];
`;
}

function untypedSource(): string {
  const steps = Array.from({ length: STEPS }, (_, i) => {
    const from =
      i === 0
        ? "value: 'input.amount', label: 'input.name'"
        : `value: 'outputs.s${i - 1}.value', label: 'outputs.s${i - 1}.label'`;
    return `    { id: 's${i}', kind: 'task', handler: 'h${i}', input: { ${from} }${i < STEPS - 1 ? `, next: 's${i + 1}'` : ''} },`;
  }).join('\n');
  return `import { defineWorkflow } from '@stepfold/engine';
export const wf = defineWorkflow({
  name: 'untyped',
  version: 1,
  start: 's0',
  steps: [
${steps}
  ],
});
`;
}

function project(name: string, source: string): string {
  const dir = `${WORK}${name}/`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}main.ts`, source);
  writeFileSync(
    `${dir}tsconfig.json`,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ['main.ts'],
    }),
  );
  return dir;
}

function seconds(dir: string): number {
  const t = process.hrtime.bigint();
  execFileSync(process.execPath, [TSC, '-p', dir], { stdio: 'pipe' });
  return Number(process.hrtime.bigint() - t) / 1e9;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** tsc time of a 50-step typed definition vs the same steps as untyped JSON. */
export const types: Group = {
  name: 'types',
  async run() {
    rmSync(WORK, { recursive: true, force: true });
    const typed = project('typed', typedSource());
    const untyped = project('untyped', untypedSource());
    seconds(typed); // warm the file cache
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < 3; i++) {
      ours.push(seconds(typed));
      base.push(seconds(untyped));
      base.push(seconds(untyped));
      ours.push(seconds(typed));
    }
    rmSync(WORK, { recursive: true, force: true });
    return [
      costRow(
        'types-50-steps',
        Number(median(ours).toFixed(2)),
        Number(median(base).toFixed(2)),
        's tsc',
        null,
        {
          note: `tsc --noEmit of a ${STEPS}-step typed definition (handlers<typeof impl>(), declared input, each step mapping the previous output) vs the same steps as untyped JSON; whole-process wall time, median of 6 alternated runs`,
          details: { typed: ours, untyped: base },
        },
      ),
    ];
  },
};
