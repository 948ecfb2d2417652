import { Code } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import type { StepfoldAppProps } from '../src/index.js';

// The code comes one way: an entry file (bundled) or built code with handler names, never both
// and never neither. The @ts-expect-error lines are checked by `pnpm typecheck`, which fails if a
// line stops being an error.

const code = Code.fromInline('exports.api = async () => ({})');

describe('StepfoldAppProps', () => {
  it('takes an entry file with bundling options, or built code with handler names', () => {
    const entry: StepfoldAppProps = { entry: 'src/lambda.ts', bundling: { minify: false } };
    const built: StepfoldAppProps = { code, handlers: { api: 'main.api' } };
    expect([entry, built]).toHaveLength(2);
  });

  it('refuses both ways at once, neither, and options of the other way', () => {
    // @ts-expect-error: entry and code together
    const both: StepfoldAppProps = { entry: 'src/lambda.ts', code };
    // @ts-expect-error: no code at all
    const neither: StepfoldAppProps = { tableName: 'orders' };
    // @ts-expect-error: bundling applies to an entry only
    const bundledBuilt: StepfoldAppProps = { code, bundling: { minify: false } };
    // @ts-expect-error: handler names apply to built code only (an entry's are its exports)
    const namedEntry: StepfoldAppProps = { entry: 'src/lambda.ts', handlers: { api: 'main.api' } };
    expect([both, neither, bundledBuilt, namedEntry]).toHaveLength(4);
  });
});
