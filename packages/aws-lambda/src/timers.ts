/**
 * Timers that end with the workflow. A timer the instance cannot outlive (a retry backoff or a
 * sleep, within SQS's 900 s) is one delayed `wake` message on the queue; any other (longer, or a
 * deadline the instance may finish before: a human step's or a wait's timeout) is ONE EventBridge
 * Scheduler one-time schedule per instance, upserted when its wake time changes, deleted when the
 * instance ends, and deleting itself once it has fired (`ActionAfterCompletion: DELETE`).
 */
import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueMessage } from './messages.js';

/** SQS's longest message delay, in seconds. */
export const MAX_DELAY_SECONDS = 900;

/** Seconds until `at`, rounded up (never early), between 0 and `max`. */
export function delaySecondsUntil(at: number, now: number, max = MAX_DELAY_SECONDS): number {
  return Math.min(max, Math.max(0, Math.ceil((at - now) / 1000)));
}

/**
 * The schedule of an instance: `sf-<id>` when the id is a valid schedule name (letters, digits,
 * `-`, `_`, `.`, at most 64 in all), else `sfh-` and 56 hex digits of its SHA-256. The two
 * prefixes differ, so no id's name is another's hash name.
 */
export function scheduleName(id: string): string {
  if (/^[0-9A-Za-z_.-]{1,61}$/.test(id)) return `sf-${id}`;
  return `sfh-${createHash('sha256').update(id).digest('hex').slice(0, 56)}`;
}

/** Scheduler's one-time expression for `at` (epoch ms), rounded up to the second, in UTC. */
export function atExpression(at: number): string {
  const second = Math.ceil(at / 1000) * 1000;
  return `at(${new Date(second).toISOString().slice(0, 19)})`;
}

/** The epoch ms an `at(yyyy-mm-ddThh:mm:ss)` expression (UTC) names, or null for another expression. */
export function parseAtExpression(expression: string): number | null {
  const m = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(expression);
  return m ? Date.parse(`${m[1]}Z`) : null;
}

/** One wake to arm: the instance, its wake time, the snapshot version that set it. */
export interface WakeToArm {
  id: string;
  at: number;
  version: number;
  /** The instance cannot end before this wake (a retry backoff or a sleep, nothing else pending). */
  blocking: boolean;
}

/** How a wake was armed. */
export type Armed =
  | { how: 'delay'; delaySeconds: number }
  | { how: 'schedule'; name: string; expression: string };

/** Arms and clears an instance's timer. */
export interface Timers {
  /** Sends the wake as a delayed message, or upserts the instance's schedule. */
  arm(wake: WakeToArm, now: number): Promise<Armed>;
  /** Deletes the instance's schedule, if there is one (an ended or deleted instance). */
  clear(id: string): Promise<boolean>;
  /** Sends `message` to the queue after `delaySeconds` (a start, a wake re-armed). */
  send(message: QueueMessage, delaySeconds: number): Promise<void>;
}

/** Where {@link createTimers} sends wakes. */
export interface TimersOptions {
  sqs: SQSClient;
  queueUrl: string;
  scheduler: SchedulerClient;
  /** The queue's ARN: the schedules' target. */
  queueArn: string;
  /** The schedule group (default `default`). */
  group?: string | undefined;
  /** The role Scheduler assumes to `sqs:SendMessage` to the queue. */
  roleArn: string;
  /** Longest SQS delay used, seconds (default 900). */
  maxDelaySeconds?: number | undefined;
}

/** {@link Timers} on an SQS queue and EventBridge Scheduler. */
export function createTimers(o: TimersOptions): Timers {
  const group = o.group ?? 'default';
  const maxDelay = o.maxDelaySeconds ?? MAX_DELAY_SECONDS;
  const send = async (message: QueueMessage, delaySeconds: number) => {
    await o.sqs.send(
      new SendMessageCommand({
        QueueUrl: o.queueUrl,
        MessageBody: JSON.stringify(message),
        DelaySeconds: delaySeconds,
      }),
    );
  };
  return {
    send,
    async arm(w, now) {
      const message: QueueMessage = { type: 'wake', id: w.id, at: w.at, version: w.version };
      const delaySeconds = delaySecondsUntil(w.at, now, Number.POSITIVE_INFINITY);
      if (w.blocking && delaySeconds <= maxDelay) {
        await send(message, delaySeconds);
        return { how: 'delay', delaySeconds };
      }
      const name = scheduleName(w.id);
      const expression = atExpression(w.at);
      const input: CreateScheduleCommandInput = {
        Name: name,
        GroupName: group,
        ScheduleExpression: expression,
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: { Arn: o.queueArn, RoleArn: o.roleArn, Input: JSON.stringify(message) },
      };
      try {
        await o.scheduler.send(new CreateScheduleCommand(input));
      } catch (e) {
        if (!(e instanceof ConflictException)) throw e;
        // The instance's schedule exists (an earlier wake time): move it.
        await o.scheduler.send(new UpdateScheduleCommand(input));
      }
      return { how: 'schedule', name, expression };
    },
    async clear(id) {
      try {
        await o.scheduler.send(new DeleteScheduleCommand({ Name: scheduleName(id), GroupName: group }));
        return true;
      } catch (e) {
        if (e instanceof ResourceNotFoundException) return false;
        throw e;
      }
    },
  };
}
