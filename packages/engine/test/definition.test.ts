import { createHash } from 'node:crypto';
import { canonicalJson, defineWorkflow, definitionHash, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { issuesOf } from './definition-issues.js';
import { orderWorkflow } from './fixtures.js';

describe('definitions', () => {
  it('the builder links steps in order and produces plain JSON', () => {
    expect(orderWorkflow.start).toBe('reserve');
    expect(orderWorkflow.steps.reserve).toMatchObject({
      kind: 'task',
      next: 'charge',
      compensate: 'releaseStock',
    });
    expect(orderWorkflow.steps.email).not.toHaveProperty('next');
    expect(JSON.parse(JSON.stringify(orderWorkflow))).toEqual(orderWorkflow);
  });

  it('reports every problem at once', () => {
    const issues = issuesOf(() =>
      defineWorkflow({
        name: 'bad',
        version: 1,
        start: 'a',
        steps: [
          { id: 'a', kind: 'task', handler: 'h', next: 'ghost' },
          { id: 'a', kind: 'task', handler: 'h2' },
          { id: 'island', kind: 'task', handler: 'h' },
        ],
      }),
    );
    expect(issues.some((i) => i.includes('duplicate step id "a"'))).toBe(true);
    expect(issues.some((i) => i.includes('target "ghost" does not exist'))).toBe(true);
    expect(issues.some((i) => i.includes('steps.island: unreachable'))).toBe(true);
  });

  it('rejects unknown keys and wrong types', () => {
    const issues = issuesOf(() =>
      defineWorkflow({
        name: 'bad',
        version: 0,
        start: 'a',
        // @ts-expect-error unknown key on purpose
        steps: { a: { kind: 'task', handler: 'h', retries: 3 } },
      }),
    );
    expect(issues.some((i) => i.startsWith('version'))).toBe(true);
    expect(issues.some((i) => i.includes('retries'))).toBe(true);
  });

  it('rejects a cycle without a waiting step but accepts one with a wait', () => {
    const issues = issuesOf(() =>
      defineWorkflow({
        name: 'loop',
        version: 1,
        start: 'a',
        steps: {
          a: { kind: 'task', handler: 'h', next: 'b' },
          b: { kind: 'choice', branches: [{ when: { var: 'input.again' }, next: 'a' }], otherwise: 'end' },
          end: { kind: 'succeed' },
        },
      }),
    );
    expect(issues.some((i) => i.includes('cycle with no waiting step'))).toBe(true);
    const ok = defineWorkflow({
      name: 'loop',
      version: 1,
      start: 'a',
      steps: {
        a: { kind: 'task', handler: 'h', next: 'w' },
        w: { kind: 'wait', signal: 'more', next: 'b' },
        b: { kind: 'choice', branches: [{ when: { var: 'input.again' }, next: 'a' }], otherwise: 'end' },
        end: { kind: 'succeed' },
      },
    });
    expect(ok.steps.w?.kind).toBe('wait');
  });

  it('rejects a parallel branch that jumps out of its branch', () => {
    const issues = issuesOf(() =>
      defineWorkflow({
        name: 'p',
        version: 1,
        start: 'fork',
        steps: {
          fork: { kind: 'parallel', branches: ['x', 'y'], next: 'after' },
          x: { kind: 'task', handler: 'h', next: 'after' },
          y: { kind: 'task', handler: 'h' },
          after: { kind: 'task', handler: 'h' },
        },
      }),
    );
    expect(issues.some((i) => i.includes('must not jump out of its branch'))).toBe(true);
  });

  it('rejects unsafe conditions and data paths', () => {
    const issues = issuesOf(() =>
      defineWorkflow({
        name: 'c',
        version: 1,
        start: 'c',
        steps: {
          c: {
            kind: 'choice',
            branches: [
              { when: { eval: 'process.exit()' } as never, next: 'a' },
              { when: { '==': [{ var: 'input.__proto__.x' }, 1] }, next: 'a' },
            ],
            otherwise: 'a',
          },
          a: { kind: 'task', handler: 'h', input: { x: 'env.SECRET' } },
        },
      }),
    );
    expect(issues.some((i) => i.includes('unknown operator "eval"'))).toBe(true);
    expect(issues.some((i) => i.includes('reserved segment'))).toBe(true);
    expect(issues.some((i) => i.includes('must start with input or outputs'))).toBe(true);
  });

  it('has a stable content hash that ignores key order and changes with content', () => {
    const a = {
      name: 'h',
      version: 1,
      start: 'x',
      steps: { x: { kind: 'task' as const, handler: 'h', timeoutMs: 5 } },
    };
    const b = {
      steps: { x: { timeoutMs: 5, handler: 'h', kind: 'task' as const } },
      start: 'x',
      version: 1,
      name: 'h',
    };
    expect(definitionHash(a)).toBe(definitionHash(b));
    expect(definitionHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(definitionHash({ ...a, steps: { x: { ...a.steps.x, timeoutMs: 6 } } })).not.toBe(
      definitionHash(a),
    );
  });

  it('the hash is SHA-256 of the canonical JSON, one block or many, any script', () => {
    for (const description of ['', 'abc', 'é✓𝄞 '.repeat(40), 'x'.repeat(1_999)]) {
      const d = defineWorkflow({
        name: 'h',
        version: 1,
        start: 'x',
        ...(description ? { description } : {}),
        steps: { x: { kind: 'task', handler: 'h' } },
      });
      expect(definitionHash(d)).toBe(createHash('sha256').update(canonicalJson(d)).digest('hex'));
    }
  });

  it('the builder reports a duplicate id through build() as one issue (no echo of a cycle)', () => {
    const issues = issuesOf(() =>
      workflow('d', 1)
        .task('a', { handler: 'h' })
        .task('b', { handler: 'h' })
        // @ts-expect-error duplicate step id "a"
        .task('a', { handler: 'h' })
        .build(),
    );
    expect(issues).toEqual(['steps.2.id: duplicate step id "a"']);
  });
});
