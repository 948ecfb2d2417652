import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli } from './cli.js';

/** Writes a case folder in the recorded-corpus format. */
function writeCase(root: string, id: string, files: Record<string, unknown>): void {
  const dir = join(root, id);
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(files))
    writeFileSync(join(dir, name), JSON.stringify(value, null, 2));
}

const FN = 'arn:aws:lambda:eu-west-1:111111111111:function:greet';

/** Two cases of our own: one the importer matches, one whose recording says otherwise. */
function corpus(): string {
  const root = mkdtempSync(join(tmpdir(), 'stepfold-asl-'));
  const levels = { L1: true, L2: true, L3: false };
  const runs = [{ dir: '.', context: {}, normalise: ['N1', 'N2'] }];
  const definition = {
    StartAt: 'Greet',
    States: { Greet: { Type: 'Task', Resource: FN, ResultPath: '$.greeting', End: true } },
  };
  const lambdas = [
    {
      state: 'Greet',
      kind: 'lambda-arn',
      resource: FN,
      input: { name: 'Ada' },
      result: { output: 'hello Ada' },
    },
  ];
  const events = [
    { type: 'ExecutionStarted' },
    { type: 'TaskStateEntered', state: 'Greet' },
    { type: 'LambdaFunctionScheduled' },
    { type: 'LambdaFunctionStarted' },
    { type: 'LambdaFunctionSucceeded' },
    { type: 'TaskStateExited', state: 'Greet' },
    { type: 'ExecutionSucceeded' },
  ];
  writeCase(root, 'demo/greets', {
    'case.json': { id: 'demo/greets', kind: 'execution', levels, runs },
    'definition.asl.json': definition,
    'input.json': { name: 'Ada' },
    'lambdas.json': lambdas,
    'expected.json': { status: 'SUCCEEDED', output: { name: 'Ada', greeting: 'hello Ada' }, events },
  });
  writeCase(root, 'demo/recorded-otherwise', {
    'case.json': { id: 'demo/recorded-otherwise', kind: 'execution', levels, runs },
    'definition.asl.json': definition,
    'input.json': { name: 'Ada' },
    'lambdas.json': lambdas,
    'expected.json': { status: 'SUCCEEDED', output: { name: 'Ada', greeting: 'bonjour Ada' }, events },
  });
  return root;
}

describe('stepfold asl conformance', () => {
  it('prints one JSON object per case, with the reason of a failure, then the summary', async () => {
    const r = await cli(['asl', 'conformance', corpus(), '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ case: 'demo/greets', l1: 'pass', l2: 'pass', l3: 'n/a' });
    expect(lines[1]).toMatchObject({ case: 'demo/recorded-otherwise', l1: 'fail', l2: 'pass', l3: 'n/a' });
    expect(lines[1]!['reason']).toContain('bonjour Ada');
    expect(lines[2]).toEqual({
      summary: {
        cases: 2,
        l1: { pass: 1, fail: 1, 'n/a': 0 },
        l2: { pass: 2, fail: 0, 'n/a': 0 },
        l3: { pass: 0, fail: 0, 'n/a': 2 },
      },
    });
  });

  it('refuses a directory that does not exist', async () => {
    const r = await cli(['asl', 'conformance', join(tmpdir(), 'no-such-corpus-dir'), '--json']);
    expect(r.code).toBe(EXIT.usage);
  });
});
