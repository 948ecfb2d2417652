import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

// A model that answers from a script, through the AI SDK's own mock: each call takes the next
// response, streamed as a provider would (text in deltas, then the tool calls, then the finish).

/** One scripted response: text (streamed a word at a time) and tool calls. */
export interface ScriptedResponse {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; input: unknown }>;
  /** Throw instead of answering (a provider error): the attempt fails and is retried. */
  fail?: string;
  /** Delay between streamed parts (ms). */
  delayMs?: number;
}

/** The mock model and the prompts it was called with, in order. */
export function scriptedModel(script: ScriptedResponse[]) {
  let call = 0;
  const model = new MockLanguageModelV4({
    doStream: async () => {
      const r = script[call++];
      if (!r) throw new Error(`scripted model: no response ${call} in the script`);
      if (r.fail) throw new Error(r.fail);
      const words = r.text ? r.text.split(/(?<= )/) : [];
      const chunks = [
        { type: 'stream-start' as const, warnings: [] },
        ...(words.length
          ? [
              { type: 'text-start' as const, id: `t${call}` },
              ...words.map((delta) => ({ type: 'text-delta' as const, id: `t${call}`, delta })),
              { type: 'text-end' as const, id: `t${call}` },
            ]
          : []),
        ...(r.toolCalls ?? []).map((c) => ({
          type: 'tool-call' as const,
          toolCallId: c.id,
          toolName: c.name,
          input: JSON.stringify(c.input),
        })),
        {
          type: 'finish' as const,
          finishReason: {
            unified: r.toolCalls?.length ? ('tool-calls' as const) : ('stop' as const),
            raw: undefined,
          },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: words.length, text: words.length, reasoning: undefined },
          },
        },
      ];
      return {
        stream: simulateReadableStream({ chunks, chunkDelayInMs: r.delayMs ?? 0, initialDelayInMs: 0 }),
      };
    },
  });
  return { model, calls: () => model.doStreamCalls, count: () => call };
}

/** The text of every message of a prompt the model was called with, as `role: text` lines. */
export function promptLines(prompt: ReadonlyArray<{ role: string; content: unknown }>): string[] {
  return prompt.map((m) => {
    if (typeof m.content === 'string') return `${m.role}: ${m.content}`;
    const parts = (m.content as Array<Record<string, unknown>>).map((p) => {
      if (p['type'] === 'text') return String(p['text']);
      if (p['type'] === 'tool-call') return `call ${String(p['toolName'])}(${JSON.stringify(p['input'])})`;
      if (p['type'] === 'tool-result')
        return `result ${String(p['toolName'])} ${JSON.stringify(p['output'])}`;
      return String(p['type']);
    });
    return `${m.role}: ${parts.join(' | ')}`;
  });
}
