import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { BatchResponse, SQSEvent } from '../lambda-types.js';

/** Options of {@link pollQueue}. */
export interface QueuePollOptions {
  client: SQSClient;
  queueUrl: string;
  handler: (event: SQSEvent) => Promise<BatchResponse>;
  /** Stops the loop (after the batch in hand is done). */
  signal: AbortSignal;
  /** Messages per batch, 1-10 (default 10). */
  batchSize?: number | undefined;
  /**
   * Long-poll wait, seconds (default 0). moto serves every request under one lock, so a long poll
   * there would hold up every other request: keep 0 for moto, use up to 20 against SQS.
   */
  waitTimeSeconds?: number | undefined;
  /** Pause after an empty receive, ms (default 100). */
  idleMs?: number | undefined;
  /** Called with an error of the loop itself (receive or delete failed); the loop goes on. */
  onError?: ((error: unknown) => void) | undefined;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What Lambda's SQS event source mapping does, for running the queue handler outside AWS: poll the
 * queue, hand each batch to the handler as an `SQSEvent`, delete the messages it did not report as
 * failed (those come back after the queue's visibility timeout).
 */
export async function pollQueue(o: QueuePollOptions): Promise<void> {
  const region = await o.client.config.region();
  while (!o.signal.aborted) {
    try {
      const out = await o.client.send(
        new ReceiveMessageCommand({
          QueueUrl: o.queueUrl,
          MaxNumberOfMessages: o.batchSize ?? 10,
          WaitTimeSeconds: o.waitTimeSeconds ?? 0,
          MessageSystemAttributeNames: ['All'],
        }),
        { abortSignal: o.signal },
      );
      const messages = out.Messages ?? [];
      if (!messages.length) {
        await pause(o.idleMs ?? 100);
        continue;
      }
      const event: SQSEvent = {
        Records: messages.map((m) => ({
          messageId: m.MessageId!,
          receiptHandle: m.ReceiptHandle!,
          body: m.Body ?? '',
          attributes: { ...m.Attributes },
          messageAttributes: {},
          eventSource: 'aws:sqs',
          eventSourceARN: o.queueUrl,
          awsRegion: region,
        })),
      };
      const { batchItemFailures } = await o.handler(event);
      const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
      const done = event.Records.filter((r) => !failed.has(r.messageId));
      if (done.length) {
        await o.client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: o.queueUrl,
            Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
          }),
        );
      }
    } catch (e) {
      if (o.signal.aborted) return;
      o.onError?.(e);
      await pause(500);
    }
  }
}
