import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createMemoryStore, createRunner, type HandlerContext, workflow } from '@stepfold/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation, GEN_AI_ATTR, genAiHandlers } from '../src/index.js';

// GenAI attributes on an agent's spans. The handlers stand in for @stepfold/ai's by their names and
// shapes (`<agent>.model` returns a turn with the model and its usage, `<agent>.tool` takes a call),
// which is all genAiHandlers reads.

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterEach(async () => {
  context.disable();
  await provider.shutdown();
});

const turn = workflow('turn', 1)
  .task('model', { handler: 'support.model' })
  .task('lookup', { handler: 'support.tool', input: { call: 'input.call' } })
  .task('note', { handler: 'note' })
  .build();

const spanOf = (spans: ReadableSpan[], step: string) =>
  spans.find((s) => s.name === `stepfold.task ${step}` && s.attributes[ATTR.step] === step)!;

describe('genAiHandlers', () => {
  it('puts the model and its token counts on model spans, the tool name and call id on tool spans', async () => {
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [turn],
      handlers: genAiHandlers(
        {
          'support.model': () => ({
            status: 'tools',
            modelId: 'gpt-4o-mini-2024-07-18',
            usage: { inputTokens: 120, outputTokens: 33, totalTokens: 153 },
          }),
          'support.tool': (ctx: HandlerContext) => ({
            ran: (ctx.input as { call: { toolName: string } }).call.toolName,
          }),
          note: () => ({ noted: true }),
        },
        { requestModel: 'gpt-4o-mini' },
      ),
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    const s = await runner.start('turn', 't-1', {
      call: { toolCallId: 'call-9', toolName: 'lookupOrder', input: {} },
    });
    expect(s.status).toBe('completed');
    expect(s.steps['lookup']?.output).toEqual({ ran: 'lookupOrder' });

    const spans = exporter.getFinishedSpans();
    expect(spanOf(spans, 'model').attributes).toMatchObject({
      [GEN_AI_ATTR.operation]: 'chat',
      [GEN_AI_ATTR.requestModel]: 'gpt-4o-mini',
      [GEN_AI_ATTR.responseModel]: 'gpt-4o-mini-2024-07-18',
      [GEN_AI_ATTR.inputTokens]: 120,
      [GEN_AI_ATTR.outputTokens]: 33,
    });
    expect(spanOf(spans, 'lookup').attributes).toMatchObject({
      [GEN_AI_ATTR.operation]: 'execute_tool',
      [GEN_AI_ATTR.toolName]: 'lookupOrder',
      [GEN_AI_ATTR.toolCallId]: 'call-9',
    });
    // A handler that is neither keeps its span as it was.
    expect(Object.keys(spanOf(spans, 'note').attributes).filter((k) => k.startsWith('gen_ai.'))).toEqual([]);
  });

  it('names the model that answered as the requested one when none is given, and skips counts it lacks', async () => {
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [turn],
      handlers: genAiHandlers({
        'support.model': () => ({ modelId: 'local-llama', usage: { inputTokens: 5 } }),
        'support.tool': () => null,
        note: () => null,
      }),
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    await runner.start('turn', 't-2', { call: { toolCallId: 'c', toolName: 'x' } });
    const attributes = spanOf(exporter.getFinishedSpans(), 'model').attributes;
    expect(attributes[GEN_AI_ATTR.requestModel]).toBe('local-llama');
    expect(attributes[GEN_AI_ATTR.inputTokens]).toBe(5);
    expect(GEN_AI_ATTR.outputTokens in attributes).toBe(false);
  });
});
