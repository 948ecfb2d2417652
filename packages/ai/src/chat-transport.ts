import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { isTurnEnd } from './ui-chunks.js';

// The browser side of a chat (AI SDK UI's `ChatTransport`): a message goes to the agent as a
// signal, and the answer is read from the agent's stream by offset. The offset where the current
// turn began is kept (in `sessionStorage`, say), so a reloaded page reads the turn again from its
// start and shows the whole answer, however much of it was streamed before the reload.

/** Where a transport keeps its offsets per chat: memory by default, `sessionStorage` to survive a reload. */
export interface ChatOffsets {
  get(chatId: string): ChatOffset | undefined;
  set(chatId: string, offset: ChatOffset): void;
}

/** A chat's place in its stream: past what was read (`next`), and where the turn being read began (`turn`). */
export interface ChatOffset {
  next: number;
  turn?: number | undefined;
}

/** Options of {@link StepfoldChatTransport}. */
export interface StepfoldChatTransportOptions {
  /** Where `agentChatRoute` is served (default `/agents`); an absolute URL outside a browser. */
  api?: string | undefined;
  /** The fetch to call (default the global one). */
  fetch?: typeof fetch | undefined;
  /** Where offsets are kept (default: in memory, for this transport only). */
  offsets?: ChatOffsets | undefined;
}

/** What {@link storageOffsets} needs of a `Storage` (`sessionStorage`, `localStorage`). */
export interface OffsetStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** Offsets kept in a `Storage` (`sessionStorage`, `localStorage`) under `stepfold-chat:<chatId>`. */
export function storageOffsets(storage: OffsetStorage): ChatOffsets {
  return {
    get(chatId) {
      const text = storage.getItem(`stepfold-chat:${chatId}`);
      return text === null ? undefined : (JSON.parse(text) as ChatOffset);
    },
    set(chatId, offset) {
      storage.setItem(`stepfold-chat:${chatId}`, JSON.stringify(offset));
    },
  };
}

/** Offsets in a `Map`. */
function memoryOffsets(): ChatOffsets {
  const map = new Map<string, ChatOffset>();
  return { get: (id) => map.get(id), set: (id, o) => void map.set(id, o) };
}

/**
 * A `ChatTransport` for `useChat` over `agentChatRoute`: the chat id is the agent instance's id.
 *
 * @example
 * const { messages, sendMessage } = useChat({
 *   id: 'chat-42',
 *   transport: new StepfoldChatTransport({ offsets: storageOffsets(sessionStorage) }),
 *   resume: true,
 * });
 */
export class StepfoldChatTransport<M extends UIMessage = UIMessage> implements ChatTransport<M> {
  readonly #api: string;
  readonly #fetch: typeof fetch;
  readonly #offsets: ChatOffsets;

  constructor(options: StepfoldChatTransportOptions = {}) {
    this.#api = (options.api ?? '/agents').replace(/\/$/, '');
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#offsets = options.offsets ?? memoryOffsets();
  }

  /** Sends the last message (a user message's text) and streams the answer from where it begins. */
  async sendMessages(
    options: Parameters<ChatTransport<M>['sendMessages']>[0],
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, abortSignal } = options;
    const last = messages[messages.length - 1];
    if (!last) throw new Error('StepfoldChatTransport: no message to send');
    const text = last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    const known = this.#offsets.get(chatId)?.next ?? 0;
    const res = await this.#fetch(`${this.#api}/${encodeURIComponent(chatId)}/messages?from=${known}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: last.id, text }),
      ...(abortSignal ? { signal: abortSignal } : {}),
    });
    if (!res.ok) throw new Error(`stepfold chat: ${res.status} ${await res.text()}`);
    const { from } = (await res.json()) as { from: number };
    this.#offsets.set(chatId, { next: from, turn: from });
    return this.#read(chatId, from, abortSignal);
  }

  /** Reads the turn in progress again from its start (null when no turn is in progress). */
  async reconnectToStream(
    options: Parameters<ChatTransport<M>['reconnectToStream']>[0],
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const turn = this.#offsets.get(options.chatId)?.turn;
    if (turn === undefined) return null;
    return this.#read(options.chatId, turn, options.abortSignal);
  }

  /** The chunks of the stream from `from` to the turn's end, the offsets kept as they come. */
  #read(chatId: string, from: number, signal: AbortSignal | undefined): ReadableStream<UIMessageChunk> {
    const url = `${this.#api}/${encodeURIComponent(chatId)}/stream?from=${from}`;
    const offsets = this.#offsets;
    const get = this.#fetch;
    let reader: ReadableStreamDefaultReader<string> | undefined;
    return new ReadableStream<UIMessageChunk>({
      async start(controller) {
        try {
          const res = await get(url, signal ? { signal } : {});
          if (!res.ok || !res.body) throw new Error(`stepfold chat: ${res.status} ${await res.text()}`);
          reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(lines()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const entry = JSON.parse(value) as
              | { type: 'chunk'; offset: number; data: unknown }
              | { type: 'reset'; offset: number }
              | { type: 'error'; message: string };
            if (entry.type === 'error') {
              controller.enqueue({ type: 'error', errorText: entry.message } as UIMessageChunk);
              break;
            }
            const turn = offsets.get(chatId)?.turn;
            // A reset drops a superseded attempt's chunks from later reads; a live reader already
            // showed them, and the new attempt's parts follow with ids of their own.
            if (entry.type === 'chunk') controller.enqueue(entry.data as UIMessageChunk);
            const ended = entry.type === 'chunk' && isTurnEnd(entry.data);
            offsets.set(chatId, ended ? { next: entry.offset + 1 } : { next: entry.offset + 1, turn });
            if (ended) break;
          }
          controller.close();
        } catch (e) {
          controller.error(e);
        }
      },
      async cancel() {
        await reader?.cancel();
      },
    });
  }
}

/** Splits text into lines (NDJSON), dropping empty ones. */
function lines(): TransformStream<string, string> {
  let rest = '';
  return new TransformStream<string, string>({
    transform(text, controller) {
      const parts = (rest + text).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) controller.enqueue(p);
    },
    flush(controller) {
      if (rest.trim()) controller.enqueue(rest);
    },
  });
}
