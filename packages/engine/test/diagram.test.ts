import type * as engine from '@stepfold/engine';
import {
  conditionText,
  createHarness,
  defineWorkflow,
  encodeId,
  nodeIds,
  type Snapshot,
  toMermaid,
  workflow,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as cloudflareWorker from '../../../examples/cloudflare-worker/src/workflows.js';
import * as lambdaDynamo from '../../../examples/lambda-dynamo/src/workflows.js';
import * as nodeWorker from '../../../examples/node-worker/src/workflows.js';
import { documentEntity as exampleEntity } from '../../../examples/src/document-entity.js';
import { orderWorkflow as orderDemo } from '../../../examples/src/order-demo.js';
import { orderSaga } from '../../../examples/src/order-saga.js';
import { order as readmeOrder } from '../../../examples/src/readme-example.js';
import { sellerRegistration } from '../../../examples/src/seller-registration.js';
import { documentEntity } from './entity-fixtures.js';
import { approvalWorkflow, orderWorkflow } from './fixtures.js';
import { decode, type FlowDb, useMermaid, type Vertex } from './mermaid-parser.js';
import { blockArb, compile } from './saga-gen.js';

// Every diagram is checked by the real Mermaid parser (mermaid-parser.ts), and its outcome read
// back from the parser's own flowchart database: vertices, subgraphs, edges and classes.

const parsed = useMermaid();

/** A vertex's label, decoded, one entry per line. */
const lines = (v: Vertex | undefined) => decode(v?.text ?? '').split(/<br\/?>/);
/** The first line of a vertex's label (the step id). */
const title = (v: Vertex | undefined) => lines(v)[0];

/** Checks the structure every diagram of `def` must have and returns the database. */
async function checkDiagram(def: engine.WorkflowDefinition, snapshot?: Snapshot): Promise<FlowDb> {
  const text = toMermaid(def, snapshot);
  const db = await parsed(text).catch((e: Error) => {
    throw new Error(`${def.name}: ${e.message}\n${text}`);
  });
  const vertices = db.getVertices();
  const steps = Object.values(def.steps);
  for (const s of steps) expect(title(vertices.get(nodeIds.step(s.id)))).toBe(s.id);
  const parallels = steps.filter((s) => s.kind === 'parallel');
  const subgraphs = db.getSubGraphs();
  expect(subgraphs).toHaveLength(parallels.reduce((n, p) => n + p.branches.length, 0));
  for (const p of parallels) {
    p.branches.forEach((entry, i) => {
      const sub = subgraphs.find((g) => g.id === nodeIds.branch(p.id, i));
      expect(sub?.nodes).toContain(nodeIds.step(entry));
    });
  }
  expect(db.getEdges().some((e) => e.start === nodeIds.start && e.end === nodeIds.step(def.start))).toBe(
    true,
  );
  return db;
}

/** Vertex ids carrying each class. */
function classesOf(db: FlowDb): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const v of db.getVertices().values()) {
    for (const c of v.classes) out[c] = [...(out[c] ?? []), v.id];
  }
  for (const ids of Object.values(out)) ids.sort();
  return out;
}

const s = (...ids: string[]) => ids.map(nodeIds.step).sort();

// The fixtures of scenarios-parallel.test.ts, copied: test files cannot be imported.
const nested = workflow('nested', 1)
  .task('A', { handler: 'h', compensate: 'c' })
  .savepoint('sp')
  .parallel('outer', { branches: ['X', 'W'] })
  .succeed('done')
  .task('X', { handler: 'h', compensate: 'c' })
  .parallel('inner', { branches: ['Y', 'Z'], end: true })
  .task('Y', { handler: 'h', compensate: 'c', end: true })
  .task('Z', { handler: 'h', compensate: 'c' })
  .parallel('deep', { branches: ['P', 'Q'], end: true })
  .task('P', { handler: 'h', compensate: 'c', end: true })
  .task('Q', { handler: 'h', compensate: 'c', end: true })
  .task('W', { handler: 'h', compensate: 'c', end: true })
  .build();
const choiceInBranch = workflow('choice-in-branch', 1)
  .parallel('fork', { branches: ['route', 'other'] })
  .succeed('done')
  .choice('route', {
    branches: [{ when: { '==': [{ var: 'input.express' }, true] }, next: 'express' }],
    otherwise: 'standard',
  })
  .task('express', { handler: 'express', compensate: 'undoExpress' })
  .task('express2', { handler: 'express', compensate: 'undoExpress', end: true })
  .task('standard', { handler: 'standard', compensate: 'undoStandard', end: true })
  .task('other', { handler: 'other', compensate: 'undoOther', end: true })
  .build();

/** One step of every kind. */
const everyKind = workflow('every-kind', 1)
  .task('t', { handler: 'work', compensate: 'undo', pivot: true })
  .choice('c', { branches: [{ when: { exists: 'input.skip' }, next: 'sv' }], otherwise: 'p' })
  .parallel('p', { branches: ['w', 'hu'], join: { atLeast: 1 } })
  .sleep('sl', { ms: 5000 })
  .collect('co', { signal: 'item', maxItems: 3, idleMs: 60_000 })
  .savepoint('sv')
  .choice('again', {
    branches: [{ when: { var: 'input.loop' }, next: 'can' }],
    otherwise: 'ok',
  })
  .continueAsNew('can')
  .succeed('ok')
  .wait('w', { signal: 'go', timeoutMs: 3_600_000, end: true })
  .human('hu', { timeoutMs: 86_400_000, onTimeout: 'f' })
  .task('after', { handler: 'after', end: true })
  .fail('f', { error: { message: 'nobody answered', code: 'NO_ANSWER' } })
  .build();

describe('toMermaid: every workflow in the repo parses', () => {
  const examples: Array<[string, engine.WorkflowDefinition]> = [
    ['examples/src order-demo', orderDemo],
    ['examples/src order-saga', orderSaga],
    ['examples/src readme-example', readmeOrder],
    ['examples/src seller-registration', sellerRegistration],
    ['examples/src document-entity', exampleEntity],
    ...nodeWorker.workflows.map((w) => [`node-worker ${w.name}`, w] as [string, engine.WorkflowDefinition]),
    ...lambdaDynamo.workflows.map(
      (w) => [`lambda-dynamo ${w.name}`, w] as [string, engine.WorkflowDefinition],
    ),
    ...cloudflareWorker.workflows.map(
      (w) => [`cloudflare-worker ${w.name}`, w] as [string, engine.WorkflowDefinition],
    ),
    ['fixtures order', orderWorkflow],
    ['fixtures approval (wait, timeout, sleep)', approvalWorkflow],
    ['entity-fixtures document (collect, choice, continueAsNew)', documentEntity({ batchesPerRun: 2 })],
    ['nested parallel', nested],
    ['choice in a parallel branch', choiceInBranch],
    ['every kind', everyKind],
  ];

  it.each(examples)('%s', async (_name, def) => {
    await checkDiagram(def);
  });

  it('random workflows with nested parallels, choices, waits and fails (saga generator)', async () => {
    const bodies = fc.sample(blockArb(0, 4), { numRuns: 40, seed: 7 });
    let subgraphs = 0;
    for (const body of bodies) {
      const { definition } = compile(body, 'compensate', [0]);
      subgraphs += (await checkDiagram(definition)).getSubGraphs().length;
    }
    expect(subgraphs).toBeGreaterThan(10); // the sample does nest parallels
  });
});

describe('toMermaid: what the diagram shows', () => {
  it('a shape per step kind, a start and an end', async () => {
    const db = await checkDiagram(everyKind);
    const v = db.getVertices();
    const shape = (id: string) => v.get(nodeIds.step(id))?.type;
    expect({
      task: shape('t'),
      choice: shape('c'),
      parallel: shape('p'),
      wait: shape('w'),
      human: shape('hu'),
      sleep: shape('sl'),
      collect: shape('co'),
      savepoint: shape('sv'),
      continueAsNew: shape('can'),
      succeed: shape('ok'),
      fail: shape('f'),
    }).toEqual({
      task: 'square',
      choice: 'diamond',
      parallel: 'hexagon',
      wait: 'lean_right',
      human: 'trapezoid',
      sleep: 'round',
      collect: 'cylinder',
      savepoint: 'subroutine',
      continueAsNew: 'odd',
      succeed: 'stadium',
      fail: 'inv_trapezoid',
    });
    expect(v.get(nodeIds.start)?.type).toBe('circle');
    expect(v.get(nodeIds.end)?.type).toBe('doublecircle');
    expect(lines(v.get(nodeIds.step('co')))).toEqual(['co', 'collect item · max 3 · idle 1min']);
    expect(lines(v.get(nodeIds.step('t')))).toEqual(['t', 'work() · pivot']);
  });

  it('edges: next, choice conditions, otherwise, timeouts, human outcomes, continue-as-new, compensation', async () => {
    const db = await checkDiagram(everyKind);
    const edges = db
      .getEdges()
      .map((e) => `${e.start} ${e.stroke === 'dotted' ? '-.->' : '-->'} ${e.end} ${decode(e.text)}`.trim());
    expect(edges).toEqual(
      expect.arrayContaining([
        `${nodeIds.step('c')} --> ${nodeIds.step('sv')} exists(input.skip)`,
        `${nodeIds.step('c')} --> ${nodeIds.step('p')} otherwise`,
        `${nodeIds.step('again')} --> ${nodeIds.step('can')} input.loop`,
        `${nodeIds.step('w')} -.-> ${nodeIds.failed} timeout 1h`,
        `${nodeIds.step('w')} --> ${nodeIds.join('p')}`,
        `${nodeIds.step('hu')} --> ${nodeIds.step('after')} approve`,
        `${nodeIds.step('hu')} -.-> ${nodeIds.failed} reject`,
        `${nodeIds.step('hu')} -.-> ${nodeIds.step('f')} timeout 1d`,
        `${nodeIds.step('p')} --> ${nodeIds.step('w')} branch 1`,
        `${nodeIds.join('p')} --> ${nodeIds.step('sl')}`,
        `${nodeIds.step('can')} -.-> ${nodeIds.start} next run`,
        `${nodeIds.step('ok')} --> ${nodeIds.end}`,
        `${nodeIds.step('f')} --> ${nodeIds.failed}`,
        `${nodeIds.step('t')} -.-> ${nodeIds.compensation('t')}`,
      ]),
    );
    expect(decode(db.getVertices().get(nodeIds.compensation('t'))?.text ?? '')).toBe('⟲ compensate: undo');
  });

  it('a subgraph per parallel branch, nested parallels as nested subgraphs', async () => {
    const db = await checkDiagram(nested);
    const byId = new Map(db.getSubGraphs().map((g) => [g.id, g]));
    expect([...byId.keys()].sort()).toEqual(
      [
        nodeIds.branch('outer', 0),
        nodeIds.branch('outer', 1),
        nodeIds.branch('inner', 0),
        nodeIds.branch('inner', 1),
        nodeIds.branch('deep', 0),
        nodeIds.branch('deep', 1),
      ].sort(),
    );
    expect(byId.get(nodeIds.branch('outer', 0))?.nodes).toEqual(
      expect.arrayContaining([nodeIds.step('X'), nodeIds.step('inner'), nodeIds.branch('inner', 1)]),
    );
    expect(byId.get(nodeIds.branch('inner', 1))?.nodes).toEqual(
      expect.arrayContaining([nodeIds.step('Z'), nodeIds.step('deep'), nodeIds.branch('deep', 0)]),
    );
    expect(byId.get(nodeIds.branch('deep', 1))?.nodes).toEqual([
      nodeIds.step('Q'),
      nodeIds.compensation('Q'),
    ]);
    expect(byId.get(nodeIds.branch('outer', 1))?.nodes).not.toContain(nodeIds.step('X'));
    expect(decode(byId.get(nodeIds.branch('outer', 1))?.title ?? '')).toBe('outer · branch 2: W');
    // Top-level steps are in no subgraph.
    const inSome = new Set(db.getSubGraphs().flatMap((g) => g.nodes));
    expect(inSome.has(nodeIds.step('A'))).toBe(false);
    expect(inSome.has(nodeIds.step('done'))).toBe(false);
  });

  it('accepts plain JSON (steps as a list) like the builder output, and refuses an invalid definition', async () => {
    const json: engine.DefinitionInput = {
      name: 'json',
      version: 2,
      start: 'a',
      steps: [
        { id: 'a', kind: 'task', handler: 'h', next: 'b' },
        { id: 'b', kind: 'human', signal: 'ok' },
      ],
    };
    const text = toMermaid(json);
    expect(text).toBe(toMermaid(defineWorkflow(json)));
    expect(text).toBe(
      toMermaid(workflow('json', 2).task('a', { handler: 'h' }).human('b', { signal: 'ok' }).build()),
    );
    await checkDiagram(defineWorkflow(json));
    expect(() => toMermaid({ ...json, start: 'nope' })).toThrow(
      expect.objectContaining({ code: 'INVALID_DEFINITION' }),
    );
  });

  it('is pure: the same text every time', () => {
    expect(toMermaid(nested)).toBe(toMermaid(nested));
  });
});

describe('toMermaid: states from a snapshot', () => {
  const classes = async (def: engine.WorkflowDefinition, snap: Snapshot) => {
    const db = await checkDiagram(def, snap);
    expect([...db.getClasses().keys()]).toEqual(
      expect.arrayContaining(['done', 'running', 'waiting', 'failed', 'compensated']),
    );
    return classesOf(db);
  };

  it('completed: every step and the end are done, and the path taken is drawn bold', async () => {
    const h = createHarness(orderWorkflow).start({ amount: 5 });
    h.complete('reserve');
    h.complete('charge');
    h.complete('email');
    expect(h.status).toBe('completed');
    const c = await classes(orderWorkflow, h.snapshot);
    expect(c.done).toEqual([...s('reserve', 'charge', 'email'), nodeIds.end].sort());
    expect(c.running).toBeUndefined();
    expect(toMermaid(orderWorkflow, h.snapshot)).toMatch(/linkStyle 0,1,3,5 stroke-width:3px/);
  });

  it('running, then waiting for a retry backoff', async () => {
    const h = createHarness(orderWorkflow).start({ amount: 5 });
    let c = await classes(orderWorkflow, h.snapshot);
    expect(c.running).toEqual(s('reserve'));
    h.complete('reserve');
    h.fail('charge', 'gateway timeout');
    expect(h.snapshot.timers.some((t) => t.kind === 'retry')).toBe(true);
    c = await classes(orderWorkflow, h.snapshot);
    expect(c).toMatchObject({ done: s('reserve'), waiting: s('charge') });
  });

  it('failed with compensation: the failed step, the compensated one, the untouched one uncoloured', async () => {
    const h = createHarness(orderWorkflow).start({ amount: 5 });
    h.complete('reserve');
    h.fail('charge', { message: 'declined', code: 'DECLINED', retryable: false });
    let c = await classes(orderWorkflow, h.snapshot);
    expect(c).toMatchObject({ failed: s('charge'), compensated: s('reserve') }); // compensating
    h.compensate('reserve');
    expect(h.status).toBe('failed');
    c = await classes(orderWorkflow, h.snapshot);
    expect(c).toMatchObject({ failed: s('charge'), compensated: s('reserve') });
    expect(c.done).toBeUndefined();
    expect(Object.values(c).flat()).not.toContain(nodeIds.step('email'));
  });

  it('waiting: a wait for a signal, a sleep, a human decision, a collect; parallel branches', async () => {
    const a = createHarness(approvalWorkflow).start();
    a.complete('draft');
    expect((await classes(approvalWorkflow, a.snapshot)).waiting).toEqual(s('approve'));
    a.signal('approved', {});
    expect(await classes(approvalWorkflow, a.snapshot)).toMatchObject({
      done: s('draft', 'approve'),
      waiting: s('cool'),
    });

    const entity = documentEntity({ batchesPerRun: 2 });
    const e = createHarness(entity).start({ doc: 'd' });
    e.signal('event', { n: 1 });
    expect((await classes(entity, e.snapshot)).waiting).toEqual(s('gather'));

    const p = createHarness(everyKind).start();
    p.complete('t');
    const c = await classes(everyKind, p.snapshot);
    // Both branches only wait (a signal, a decision): so does the parallel step that holds them.
    expect(c).toMatchObject({ done: s('t', 'c') });
    expect(c.waiting?.sort()).toEqual(s('p', 'w', 'hu').sort());
    expect(c.running).toBeUndefined();
    expect(c.done).not.toContain(nodeIds.join('p'));
    p.signal('hu', { decision: 'approve' });
    p.complete('after');
    // join at least 1: the parallel step and its join are done, w was abandoned.
    const after = await classes(everyKind, p.snapshot);
    expect(after.done).toEqual(expect.arrayContaining([...s('p', 'hu', 'after'), nodeIds.join('p')]));
    expect(after.waiting).toEqual(s('sl'));
  });
});

describe('toMermaid: hostile step ids and labels', () => {
  // Every character a step id may hold, Mermaid keywords, edge and class syntax in ids, and
  // condition literals full of quotes, brackets, entities and markup.
  const ids = [
    'end',
    'subgraph',
    'graph',
    'flowchart',
    'style',
    'class',
    'classDef',
    'linkStyle',
    'click',
    'default',
    'direction',
    'o',
    'x',
    'a--b',
    'a---b',
    'a-.-b',
    'a==b',
    'a:::done',
    'a@b',
    '1',
    '-',
    '_',
    'x_',
    'x_5f',
    'a/b+c=d',
    'A.B:C',
  ];
  const nasty = '"]) --> x; classDef <script>alert(1)</script> #quot; &amp; %% |`{{x}}` \\ ;\n end';
  const steps: Record<string, engine.StepDefinition> = {};
  ids.forEach((id, i) => {
    const next = ids[i + 1];
    steps[id] = next === undefined ? { kind: 'succeed' } : { kind: 'task', handler: `${id}:::done`, next };
  });
  steps.start = {
    kind: 'choice',
    branches: [
      { when: { '==': [{ var: 'input.name' }, nasty] }, next: ids[0]! },
      { when: { in: [{ var: 'input.tag' }, ['<b>', 'a"b', '#35;']] }, next: 'human/1' },
    ],
    otherwise: 'end',
  };
  steps['human/1'] = { kind: 'human', signal: 'sig:::x', timeoutMs: 1000, onTimeout: 'end', next: 'end' };
  const def = defineWorkflow({ name: 'hostile', version: 1, start: 'start', steps });

  it('maps ids to unique safe node ids and still parses, every label intact', async () => {
    const nodes = Object.keys(def.steps).map(nodeIds.step);
    expect(new Set(nodes).size).toBe(nodes.length);
    for (const n of nodes) expect(n).toMatch(/^s_[A-Za-z0-9_]+$/);
    expect(encodeId('x_')).not.toBe(encodeId('x_5f'));
    const db = await checkDiagram(def); // every step id is its vertex's first label line
    const labels = db.getEdges().map((e) => decode(e.text));
    const full = Array.from(conditionText({ '==': [{ var: 'input.name' }, nasty] }));
    expect(full.length).toBeGreaterThan(60);
    expect(labels).toContain(`${full.slice(0, 59).join('')}…`);
    expect(labels).toContain('input.tag in ["<b>","a\\"b","#35;"]');
    expect(lines(db.getVertices().get(nodeIds.step('a:::done')))).toEqual(['a:::done', 'a:::done:::done()']);
    expect(db.getVertices().get(nodeIds.step('a:::done'))?.classes).toEqual([]);
    const text = toMermaid(def);
    expect(text).not.toContain('<script>');
  });

  it('with a snapshot too', async () => {
    const h = createHarness(def).start({ name: 'not nasty', tag: '#35;' });
    h.signal('sig:::x', { decision: 'approve' });
    const db = await checkDiagram(def, h.snapshot);
    expect(classesOf(db).done).toEqual(s('start', 'human/1'));
    expect(classesOf(db).running).toEqual(s('end'));
  });
});

describe('stepStates: what only the definition tells', () => {
  const ship = workflow('ship-states', 1)
    .parallel('ship', { branches: ['pickup', 'label'], next: 'notify' })
    .wait('pickup', { signal: 'pickup', end: true })
    .task('label', { handler: 'label', end: true })
    .task('notify', { handler: 'notify' })
    .build();

  it('a parallel step runs while a branch step runs, and waits once every branch only waits', async () => {
    const { stepStates } = await import('@stepfold/engine');
    const h = createHarness(ship).start();
    expect(stepStates(ship, h.snapshot).get('ship')).toBe('running'); // label's handler is in flight
    h.complete('label', 'L-1');
    const states = stepStates(ship, h.snapshot);
    expect(states.get('ship')).toBe('waiting');
    expect(states.get('pickup')).toBe('waiting');
    expect(states.get('notify')).toBeUndefined();
    expect(toMermaid(ship, h.snapshot)).toMatch(
      new RegExp(`class [^\\n]*${nodeIds.step('ship')}[^\\n]* waiting`),
    );
  });
});
