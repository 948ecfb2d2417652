/** What the handlers did, one entry per message, record or request; the default logger prints JSON lines. */
export type LambdaLogEntry =
  /** A queue message applied (`written`: false when it changed nothing, say a stale wake). */
  | { fn: 'queue'; action: 'applied'; messageId: string; type: string; id: string; written: boolean }
  /** A start for an id that already exists: a redelivery (or an id clash); nothing applied. */
  | { fn: 'queue'; action: 'duplicate'; messageId: string; id: string }
  /** A wake that arrived before its time, sent again with the rest of its delay. */
  | { fn: 'queue'; action: 'rearmed'; messageId: string; id: string; at: number; delaySeconds: number }
  /** Bad input (malformed body, unknown workflow or id, …): dropped, never retried. */
  | { fn: 'queue' | 'stream'; action: 'rejected'; messageId: string; code: string; message: string }
  /** A transient failure: the message or record comes back. */
  | { fn: 'queue' | 'stream' | 'sweep'; action: 'retry'; messageId: string; error: string }
  /** Stream: instances due now, ticked in this invocation. */
  | { fn: 'stream'; action: 'drive'; ids: string[] }
  /** Stream: signals sent to an instance's inbox (`runner.send`), applied by a worker for the invocation. */
  | { fn: 'stream'; action: 'inbox'; ids: string[] }
  /** Stream: a wake armed for later, as a delayed message or a schedule. */
  | { fn: 'stream'; action: 'armed'; id: string; at: number; version: number; how: 'delay' | 'schedule' }
  /** Stream: the instance ended (or was deleted): its schedule deleted, if it had one. */
  | { fn: 'stream'; action: 'cleared'; id: string; existed: boolean }
  /** Sweep: the due instances it ticked. */
  | { fn: 'sweep'; action: 'swept'; ids: string[] }
  /** API: one request answered. */
  | { fn: 'api'; action: 'answered'; method: string; path: string; status: number; code?: string };

/** A logger of {@link LambdaLogEntry}s. */
export type LambdaLog = (entry: LambdaLogEntry) => void;

/** Prints each entry as one JSON line (CloudWatch Logs keeps them searchable). */
export const jsonLog: LambdaLog = (entry) => console.log(JSON.stringify(entry));

/** The message of anything thrown. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
