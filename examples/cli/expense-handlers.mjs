// Handlers of expense.json. The CLI's store commands never run them (they queue tasks for your
// workers); the tests run them in a runner of their own to create instances.

/** Checks the claim. */
export function checkClaim({ input }) {
  return { ok: true, amount: input.amount };
}

/** Pays the claim; amounts over 1000 are refused (the step is parked in dlq for a requeue). */
export function payClaim({ input }) {
  if (input.amount > 1000) throw Object.assign(new Error('over the payment limit'), { code: 'LIMIT' });
  return { paid: input.amount };
}
