import { Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** What the functions call to arm, move and disarm a long timer's schedule. */
export const SCHEDULE_ACTIONS = [
  'scheduler:CreateSchedule',
  'scheduler:UpdateSchedule',
  'scheduler:DeleteSchedule',
  'scheduler:GetSchedule',
] as const;

/**
 * The EventBridge Scheduler side of long timers: a schedule group the functions create their
 * schedules in, and the role Scheduler assumes to deliver a due schedule to the queue.
 */
export class TimerSchedules extends Construct {
  /** The group every timer schedule is created in. */
  readonly group: CfnScheduleGroup;
  /** The group's name (CloudFormation's `Ref`). */
  readonly groupName: string;
  /** Assumed by scheduler.amazonaws.com, allowed only `sqs:SendMessage` on the queue. */
  readonly role: Role;

  constructor(scope: Construct, id: string, props: { queue: IQueue; groupName?: string | undefined }) {
    super(scope, id);
    this.group = new CfnScheduleGroup(this, 'Group', props.groupName ? { name: props.groupName } : {});
    this.groupName = this.group.ref;
    const { account } = Stack.of(this);
    // Only schedules of this account and group may use the role (the confused-deputy guard AWS advises).
    this.role = new Role(this, 'Role', {
      description: 'EventBridge Scheduler delivers stepfold timers to the queue',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnLike: { 'aws:SourceArn': this.group.attrArn },
        },
      }),
    });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.queue.queueArn] }),
    );
  }

  /** Lets `grantee` manage the group's schedules and hand them the delivery role. */
  grantArm(grantee: IGrantable): void {
    const schedules = Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
    });
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...SCHEDULE_ACTIONS], resources: [schedules] }),
    );
    // The role may be passed to Scheduler alone, not attached to anything else.
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }
}
