// @ts-check
// The soak's agent workload (`--workload agent`): conversations with an agent of @stepfold/ai whose
// model answers from its prompt (the AI SDK's mock model: every process gives the same answers),
// run while worker processes are SIGKILLed. Each conversation is two user messages: the first
// brings a response with two tool calls (`lookupOrder`, idempotent, and `chargeCard`, which is
// not: each run is an L record in the oracle log, the ledger), then the answer streamed a word at a
// time (the run continues as new after it: turnsPerRun 2); the second brings a short answer. The
// worker processes also SIGKILL themselves in two crash windows, one conversation in
// --crash-every: mid-stream (the answer's eighth word) and right after a tool call's terminal
// write, before the agent hears of it (window "settled"). checkAgents then proves every
// conversation answered both messages, every settled tool call ran exactly once in its settling
// attempt and never after, the stream read from 0 holds exactly the three responses' text (after
// the resets of retried attempts), and the token totals are exact.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentHandlers, agentWorkflows } from '@stepfold/ai';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  FIRST_WORD_PART,
  partStream,
  responseParts,
  words,
} from '../../../ai/test/fixtures/model-stream.mjs';
import { hash } from './workflows.mjs';

/** The agent's workflow name (its tool-call child is `soak-agent-tool`). */
export const AGENT = 'soak-agent';
/** Input tokens the model reports per call; output tokens are the response's words. */
export const INPUT_TOKENS = 20;
/** Delay between streamed parts (ms): an answer streams for about half a second. */
const PART_MS = 15;
/** The answer's word after which the mid-stream window kills the process. */
const STREAM_WINDOW_WORD = 8;

/**
 * The agent's definitions: attempts to spare for kills, a tool call's lost end looked up after 2 s.
 * A killed attempt comes back when its lease lapses (2 s), so the deadlines only bound a slow one:
 * at 10 s, on a two-core machine under a load of 20, a third of the model calls missed theirs.
 */
export const { agent: agentWorkflow, tool: toolWorkflow } = agentWorkflows({
  name: AGENT,
  turnsPerRun: 2,
  maxAttempts: 20,
  modelTimeoutMs: 60_000,
  toolTimeoutMs: 30_000,
  toolCheckMs: 2_000,
});

/** The three responses of conversation `id`. @param {string} id */
export function responses(id) {
  return {
    first: `Let me look up the order of ${id} and charge it. `,
    answer:
      `The order of ${id} has shipped and your card was charged 1200 cents, once. ` +
      'The receipt is on its way by email and the charge shows on your statement within a day or two.',
    thanks: `You are welcome, ${id}. Goodbye.`,
  };
}

/** The two user messages of conversation `id`. @param {string} id */
export function messages(id) {
  return [
    { id: 'm1', text: `Conversation ${id}: where is my order? Charge it if it shipped.` },
    { id: 'm2', text: 'Thanks!' },
  ];
}

/** The tool calls of conversation `id`'s first response. @param {string} id */
export const callIds = (id) => ({ lookup: `${id}:lookup`, charge: `${id}:charge` });

/** The token totals conversation `id` ends with: three model calls. @param {string} id */
export function expectedUsage(id) {
  const r = responses(id);
  const output = words(r.first).length + words(r.answer).length + words(r.thanks).length;
  return {
    inputTokens: 3 * INPUT_TOKENS,
    outputTokens: output,
    totalTokens: 3 * INPUT_TOKENS + output,
    modelCalls: 3,
  };
}

/**
 * Whether the window `window` of `key` is hit: sampled one in `every` by a hash of the key, and
 * at most once (a marker file in `dir`, created exclusively, however many processes get there).
 * @param {string} dir @param {number} every @param {string} window @param {string} key
 */
export function windowHit(dir, every, window, key) {
  if (every < 1 || hash(`${window} ${key}`) % every !== 0) return false;
  try {
    writeFileSync(join(dir, `x-${window}-${key.replace(/[^A-Za-z0-9-]/g, '_')}`), '', { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The soak agent's handlers: the model answers from the prompt; `chargeCard` writes the ledger;
 * `crash(window, key)` is called where the mid-stream window is (it kills the process when hit).
 * @param {(fields: Array<string | number>) => void} ledger
 * @param {(window: string, key: string) => void} crash
 */
export function agentSoakHandlers(ledger, crash) {
  const model = new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const users = prompt.filter((m) => m.role === 'user');
      const first = users[0]?.content;
      const text = Array.isArray(first) ? first.map((p) => ('text' in p ? p.text : '')).join('') : '';
      const id = /^Conversation (\S+):/.exec(text)?.[1] ?? 'unknown';
      const r = responses(id);
      const last = prompt.at(-1)?.role;
      if (last === 'tool') return { stream: streamOf(parts(r.answer, []), () => crash('stream', id)) };
      if (users.length > 1) return { stream: streamOf(parts(r.thanks, [])) };
      const calls = callIds(id);
      return {
        stream: streamOf(
          parts(r.first, [
            { id: calls.lookup, name: 'lookupOrder', input: { order: id } },
            { id: calls.charge, name: 'chargeCard', input: { order: id, cents: 1200 } },
          ]),
        ),
      };
    },
  });
  const tools = {
    lookupOrder: tool({
      description: 'Finds an order',
      inputSchema: z.object({ order: z.string() }),
      execute: async ({ order }) => ({ order, status: 'shipped' }),
    }),
    chargeCard: tool({
      description: 'Charges the card of an order (not idempotent)',
      inputSchema: z.object({ order: z.string(), cents: z.number() }),
      execute: async ({ cents }, { toolCallId, context }) => {
        const attempt = /** @type {{ attempt?: number } | undefined} */ (context)?.attempt ?? 0;
        ledger([toolCallId, attempt, process.pid]);
        return { charged: cents };
      },
    }),
  };
  return {
    model,
    tools,
    handlers: (/** @type {any} */ store) => agentHandlers({ name: AGENT, model, tools, store }),
  };
}

/** The parts of one response, as a provider streams them. @param {string} text @param {Array<{ id: string, name: string, input: unknown }>} calls */
const parts = (text, calls) => responseParts(text, calls, { inputTokens: INPUT_TOKENS });

/**
 * A stream of `list`, a part every PART_MS; `atWindow` runs before the STREAM_WINDOW_WORD-th word.
 * @param {any[]} list @param {() => void} [atWindow]
 */
const streamOf = (list, atWindow) =>
  partStream(list, { partMs: PART_MS, at: FIRST_WORD_PART + STREAM_WINDOW_WORD, atPart: atWindow });
