import { type HandlerContext, workflow } from '@stepfold/engine';

// The child workflow the typed harness tests (harness-*.types.test.ts) compose: one line of an
// order, picked by its own typed handler.

/** A line's input. */
export type Line = { sku: string };

/** The line's handlers, whose types the child's definition takes. */
export const lineHandlers = { pick: async ({ input }: HandlerContext<Line>) => ({ picked: input.sku }) };

/** `line` v1: picks its sku. */
export const line = workflow('line', 1)
  .handlers<typeof lineHandlers>()
  .input<Line>()
  .output<{ picked: string }>()
  .task('pick', { handler: 'pick' })
  .build();
