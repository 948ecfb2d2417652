import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

/** A folder with a state machine and a module of its Lambda functions. */
function machineFiles(): { dir: string; machine: string; functions: string } {
  const dir = mkdtempSync(join(tmpdir(), 'stepfold-asl-run-'));
  const machine = join(dir, 'greeting.asl.json');
  writeFileSync(
    machine,
    JSON.stringify({
      StartAt: 'Greet',
      States: {
        Greet: {
          Type: 'Task',
          Resource: FN,
          ResultPath: '$.greeting',
          Retry: [{ ErrorEquals: ['Busy'], IntervalSeconds: 30, MaxAttempts: 2 }],
          Next: 'Pause',
        },
        Pause: { Type: 'Wait', Seconds: 3600, Next: 'Done' },
        Done: { Type: 'Pass', Parameters: { 'text.$': "States.Format('{}!', $.greeting)" }, End: true },
      },
    }),
  );
  const functions = join(dir, 'functions.mjs');
  writeFileSync(
    functions,
    `let calls = 0;
export function greet(input) {
  if (++calls === 1) throw Object.assign(new Error('try again'), { name: 'Busy' });
  return 'hello ' + input.name;
}
`,
  );
  return { dir, machine, functions };
}

describe('stepfold asl import', () => {
  it('prints the stepfold definitions, or writes them with --out', async () => {
    const { dir, machine } = machineFiles();
    const r = await cli(['asl', 'import', machine, '--json']);
    expect(r.code).toBe(EXIT.ok);
    const out = JSON.parse(r.stdout) as {
      definition: { name: string; steps: Record<string, unknown> };
      unsupported: unknown[];
    };
    expect(out.definition.name).toBe('greeting');
    expect(Object.keys(out.definition.steps)).toEqual(
      expect.arrayContaining(['Greet', 'Greet:route', 'Pause:wait', 'Done']),
    );
    expect(out.unsupported).toEqual([]);
    const file = join(dir, 'greeting.stepfold.json');
    const w = await cli(['asl', 'import', machine, '--out', file, '--name', 'hello']);
    expect(w.code).toBe(EXIT.ok);
    expect(w.stdout).toContain(`wrote ${file}: workflow hello`);
    expect(JSON.parse(readFileSync(file, 'utf8')).definition.name).toBe('hello');
  });

  it('lists every part it cannot run and exits 5', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-asl-import-'));
    const file = join(dir, 'queue.asl.json');
    writeFileSync(
      file,
      JSON.stringify({
        StartAt: 'Send',
        States: {
          Send: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', Next: 'Slow' },
          Slow: { Type: 'Task', Resource: FN, TimeoutSeconds: 5, End: true },
        },
      }),
    );
    const r = await cli(['asl', 'import', file]);
    expect(r.code).toBe(EXIT.invalid);
    expect(r.stdout).toContain('2 part(s) refused');
    expect(r.stdout).toContain('Send Resource (unsupported)');
    expect(r.stdout).toContain('Slow TimeoutSeconds (unsupported)');
  });
});

describe('stepfold asl run', () => {
  it('runs it with the module’s functions on a simulated clock and prints the output and the history', async () => {
    const { machine, functions } = machineFiles();
    const r = await cli([
      'asl',
      'run',
      machine,
      '--handlers',
      functions,
      '--input',
      '{"name":"Ada"}',
      '--history',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    const out = JSON.parse(r.stdout) as { status: string; output: unknown; history: Array<{ type: string }> };
    expect(out.status).toBe('completed');
    expect(out.output).toEqual({ text: 'hello Ada!' });
    expect(out.history.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'WaitStateEntered',
      'WaitStateExited',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
    const text = await cli(['asl', 'run', machine, '--handlers', functions, '--input', '{"name":"Bo"}']);
    expect(text.stdout).toContain('output: {"text":"hello Bo!"}');
  });
});
