import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { responseParts } from './fixtures/model-stream.mjs';

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
      const chunks = responseParts(r.text ?? '', r.toolCalls ?? [], { id: `t${call}`, inputTokens: 10 });
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
