import {
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { GetQueueUrlCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { parseAtExpression } from '../timers.js';

/** Options of {@link createScheduleDriver}. */
export interface ScheduleDriverOptions {
  scheduler: SchedulerClient;
  sqs: SQSClient;
  /** The schedule group to fire (default `default`). */
  group?: string | undefined;
  /** The URL of a target queue, by its ARN (default: the queue named by the ARN's last part, same endpoint). */
  queueUrlOf?: ((arn: string) => string) | undefined;
}

/** A schedule as the driver read it. */
export interface DrivenSchedule {
  name: string;
  at: number;
  targetArn: string;
  input: string;
}

/** Fires what EventBridge Scheduler would, for a local server (moto) that stores schedules but never fires them. */
export interface ScheduleDriver {
  /** The group's one-time schedules, with their times and targets. */
  list(): Promise<DrivenSchedule[]>;
  /**
   * Sends each schedule due by `now` its target input (a SendMessage to the target queue) and
   * deletes it (`ActionAfterCompletion: DELETE`); resolves with what it fired.
   */
  fireDue(now?: number): Promise<DrivenSchedule[]>;
  /** Fires due schedules every `intervalMs` (default 200) until `signal` aborts. */
  run(signal: AbortSignal, intervalMs?: number, onError?: (e: unknown) => void): Promise<void>;
}

/** The URL of the queue an SQS ARN names (`GetQueueUrl`). */
async function urlOfArn(sqs: SQSClient, arn: string): Promise<string> {
  const [, , , , account, name] = arn.split(':');
  const out = await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
  return out.QueueUrl!;
}

/** Creates a {@link ScheduleDriver} (test support and local runs). */
export function createScheduleDriver(o: ScheduleDriverOptions): ScheduleDriver {
  const group = o.group ?? 'default';
  const driver: ScheduleDriver = {
    async list() {
      const out: DrivenSchedule[] = [];
      let token: string | undefined;
      do {
        const page = await o.scheduler.send(new ListSchedulesCommand({ GroupName: group, NextToken: token }));
        for (const summary of page.Schedules ?? []) {
          const s = await o.scheduler
            .send(new GetScheduleCommand({ Name: summary.Name, GroupName: group }))
            .catch((e: unknown) => {
              if (e instanceof ResourceNotFoundException) return undefined; // deleted since the listing
              throw e;
            });
          if (!s) continue;
          const at = parseAtExpression(s.ScheduleExpression ?? '');
          if (at === null || !s.Target?.Arn) continue;
          out.push({ name: s.Name!, at, targetArn: s.Target.Arn, input: s.Target.Input ?? '' });
        }
        token = page.NextToken;
      } while (token);
      return out;
    },
    async fireDue(now = Date.now()) {
      const fired: DrivenSchedule[] = [];
      for (const s of await driver.list()) {
        if (s.at > now) continue;
        const url = o.queueUrlOf ? o.queueUrlOf(s.targetArn) : await urlOfArn(o.sqs, s.targetArn);
        await o.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: s.input }));
        try {
          await o.scheduler.send(new DeleteScheduleCommand({ Name: s.name, GroupName: group }));
        } catch (e) {
          if (!(e instanceof ResourceNotFoundException)) throw e;
        }
        fired.push(s);
      }
      return fired;
    },
    async run(signal, intervalMs = 200, onError) {
      while (!signal.aborted) {
        await driver.fireDue().catch((e: unknown) => onError?.(e));
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    },
  };
  return driver;
}
