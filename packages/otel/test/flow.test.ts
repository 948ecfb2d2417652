import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createMemoryStore, createRunner, flowControl, workflow } from '@stepfold/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation, THROTTLED_EVENT } from '../src/index.js';

// Flow limits in the traces: a limited attempt's span names its keys, and the write that leaves an
// attempt waiting for a slot says on its event span what it waits for and until when.

const order = workflow('order', 1)
  .input<{ customer: string }>()
  .task('charge', {
    handler: 'charge',
    concurrency: { key: 'input.customer', limit: 1 },
    rateLimit: { limit: 100, periodMs: 60_000, scope: 'gateway' },
  })
  .build();

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
});

afterEach(async () => {
  await provider.shutdown();
});

describe('flow control in spans', () => {
  it('a limited task span carries its scopes, keys and limits; a throttled start records what it waits for', async () => {
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [order],
      kinds: [flowControl],
      handlers: { charge: () => gate.then(() => 'ok') },
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    const first = runner.start('order', 'o-1', { customer: 'c-1' });
    await new Promise((r) => setTimeout(r, 20));
    // The second charge of c-1 waits for the first's slot.
    await runner.start('order', 'o-2', { customer: 'c-1' }, { wait: 'write' });
    const waiting = await runner.get('o-2');
    expect(waiting?.steps['charge']?.throttled?.need.key).toBe('c-1');
    letGo();
    await first;
    await runner.idle();

    const spans = exporter.getFinishedSpans();
    const task = spans.find(
      (s) => s.name === 'stepfold.task charge' && s.attributes[ATTR.instanceId] === 'o-1',
    );
    expect(task?.attributes[ATTR.flowScope]).toEqual(['order/charge', 'gateway']);
    expect(task?.attributes[ATTR.flowKey]).toEqual(['c-1', '']);
    expect(task?.attributes[ATTR.flowLimit]).toEqual([1, 100]);

    const start = spans.find(
      (s) => s.name === 'stepfold.event start' && s.attributes[ATTR.instanceId] === 'o-2',
    );
    const throttled = start?.events.filter((e) => e.name === THROTTLED_EVENT) ?? [];
    expect(throttled).toHaveLength(1);
    expect(throttled[0]!.attributes).toEqual({
      [ATTR.step]: 'charge',
      [ATTR.attempt]: 1,
      [ATTR.flowScope]: 'order/charge',
      [ATTR.flowKey]: 'c-1',
      [ATTR.flowLimit]: 1,
      [ATTR.flowUntil]: waiting!.steps['charge']!.throttled!.until,
    });
    // The first start took its slot: no wait recorded on its span.
    const own = spans.find(
      (s) => s.name === 'stepfold.event start' && s.attributes[ATTR.instanceId] === 'o-1',
    );
    expect(own?.events.some((e) => e.name === THROTTLED_EVENT)).toBe(false);
  });

  it('a throttled rate limit names its window', async () => {
    const rated = workflow('rated', 1)
      .task('call', { handler: 'call', rateLimit: { limit: 1, periodMs: 60_000 } })
      .build();
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [rated],
      kinds: [flowControl],
      handlers: { call: () => 'ok' },
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    await runner.start('rated', 'r-1');
    await runner.start('rated', 'r-2');
    const start = exporter
      .getFinishedSpans()
      .find((s) => s.name === 'stepfold.event start' && s.attributes[ATTR.instanceId] === 'r-2');
    const [event] = start?.events.filter((e) => e.name === THROTTLED_EVENT) ?? [];
    expect(event?.attributes?.[ATTR.flowPeriod]).toBe(60_000);
    expect(event?.attributes?.[ATTR.flowScope]).toBe('rated/call');
  });
});
