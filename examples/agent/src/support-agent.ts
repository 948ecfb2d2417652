import { agentHandlers, agentWorkflows } from '@stepfold/ai';
import type { Handler, Store } from '@stepfold/engine';
import { type LanguageModel, type ToolSet, tool } from 'ai';
import type pg from 'pg';
import { z } from 'zod';

// The support agent: the loop and its tool-call child (plain workflow data from @stepfold/ai), two
// tools, and the handlers a worker runs. `refundOrder` moves money, so a person approves each call
// of it; a refund is recorded once per tool-call id, whatever happens to the process that runs it.

/** The agent's workflow name: its instances are the chats. */
export const AGENT = 'support';

/** The agent loop and the tool-call child (register both; `kinds: [composition]`). */
export const { agent, tool: toolCall } = agentWorkflows({ name: AGENT, turnsPerRun: 10 });

/** Both definitions, for runners and the inspector. */
export const workflows = [agent, toolCall];

/** The orders the example knows (a real agent reads its own database). */
const ORDERS: Record<string, { status: string; totalCents: number }> = {
  '7': { status: 'delivered', totalCents: 4200 },
  '8': { status: 'shipped', totalCents: 1999 },
  '9': { status: 'processing', totalCents: 650 },
};

/** The refunds table: one row per refund, keyed by the tool call that made it. */
export async function setupRefunds(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(
    `CREATE TABLE IF NOT EXISTS "${schema}".refunds (
       tool_call_id text PRIMARY KEY,
       order_id text NOT NULL,
       cents integer NOT NULL,
       at timestamptz NOT NULL DEFAULT now())`,
  );
}

/** The two tools: a lookup, and a refund behind approval. */
export function supportTools(pool: pg.Pool, schema: string): ToolSet {
  return {
    lookupOrder: tool({
      description: 'Looks up an order by its id: its status and total.',
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        const order = ORDERS[id];
        return order ? { id, ...order } : { id, error: 'no such order' };
      },
    }),
    refundOrder: tool({
      description: 'Refunds an order in full. A person on the support team approves each refund.',
      inputSchema: z.object({ id: z.string() }),
      needsApproval: true,
      execute: async ({ id }, { toolCallId }) => {
        const order = ORDERS[id];
        if (!order) return { id, refunded: false, reason: 'no such order' };
        // Keyed by the tool-call id: a second run of this call (there is none) would change nothing.
        await pool.query(
          `INSERT INTO "${schema}".refunds (tool_call_id, order_id, cents) VALUES ($1, $2, $3)
           ON CONFLICT (tool_call_id) DO NOTHING`,
          [toolCallId, id, order.totalCents],
        );
        return { id, refunded: true, cents: order.totalCents };
      },
    }),
  };
}

/** The agent's handlers for a worker: its prepare, model and tool steps. */
export function supportHandlers(options: {
  model: LanguageModel;
  store: Store;
  pool: pg.Pool;
  schema: string;
}): Record<string, Handler> {
  return agentHandlers({
    name: AGENT,
    model: options.model,
    tools: supportTools(options.pool, options.schema),
    store: options.store,
    system:
      'You are the support agent of a small shop. Look orders up before you act on them. ' +
      'Refund an order only with the refundOrder tool; a person approves each refund.',
  });
}
