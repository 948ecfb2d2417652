/** Counts of the requests a client sent, by command name (`PutItemCommand`, …). */
export interface RequestCount {
  readonly total: number;
  readonly byCommand: Readonly<Record<string, number>>;
  /** Starts counting from zero again. */
  reset(): void;
}

/**
 * Wraps an AWS SDK v3 client's `send` with a counter (the client itself is changed, so every
 * holder of it is counted). For measuring requests per workflow in tests and benches.
 *
 * @example
 * const count = countRequests(dynamodb);
 * await runOrder();
 * console.log(count.total, count.byCommand);
 */
export function countRequests(client: { send: (...args: never[]) => Promise<unknown> }): RequestCount {
  const byCommand: Record<string, number> = {};
  let total = 0;
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as { send: (...args: unknown[]) => Promise<unknown> }).send = (...args: unknown[]) => {
    const name = (args[0] as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? 'unknown';
    byCommand[name] = (byCommand[name] ?? 0) + 1;
    total++;
    return send(...args);
  };
  return {
    get total() {
      return total;
    },
    byCommand,
    reset() {
      total = 0;
      for (const k of Object.keys(byCommand)) delete byCommand[k];
    },
  };
}
