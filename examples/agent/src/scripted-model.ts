import type { LanguageModel } from 'ai';

// The model the example runs with when no provider is configured: it answers from its prompt, as
// a provider streams (a word at a time), so the example runs offline and every worker process
// gives the same answer to the same transcript. It knows one errand: a refund.
//
//   a user message that asks for a refund of order N → "Let me look up order N…" and two tool
//     calls: lookupOrder (runs at once) and refundOrder (waits for a person's approval)
//   the results of those calls → the answer: refunded, or why not (a rejection's message)
//   any other user message → what it can do

/** The AI SDK's model interface (the version this `ai` speaks), as `LanguageModel` names it. */
type ModelV4 = Extract<LanguageModel, { specificationVersion: 'v4' }>;
type CallOptions = Parameters<ModelV4['doStream']>[0];
type Part = Awaited<ReturnType<ModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type PromptMessage = CallOptions['prompt'][number];

/** Options of {@link scriptedSupportModel}. */
export interface ScriptedModelOptions {
  /** Milliseconds between streamed words (default 60): slow enough to watch, and to reload mid-answer. */
  wordMs?: number | undefined;
}

/** What the user asked in the latest user message, and the results that came after it. */
function latest(prompt: readonly PromptMessage[]) {
  let i = prompt.length - 1;
  while (i >= 0 && prompt[i]?.role !== 'user') i--;
  const user = prompt[i];
  const text =
    user?.role === 'user' ? user.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ') : '';
  const results = prompt.slice(i + 1).flatMap((m) => (m.role === 'tool' ? m.content : []));
  return { text, results, position: i };
}

/** The parts of one response: its text a word at a time, then its tool calls, then the finish. */
function partsOf(
  id: string,
  text: string,
  calls: Array<{ id: string; name: string; input: unknown }>,
): Part[] {
  const words = text.split(/(?<= )/);
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id },
    ...words.map((delta): Part => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
    ...calls.map(
      (c): Part => ({
        type: 'tool-call',
        toolCallId: c.id,
        toolName: c.name,
        input: JSON.stringify(c.input),
      }),
    ),
    {
      type: 'finish',
      finishReason: { unified: calls.length ? 'tool-calls' : 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: words.length, text: words.length, reasoning: undefined },
      },
    },
  ];
}

/** What the script answers to `prompt`. */
function respond(prompt: readonly PromptMessage[]): Part[] {
  const { text, results, position } = latest(prompt);
  const order = /\border\s*#?\s*(\d+)/i.exec(text)?.[1] ?? '7';
  // Ids that are the same for the same transcript: a retried call proposes the same calls.
  const turn = `t${position}`;
  if (results.length === 0 && /refund/i.test(text))
    return partsOf(
      turn,
      `Let me look up order ${order} first. A refund needs the approval of a person on the support ` +
        'team, so I will ask for it and wait for their decision before any money moves. ',
      [
        { id: `${turn}-lookup`, name: 'lookupOrder', input: { id: order } },
        { id: `${turn}-refund`, name: 'refundOrder', input: { id: order } },
      ],
    );
  if (results.length === 0)
    return partsOf(turn, 'I can look up an order and refund it. Try: "Refund order 7, please."', []);
  const refund = results.find((r) => r.type === 'tool-result' && r.toolName === 'refundOrder');
  const output = refund?.type === 'tool-result' ? refund.output : undefined;
  if (output?.type === 'json')
    return partsOf(
      `${turn}-answer`,
      `Done: order ${order} is refunded, and the money is on its way back.`,
      [],
    );
  const why = output && 'value' in output && typeof output.value === 'string' ? output.value : 'it failed';
  return partsOf(`${turn}-answer`, `I did not refund order ${order}: ${why}.`, []);
}

/** The offline model of the example (see the top of this file). */
export function scriptedSupportModel(options: ScriptedModelOptions = {}): LanguageModel {
  const wordMs = options.wordMs ?? 60;
  const model: ModelV4 = {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId: 'support-script',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('the scripted model only streams')),
    doStream: async (call: CallOptions) => {
      const parts = respond(call.prompt);
      let i = 0;
      const stream = new ReadableStream<Part>({
        async pull(controller) {
          const part = parts[i++];
          if (!part) return controller.close();
          if (part.type === 'text-delta') await new Promise((r) => setTimeout(r, wordMs));
          controller.enqueue(part);
        },
      });
      return { stream };
    },
  };
  return model;
}
