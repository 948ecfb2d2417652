// @ts-check
// The agent workload's oracles (agent-workload.mjs): what every conversation must have ended with
// once the run is over, read from the store and the ledger (L records of the oracle log).
import { AGENT, callIds, expectedUsage, responses } from './agent-workload.mjs';

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {import('@stepfold/engine').StreamStore} StreamStore
 */

/** Whether conversation `s` answered its second message (and waits for the next). @param {Snapshot | null | undefined} s */
export function answeredBoth(s) {
  const out = /** @type {{ status?: string, text?: string } | undefined} */ (s?.steps['model']?.output);
  return (
    s?.run === 2 &&
    out?.status === 'answered' &&
    out.text === responses(s.id).thanks &&
    s.active.includes('listen')
  );
}

/**
 * Violations of the ledger, over the conversations that answered both messages: each of their tool
 * calls settled (its child completed), with exactly one run of its settling attempt and none of a
 * later attempt. Earlier attempts' runs (a kill between the tool's run and its
 * write) are counted, not violations: a tool runs at least once, a settled one never again.
 * @param {Map<string, Snapshot | null>} conversations
 * @param {Snapshot[]} tools every tool-call child in the store
 * @param {string[][]} records the oracle log
 */
export function checkLedger(conversations, tools, records) {
  /** @type {Map<string, number[]>} attempts that ran, by tool call id */
  const ran = new Map();
  for (const r of records) {
    if (r[0] !== 'L' || !r[1]) continue;
    ran.set(r[1], [...(ran.get(r[1]) ?? []), Number(r[2])]);
  }
  /** @type {string[]} */
  const violations = [];
  /** @type {Map<string, Snapshot>} */
  const byCall = new Map();
  for (const t of tools) {
    const call = /** @type {{ toolCallId?: string }} */ (t.input).toolCallId ?? '';
    if (byCall.has(call))
      violations.push(`tool call ${call}: two child instances (${byCall.get(call)?.id}, ${t.id})`);
    byCall.set(call, t);
  }
  let earlier = 0;
  for (const [id, s] of conversations) {
    // One that did not answer is a violation already; its tool calls may not have begun.
    if (!answeredBoth(s)) continue;
    const { lookup, charge } = callIds(id);
    for (const call of [lookup, charge]) {
      const child = byCall.get(call);
      if (child?.status !== 'completed') {
        violations.push(`${id}: tool call ${call} did not settle (${child ? child.status : 'no child'})`);
        continue;
      }
      if (call !== charge) continue;
      const settled = child.steps['call']?.attempt ?? 0;
      const runs = ran.get(call) ?? [];
      const at = runs.filter((a) => a === settled).length;
      const later = runs.filter((a) => a > settled);
      earlier += runs.filter((a) => a < settled).length;
      if (at !== 1) violations.push(`${id}: ${call} ran ${at} times in its settling attempt ${settled}`);
      if (later.length) violations.push(`${id}: ${call} ran after it settled (attempts ${later.join(', ')})`);
    }
  }
  return { violations, settled: byCall.size, earlierRuns: earlier };
}

/**
 * Violations of conversation `id`'s stream, read from offset 0 (a reader that reconnects after
 * every reset sees the same): the text deltas are exactly the three responses, each tool call's
 * output arrived once, and the last chunk ends the turn.
 * @param {StreamStore} stream @param {string} id
 */
export async function checkStream(stream, id) {
  /** @type {unknown[]} */
  const chunks = [];
  let resets = 0;
  for (let from = 0; ; ) {
    const page = await stream.read(id, { from });
    for (const e of page.entries) {
      if (e.type === 'reset') resets++;
      else chunks.push(e.data);
    }
    from = page.next;
    if (page.end) break;
  }
  const typed = /** @type {Array<{ type: string, delta?: string, toolCallId?: string }>} */ (chunks);
  const text = typed.flatMap((c) => (c.type === 'text-delta' ? [c.delta ?? ''] : [])).join('');
  const r = responses(id);
  /** @type {string[]} */
  const violations = [];
  if (text !== r.first + r.answer + r.thanks)
    violations.push(`${id}: the stream's text is ${JSON.stringify(text)}`);
  const outputs = typed.filter((c) => c.type === 'tool-output-available').map((c) => c.toolCallId);
  const { lookup, charge } = callIds(id);
  if (outputs.sort().join() !== [charge, lookup].join())
    violations.push(`${id}: the stream's tool outputs are ${JSON.stringify(outputs)}`);
  if (typed.at(-1)?.type !== 'finish') violations.push(`${id}: the stream ends with ${typed.at(-1)?.type}`);
  return { violations, resets };
}

/** Violations of conversation `s`'s token totals (three model calls). @param {Snapshot} s */
export function checkUsage(s) {
  const out = /** @type {{ usageTotal?: unknown } | undefined} */ (s.steps['model']?.output);
  const want = expectedUsage(s.id);
  return JSON.stringify(out?.usageTotal) === JSON.stringify(want)
    ? []
    : [`${s.id}: usageTotal ${JSON.stringify(out?.usageTotal)}, expected ${JSON.stringify(want)}`];
}

/** The tool-call children's workflow. */
export const TOOL_WORKFLOW = `${AGENT}-tool`;
