// The chunks the agent's steps write to its stream are AI SDK UI message chunks, so a chat reads
// them as they are. A turn is one UI message: a `start` chunk when it opens, `finish` when the
// model answers without tool calls.

/** Whether a chunk ends a turn (`finish`): a reader of the turn stops after it. */
export const isTurnEnd = (data: unknown): boolean =>
  typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'finish';
