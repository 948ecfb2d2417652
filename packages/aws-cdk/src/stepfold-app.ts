import { TERMINAL_STATUSES } from '@stepfold/engine';
import { NOTE_ATTRIBUTE } from '@stepfold/store-dynamo';
import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import {
  Architecture,
  FilterCriteria,
  FilterRule,
  type FunctionProps,
  Function as LambdaFn,
  Runtime,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FUNCTION_ROLES, type FunctionRole, type StepfoldAppProps } from './props.js';
import { TimerSchedules } from './scheduler.js';
import { storeTableShape } from './table.js';

/** The routes of the HTTP API, each sent to the `api` function. */
export const API_ROUTES: readonly { readonly method: HttpMethod; readonly path: string }[] = [
  { method: HttpMethod.POST, path: '/workflows/{name}/instances/{id}' },
  { method: HttpMethod.POST, path: '/instances/{id}/signals/{name}' },
  { method: HttpMethod.POST, path: '/instances/{id}/cancel' },
  { method: HttpMethod.POST, path: '/instances/{id}/abort' },
  { method: HttpMethod.GET, path: '/instances/{id}' },
];

/**
 * The calls `@stepfold/store-dynamo` makes on the instances table and its indexes (DescribeTable
 * for `setup()`): no Scan, no transactions.
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:DescribeTable',
] as const;

/** Defaults of {@link StepfoldApp}'s settings. */
export const STEPFOLD_APP_DEFAULTS = {
  memorySize: 512,
  timeout: Duration.seconds(30),
  /** AWS advises a queue visibility timeout of at least 6 times its consumer's timeout. */
  visibilityTimeoutFactor: 6,
  maxReceiveCount: 5,
  queueBatchSize: 10,
  streamBatchSize: 100,
  streamRetryAttempts: 3,
  sweepSchedule: Schedule.rate(Duration.minutes(1)),
} as const;

// The longest an HTTP API integration may take.
const HTTP_API_TIMEOUT_SECONDS = 30;

// CommonJS dependencies call `require` for Node built-ins, which an ESM bundle lacks.
const REQUIRE_SHIM =
  "import { createRequire as __stepfoldRequire } from 'node:module'; const require = __stepfoldRequire(import.meta.url);";

/**
 * A stepfold app on AWS Lambda: the DynamoDB table of `@stepfold/store-dynamo` with its stream,
 * an HTTP API for `api`, an SQS queue (and dead-letter queue) for `queue`, the stream for
 * `stream`, a scheduled rule for `sweep`, and the EventBridge Scheduler group and role long
 * timers use.
 */
export class StepfoldApp extends Construct {
  /** The instances table, keys and indexes from the store's `tableDefinition`, stream of new images. */
  readonly table: Table;
  /** Events and short wakes; the `queue` function consumes it. */
  readonly queue: Queue;
  /** Where messages go after `maxReceiveCount` failed receives. */
  readonly deadLetterQueue: Queue;
  /** The four functions, by handler. */
  readonly functions: Readonly<Record<FunctionRole, LambdaFn>>;
  /** The HTTP API in front of `api`. */
  readonly httpApi: HttpApi;
  /** The rule that runs `sweep`. */
  readonly sweepRule: Rule;
  /** The schedule group long timers are created in. */
  readonly scheduleGroup: CfnScheduleGroup;
  /** The role EventBridge Scheduler assumes to send a due timer to the queue. */
  readonly schedulerRole: TimerSchedules['role'];

  constructor(scope: Construct, id: string, props: StepfoldAppProps) {
    super(scope, id);
    const shape = storeTableShape();
    this.table = new Table(this, 'Table', {
      ...shape.props,
      ...(props.tableName ? { tableName: props.tableName } : {}),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      ...(props.pointInTimeRecovery
        ? { pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true } }
        : {}),
    });
    for (const index of shape.indexes) this.table.addGlobalSecondaryIndex(index);

    const timeoutOf = (role: FunctionRole) =>
      props.functions?.[role]?.timeout ?? props.timeout ?? STEPFOLD_APP_DEFAULTS.timeout;
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: props.queue?.deadLetterRetention ?? Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(
        timeoutOf('queue').toSeconds() * STEPFOLD_APP_DEFAULTS.visibilityTimeoutFactor,
      ),
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: props.queue?.maxReceiveCount ?? STEPFOLD_APP_DEFAULTS.maxReceiveCount,
      },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });

    const schedules = new TimerSchedules(this, 'Timers', {
      queue: this.queue,
      groupName: props.scheduleGroupName,
    });
    this.scheduleGroup = schedules.group;
    this.schedulerRole = schedules.role;

    const environment = {
      STEPFOLD_TABLE: this.table.tableName,
      STEPFOLD_QUEUE_URL: this.queue.queueUrl,
      STEPFOLD_QUEUE_ARN: this.queue.queueArn,
      STEPFOLD_SCHEDULE_GROUP: schedules.groupName,
      STEPFOLD_SCHEDULER_ROLE_ARN: schedules.role.roleArn,
    };
    const make = (role: FunctionRole): LambdaFn => {
      const own = props.functions?.[role];
      const base: Omit<FunctionProps, 'code' | 'handler'> = {
        runtime: props.runtime ?? Runtime.NODEJS_22_X,
        architecture: props.architecture ?? Architecture.ARM_64,
        memorySize: own?.memorySize ?? props.memorySize ?? STEPFOLD_APP_DEFAULTS.memorySize,
        timeout: timeoutOf(role),
        description: `stepfold ${role} handler`,
        ...(own?.reservedConcurrentExecutions !== undefined
          ? { reservedConcurrentExecutions: own.reservedConcurrentExecutions }
          : {}),
        environment: { ...props.environment, ...own?.environment, ...environment },
        logGroup: new LogGroup(this, `${role}-logs`, {
          retention: props.logRetention ?? RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
        // A failed sweep is not retried: the next one runs on schedule.
        ...(role === 'sweep' ? { retryAttempts: 0 } : {}),
      };
      if (props.entry === undefined)
        return new LambdaFn(this, role, {
          ...base,
          code: props.code,
          handler: props.handlers?.[role] ?? `index.${role}`,
        });
      const bundling = {
        format: OutputFormat.ESM,
        minify: true,
        sourceMap: true,
        // Stack traces need the mappings only; the sources would double the asset.
        sourcesContent: false,
        mainFields: ['module', 'main'],
        externalModules: ['@aws-sdk/*'],
        banner: REQUIRE_SHIM,
        ...props.bundling,
      };
      return new NodejsFunction(this, role, {
        ...base,
        entry: props.entry,
        handler: role,
        ...(props.depsLockFilePath ? { depsLockFilePath: props.depsLockFilePath } : {}),
        ...(props.projectRoot ? { projectRoot: props.projectRoot } : {}),
        bundling,
        // Stack traces point into the sources, not the minified bundle.
        ...(bundling.sourceMap
          ? { environment: { NODE_OPTIONS: '--enable-source-maps', ...base.environment } }
          : {}),
      });
    };
    const functions = Object.fromEntries(FUNCTION_ROLES.map((role) => [role, make(role)]));
    this.functions = functions as Record<FunctionRole, LambdaFn>;

    for (const fn of Object.values(this.functions)) {
      this.table.grant(fn, ...TABLE_ACTIONS);
      this.queue.grantSendMessages(fn);
      schedules.grantArm(fn);
    }

    this.functions.queue.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: props.queue?.batchSize ?? STEPFOLD_APP_DEFAULTS.queueBatchSize,
        reportBatchItemFailures: true,
        ...(props.queue?.maxConcurrency ? { maxConcurrency: props.queue.maxConcurrency } : {}),
      }),
    );
    this.functions.stream.addEventSource(
      // aws-cdk-lib's Table declares its stream ARN `string | undefined`, its ITable `?: string`:
      // the same under the CDK's compiler settings, apart under exactOptionalPropertyTypes.
      new DynamoEventSource(this.table as ITable, {
        // From the oldest record kept, so a write made before the mapping opened still wakes.
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: props.stream?.batchSize ?? STEPFOLD_APP_DEFAULTS.streamBatchSize,
        bisectBatchOnError: true,
        retryAttempts: props.stream?.retryAttempts ?? STEPFOLD_APP_DEFAULTS.streamRetryAttempts,
        reportBatchItemFailures: true,
        // Writes that announce nothing (claims, releases) cost no invocation. A final write and a
        // delete announce no wake but end the instance, and its timer schedule goes with it.
        ...(props.stream?.onlyNotices === false
          ? {}
          : {
              filters: [
                FilterCriteria.filter({
                  dynamodb: { NewImage: { [NOTE_ATTRIBUTE]: { S: FilterRule.exists() } } },
                }),
                FilterCriteria.filter({
                  dynamodb: { NewImage: { status: { S: FilterRule.or(...TERMINAL_STATUSES) } } },
                }),
                FilterCriteria.filter({ eventName: FilterRule.isEqual('REMOVE') }),
              ],
            }),
      }),
    );

    if (timeoutOf('api').toSeconds() > HTTP_API_TIMEOUT_SECONDS)
      Annotations.of(this).addWarningV2(
        '@stepfold/aws-cdk:apiTimeout',
        `the api function's timeout is over ${HTTP_API_TIMEOUT_SECONDS} s, the most an HTTP API waits for it`,
      );
    this.httpApi = new HttpApi(this, 'HttpApi', {
      ...(props.api?.apiName ? { apiName: props.api.apiName } : {}),
      description: 'stepfold: start, signal, cancel, abort and read workflow instances',
    });
    const integration = new HttpLambdaIntegration('Api', this.functions.api);
    for (const route of API_ROUTES)
      this.httpApi.addRoutes({
        path: route.path,
        methods: [route.method],
        integration,
        ...(props.api?.authorizer ? { authorizer: props.api.authorizer } : {}),
      });

    this.sweepRule = new Rule(this, 'Sweep', {
      description: 'stepfold sweep: instances due that no message woke',
      schedule: props.sweepSchedule ?? STEPFOLD_APP_DEFAULTS.sweepSchedule,
      // Nor is a failed delivery, for the same reason.
      targets: [new LambdaFunction(this.functions.sweep, { retryAttempts: 0 })],
    });
  }
}
