import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { WakeQueue } from './handler.js';
import type { QueueMessage } from './messages.js';
import type { SQSBatchResponse, SQSEvent } from './sqs-types.js';

/** A {@link WakeQueue} on an SQS queue: one `SendMessage` with `DelaySeconds` per wake. */
export function createSqsQueue(client: SQSClient, queueUrl: string): WakeQueue {
  return {
    async send(message: QueueMessage, delaySeconds: number) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(message),
          DelaySeconds: delaySeconds,
        }),
      );
    },
  };
}

/** Options of {@link pollQueue}. */
export interface PollOptions {
  client: SQSClient;
  queueUrl: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** Stops the loop (after the batch in hand is done). */
  signal: AbortSignal;
  /** Messages per batch, 1-10 (default 10). */
  batchSize?: number;
  /** Long-poll wait, seconds (default 1). */
  waitTimeSeconds?: number;
  /** Called with an error of the loop itself (receive or delete failed); the loop goes on. */
  onError?: (error: unknown) => void;
}

/**
 * What Lambda's SQS event source mapping does, for running the handler outside AWS: long-poll the
 * queue, hand each batch to the handler as an `SQSEvent`, delete the messages it did not report
 * as failed. A failed message becomes visible again after the queue's visibility timeout.
 */
export async function pollQueue(o: PollOptions): Promise<void> {
  const region = await o.client.config.region();
  while (!o.signal.aborted) {
    try {
      const out = await o.client.send(
        new ReceiveMessageCommand({
          QueueUrl: o.queueUrl,
          MaxNumberOfMessages: o.batchSize ?? 10,
          WaitTimeSeconds: o.waitTimeSeconds ?? 1,
          MessageSystemAttributeNames: ['All'],
        }),
        { abortSignal: o.signal },
      );
      const messages = out.Messages ?? [];
      if (!messages.length) continue;
      const event: SQSEvent = {
        Records: messages.map((m) => ({
          messageId: m.MessageId!,
          receiptHandle: m.ReceiptHandle!,
          body: m.Body ?? '',
          attributes: {
            ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
            SentTimestamp: m.Attributes?.SentTimestamp ?? '',
            SenderId: m.Attributes?.SenderId ?? '',
            ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '',
          },
          messageAttributes: {},
          md5OfBody: m.MD5OfBody ?? '',
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
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
