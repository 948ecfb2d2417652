import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tableDefinition } from '@stepfold/store-dynamo';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { API_ROUTES, FUNCTION_ROLES, SCHEDULE_ACTIONS, TABLE_ACTIONS, tableShapeOf } from '../src/index.js';
import { FIXTURES, synthesize } from './stack.js';

type Json = Record<string, unknown>;
type Statement = { Action: string | string[]; Resource: unknown; Condition?: Json };

const prebuilt = () => Code.fromAsset(join(FIXTURES, 'prebuilt'));
// One synth serves every test of the defaults (a synth takes seconds on a busy machine).
const { template, stepfold, idOf, outdir, stack } = synthesize({ code: prebuilt() });
afterAll(() => rmSync(outdir, { recursive: true, force: true }));
const ids = {
  table: idOf(stepfold.table),
  queue: idOf(stepfold.queue),
  dlq: idOf(stepfold.deadLetterQueue),
  group: idOf(stepfold.scheduleGroup),
  schedulerRole: idOf(stepfold.schedulerRole),
};
const ref = (id: string) => ({ Ref: id });
const arn = (id: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [id, attribute] });

/** The statements of the inline policies attached to a role. */
function statementsOf(roleId: string): Statement[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as {
    Properties: { Roles: unknown[]; PolicyDocument: { Statement: Statement[] } };
  }[];
  return policies
    .filter((p) => p.Properties.Roles.some((r) => JSON.stringify(r) === JSON.stringify(ref(roleId))))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}
const actionsOf = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat());
const functionRoleId = (role: (typeof FUNCTION_ROLES)[number]) => idOf(stepfold.functions[role].role!);

const byName = <T extends { IndexName?: string | undefined }>(a: T, b: T) =>
  (a.IndexName ?? '').localeCompare(b.IndexName ?? '');
const byAttribute = <T extends { AttributeName?: string | undefined }>(a: T, b: T) =>
  (a.AttributeName ?? '').localeCompare(b.AttributeName ?? '');

describe('StepfoldApp table', () => {
  const definition = tableDefinition('any', { streams: true });
  const table = template.findResources('AWS::DynamoDB::Table')[ids.table] as {
    Properties: Json & {
      AttributeDefinitions: { AttributeName: string }[];
      GlobalSecondaryIndexes: { IndexName: string }[];
    };
    DeletionPolicy: string;
  };

  it('has the key schema, attributes and indexes of the store’s tableDefinition', () => {
    expect(table.Properties['KeySchema']).toEqual(definition.KeySchema);
    expect([...table.Properties.AttributeDefinitions].sort(byAttribute)).toEqual(
      [...(definition.AttributeDefinitions ?? [])].sort(byAttribute),
    );
    expect([...table.Properties.GlobalSecondaryIndexes].sort(byName)).toEqual(
      [...(definition.GlobalSecondaryIndexes ?? [])].sort(byName),
    );
  });

  it('is on-demand, streams new images and is retained by default', () => {
    expect(table.Properties['BillingMode']).toBe('PAY_PER_REQUEST');
    expect(table.Properties['StreamSpecification']).toEqual({
      StreamViewType: definition.StreamSpecification?.StreamViewType,
    });
    expect(definition.StreamSpecification?.StreamViewType).toBe('NEW_IMAGE');
    expect(table.DeletionPolicy).toBe('Retain');
  });

  it('refuses a definition it cannot map rather than dropping part of it', () => {
    const lsi = {
      ...definition,
      LocalSecondaryIndexes: [
        {
          IndexName: 'by-version',
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' as const }],
          Projection: { ProjectionType: 'ALL' as const },
        },
      ],
    };
    expect(() => tableShapeOf(lsi)).toThrow(/local secondary indexes/);
    expect(() => tableShapeOf({ ...definition, BillingMode: 'PROVISIONED' })).toThrow(/billing mode/);
    const untyped = { ...definition, AttributeDefinitions: definition.AttributeDefinitions?.slice(1) };
    expect(() => tableShapeOf(untyped)).toThrow(/key id has no attribute definition/);
  });
});

describe('StepfoldApp functions', () => {
  it('creates the four handlers from the prebuilt code, each with every STEPFOLD_ variable', () => {
    template.resourceCountIs('AWS::Lambda::Function', 4);
    for (const role of FUNCTION_ROLES)
      template.hasResourceProperties('AWS::Lambda::Function', {
        Handler: `index.${role}`,
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        Timeout: 30,
        Environment: {
          Variables: {
            STEPFOLD_TABLE: ref(ids.table),
            STEPFOLD_QUEUE_URL: ref(ids.queue),
            STEPFOLD_QUEUE_ARN: arn(ids.queue),
            STEPFOLD_SCHEDULE_GROUP: ref(ids.group),
            STEPFOLD_SCHEDULER_ROLE_ARN: arn(ids.schedulerRole),
          },
        },
      });
  });

  it('gives every function the table calls the store makes, the queue send and the timer schedules', () => {
    const schedules = {
      'Fn::Join': [
        '',
        ['arn:', ref('AWS::Partition'), ':scheduler:eu-west-1:111111111111:schedule/', ref(ids.group), '/*'],
      ],
    };
    for (const role of FUNCTION_ROLES) {
      const statements = statementsOf(functionRoleId(role));
      expect(statements).toContainEqual(
        expect.objectContaining({
          Action: [...TABLE_ACTIONS],
          Resource: [arn(ids.table), { 'Fn::Join': ['', [arn(ids.table), '/index/*']] }],
        }),
      );
      expect(statements).toContainEqual(
        expect.objectContaining({
          Action: expect.arrayContaining(['sqs:SendMessage']),
          Resource: arn(ids.queue),
        }),
      );
      expect(statements).toContainEqual(
        expect.objectContaining({ Action: [...SCHEDULE_ACTIONS], Resource: schedules }),
      );
      expect(statements).toContainEqual(
        expect.objectContaining({
          Action: 'iam:PassRole',
          Resource: arn(ids.schedulerRole),
          Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        }),
      );
      expect(actionsOf(statements)).not.toContain('dynamodb:Scan');
    }
  });

  it('lets only the queue function consume the queue and only the stream function read the stream', () => {
    for (const role of FUNCTION_ROLES) {
      const actions = actionsOf(statementsOf(functionRoleId(role)));
      expect(actions.includes('sqs:ReceiveMessage')).toBe(role === 'queue');
      expect(actions.includes('dynamodb:DescribeStream')).toBe(role === 'stream');
    }
    expect(statementsOf(functionRoleId('stream'))).toContainEqual(
      expect.objectContaining({
        Action: expect.arrayContaining(['dynamodb:GetRecords', 'dynamodb:GetShardIterator']),
        Resource: arn(ids.table, 'StreamArn'),
      }),
    );
  });
});

describe('StepfoldApp event sources', () => {
  it('feeds the queue function from the queue, reporting batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arn(ids.queue),
      FunctionName: ref(idOf(stepfold.functions.queue)),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
  });

  it('sends what the queue cannot deliver 5 times to the dead-letter queue, visibility 6x the timeout', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 180,
      RedrivePolicy: { deadLetterTargetArn: arn(ids.dlq), maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 14 * 24 * 3600 });
  });

  it('reads the stream from TRIM_HORIZON with bisect, a retry limit and only records that carry a note or end an instance', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arn(ids.table, 'StreamArn'),
      FunctionName: ref(idOf(stepfold.functions.stream)),
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 3,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ dynamodb: { NewImage: { note: { S: [{ exists: true }] } } } }) },
          {
            Pattern: JSON.stringify({
              dynamodb: { NewImage: { status: { S: ['completed', 'failed', 'cancelled', 'aborted'] } } },
            }),
          },
          { Pattern: JSON.stringify({ eventName: ['REMOVE'] }) },
        ],
      },
    });
  });

  it('runs the sweep every minute, without retries', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ Arn: arn(idOf(stepfold.functions.sweep)) })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: ref(idOf(stepfold.functions.sweep)),
      MaximumRetryAttempts: 0,
    });
  });

  it('routes each API call to the api function', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Route', API_ROUTES.length);
    const routeKeys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );
    expect(routeKeys.sort()).toEqual(
      [
        'GET /instances/{id}',
        'POST /instances/{id}/abort',
        'POST /instances/{id}/cancel',
        'POST /instances/{id}/signals/{name}',
        'POST /workflows/{name}/instances/{id}',
      ].sort(),
    );
    template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: arn(idOf(stepfold.functions.api)),
      PayloadFormatVersion: '2.0',
    });
  });
});

describe('StepfoldApp timers', () => {
  it('creates the schedule group', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
  });

  it('lets only Scheduler, for this account and group, assume the role that sends to the queue', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: {
              StringEquals: { 'aws:SourceAccount': '111111111111' },
              ArnLike: { 'aws:SourceArn': arn(ids.group) },
            },
          },
        ],
      },
    });
    expect(statementsOf(ids.schedulerRole)).toEqual([
      { Action: 'sqs:SendMessage', Effect: 'Allow', Resource: arn(ids.queue) },
    ]);
  });
});

describe('StepfoldApp options', () => {
  const custom = synthesize({
    code: prebuilt(),
    handlers: { api: 'main.http' },
    tableName: 'orders',
    removalPolicy: RemovalPolicy.DESTROY,
    timeout: Duration.seconds(20),
    functions: {
      queue: { timeout: Duration.minutes(2), memorySize: 1024 },
      api: { timeout: Duration.seconds(40) },
    },
    environment: { LOG_LEVEL: 'debug', STEPFOLD_TABLE: 'not-this-one' },
    sweepSchedule: Schedule.rate(Duration.minutes(5)),
    queue: { maxReceiveCount: 8 },
    stream: { retryAttempts: 5, onlyNotices: false },
    scheduleGroupName: 'orders-timers',
  });
  const t = custom.template;
  afterAll(() => rmSync(custom.outdir, { recursive: true, force: true }));

  it('applies names, removal policy, handler names, the sweep rate and the retry limits', () => {
    t.hasResource('AWS::DynamoDB::Table', { Properties: { TableName: 'orders' }, DeletionPolicy: 'Delete' });
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'main.http', Timeout: 40 });
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.sweep', Timeout: 20 });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.queue',
      Timeout: 120,
      MemorySize: 1024,
    });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    t.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'orders-timers' });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      MaximumRetryAttempts: 5,
      FilterCriteria: Match.absent(),
    });
  });

  it('warns when the api function may run longer than an HTTP API waits', () => {
    Annotations.fromStack(custom.stack).hasWarning('*', Match.stringLikeRegexp('timeout is over 30 s'));
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });

  it('keeps the queue visibility 6x the queue function’s own timeout', () => {
    t.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 720,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 8 }),
    });
  });

  it('adds the user’s environment but never lets it override a STEPFOLD_ variable', () => {
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          LOG_LEVEL: 'debug',
          STEPFOLD_TABLE: ref(custom.idOf(custom.stepfold.table)),
        }),
      },
    });
  });
});
