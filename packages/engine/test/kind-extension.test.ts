import { describe, expect, it } from 'vitest';
import type { CompiledWorkflow } from '../src/definition/compile.js';
import { kindTable, stepUnion } from '../src/definition/kind.js';
import { DEFINITION_KINDS, KINDS } from '../src/definition/kinds/index.js';
import type { WorkflowDefinition } from '../src/definition/schema.js';
import type { DiagramKind } from '../src/diagram/kind.js';
import { nodeIds, stepEdges, stepNode } from '../src/diagram/kind.js';
import { DIAGRAM_KINDS } from '../src/diagram/kinds.js';
import type * as z from '../src/mini-schema.js';
import { createFlow } from '../src/reducer/flow.js';
import { REDUCER_KINDS } from '../src/reducer/kinds/index.js';
import { initialSnapshot } from '../src/reducer/snapshot-check.js';
import type { Cx } from '../src/reducer/transition-context.js';
import { ping } from './ping-kind/definition.js';
import { pingDiagram } from './ping-kind/diagram.js';
import { pingRules } from './ping-kind/reducer.js';

// Adding a step kind is one module per layer plus one entry in the list of kinds. The engine's
// list is static (its types and its bundle come from it), so a test cannot add to it: instead a
// kind of the test's own (`ping-kind/`: its definition module, reducer rules and diagram row) goes
// through the same functions the built-in list feeds: the step union and the kinds table, the
// flow over the tables of rules, and the diagram's node and edges.

const kinds = [...KINDS, ping] as const;
type Kind = (typeof kinds)[number]['kind'];

describe('a kind of its own, through the functions the list of kinds feeds', () => {
  it('parses: the step union and the table of a list with one more kind', () => {
    const schema = stepUnion(kinds);
    const table = kindTable(kinds);
    expect(schema.parse({ kind: 'ping', times: 2, next: 'done' })).toEqual({
      kind: 'ping',
      times: 2,
      next: 'done',
    });
    expect(schema.safeParse({ kind: 'ping', times: 0 }).success).toBe(false);
    expect(schema.safeParse({ kind: 'ping', tims: 2 }).success).toBe(false); // strict, as every kind
    expect(schema.parse({ kind: 'succeed' })).toEqual({ kind: 'succeed' }); // the built-ins still parse
    expect(Object.keys(table)).toEqual([...Object.keys(DEFINITION_KINDS), 'ping']);
    // The facts every check reads: links and targets come from the shared fields.
    expect(table.ping.links).toBe(true);
    expect(table.ping.targets({ kind: 'ping', next: 'done' })).toEqual(['done']);
    expect(table.ping.listensFor?.({ kind: 'ping', id: 'p' })).toBe('pong');
    // Its type is in the union too.
    const step: z.infer<typeof schema> = { kind: 'ping', times: 3 };
    expect(step.kind).toBe('ping');
  });

  it('reduces: the flow over tables with its rules takes it like any kind', () => {
    const rules = { ...REDUCER_KINDS, ping: pingRules };
    const flow = createFlow({ ...DEFINITION_KINDS, ping }, rules);
    // Hand-compiled: `compileWorkflow` knows the built-in kinds only.
    const definition = {
      name: 'pinger',
      version: 1,
      start: 'p',
      steps: {
        p: { id: 'p', kind: 'ping', times: 2, next: 'done' },
        done: { id: 'done', kind: 'succeed', output: 'outputs.p' },
      },
    } as unknown as WorkflowDefinition;
    const wf: CompiledWorkflow = {
      definition,
      hash: 'h',
      regions: new Map(),
      pivots: [],
      signals: new Set(),
    };
    const s = initialSnapshot(wf, { type: 'start', at: 0, id: 'i' }, null);
    s.inbox.push({ name: 'pong', payload: null, at: 0 });
    const cx: Cx = { wf, table: { rules, flow }, s, at: 1, budget: 100, logged: [] };

    flow.enter(cx, 'p');
    // The buffered pong was handed over on entry, as to any kind that listens.
    expect(s.inbox).toEqual([]);
    expect(s.steps.p).toMatchObject({ status: 'active', output: 1 });
    expect(s.status).toBe('running');

    flow.deliverSignal(cx, 'p', { name: 'pong', payload: null, at: 1 });
    expect(s.steps.p).toMatchObject({ status: 'completed', output: 2 });
    expect(s.status).toBe('completed');
    expect(s.output).toBe(2);
    expect(cx.logged?.map((e) => `${e.type}${e.step ? ` ${e.step}` : ''}`)).toEqual([
      'step.started p',
      'signal.received p',
      'signal.received p',
      'step.started done',
      'workflow.completed',
    ]);
  });

  it('draws: its node in its shape and its edge to next', () => {
    const step = { kind: 'ping' as const, id: 'p', times: 2, next: 'done' };
    expect(stepNode(pingDiagram, step)).toBe(`${nodeIds.step('p')}(("p<br/>ping ×2"))`);
    expect(stepEdges(pingDiagram, step)).toEqual([
      { from: nodeIds.step('p'), to: nodeIds.step('done'), arrow: '-->' },
    ]);
    // Without a next, its edge goes where its path ends: the workflow's end, or its branch's join.
    expect(stepEdges(pingDiagram, { ...step, next: undefined }, [{ parallel: 'fork', branch: 0 }])).toEqual([
      { from: nodeIds.step('p'), to: nodeIds.join('fork'), arrow: '-->' },
    ]);
  });

  it('the compiler makes every layer handle it: a table without its row does not compile', () => {
    const drawn: { readonly [K in Kind]: DiagramKind<never> } = { ...DIAGRAM_KINDS, ping: pingDiagram };
    // @ts-expect-error: the diagram's table for the longer list lacks ping
    const lacking: { readonly [K in Kind]: DiagramKind<never> } = { ...DIAGRAM_KINDS };
    // @ts-expect-error: so does the reducer's
    const rules: { readonly [K in Kind]: unknown } = { ...REDUCER_KINDS };
    expect(Object.keys(drawn)).toContain('ping');
    expect([lacking, rules]).toHaveLength(2);
  });
});
