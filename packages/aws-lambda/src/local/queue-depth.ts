import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Messages on a queue: waiting, delayed, and received but not yet deleted (in flight). */
export interface QueueDepth {
  visible: number;
  delayed: number;
  inFlight: number;
  total: number;
}

/** Reads the queue's approximate counts (exact on a local server). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesDelayed',
        'ApproximateNumberOfMessagesNotVisible',
      ],
    }),
  );
  const n = (k: string) => Number(out.Attributes?.[k as keyof typeof out.Attributes] ?? 0);
  const visible = n('ApproximateNumberOfMessages');
  const delayed = n('ApproximateNumberOfMessagesDelayed');
  const inFlight = n('ApproximateNumberOfMessagesNotVisible');
  return { visible, delayed, inFlight, total: visible + delayed + inFlight };
}
