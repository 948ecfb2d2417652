import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Schedule } from 'aws-cdk-lib/aws-events';
import type { Architecture, Code, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';

/** The four handlers a stepfold Lambda app exports, by their export names. */
export const FUNCTION_ROLES = ['api', 'queue', 'stream', 'sweep'] as const;
/** One of the four handlers: `api` (HTTP), `queue` (SQS), `stream` (DynamoDB stream), `sweep` (rule). */
export type FunctionRole = (typeof FUNCTION_ROLES)[number];

/** Settings of one function, over the app-wide ones. */
export interface FunctionSettings {
  /** Memory in MB (default: the app's `memorySize`). */
  readonly memorySize?: number | undefined;
  /** Timeout (default: the app's `timeout`). The `queue` queue's visibility timeout is 6 times this. */
  readonly timeout?: Duration | undefined;
  /** Reserved concurrency (default: none, the account's pool). */
  readonly reservedConcurrentExecutions?: number | undefined;
  /** Environment variables for this function only (the STEPFOLD_ ones cannot be overridden). */
  readonly environment?: Readonly<Record<string, string>> | undefined;
}

/** The user's code as a TypeScript or JavaScript entry file, bundled with esbuild at synth. */
export interface EntryCode {
  /** Path to the module exporting `api`, `queue`, `stream` and `sweep` (`createLambdaApp`). */
  readonly entry: string;
  /**
   * esbuild options over the defaults: ESM, minified, source maps, `@aws-sdk/*` external, a
   * `require` shim for CommonJS dependencies. See the README's "Bundling".
   */
  readonly bundling?: BundlingOptions | undefined;
  /** The lock file NodejsFunction looks for (default: the nearest one above `entry`). */
  readonly depsLockFilePath?: string | undefined;
  /** The folder esbuild runs in (default: the lock file's folder). */
  readonly projectRoot?: string | undefined;
  readonly code?: never;
  readonly handlers?: never;
}

/** The user's code already built, with the handler name of each function. */
export interface PrebuiltCode {
  /** The built code, e.g. `Code.fromAsset('dist/lambda')`. */
  readonly code: Code;
  /** Handler of each function, `<file>.<export>` (default `index.api`, `index.queue`, …). */
  readonly handlers?: Partial<Record<FunctionRole, string>> | undefined;
  readonly entry?: never;
  readonly bundling?: never;
  readonly depsLockFilePath?: never;
  readonly projectRoot?: never;
}

/** Settings of the `queue` function's SQS event source and of the queues. */
export interface QueueSettings {
  /** Messages per invocation (default 10). */
  readonly batchSize?: number | undefined;
  /** Receives before a message moves to the dead-letter queue (default 5). */
  readonly maxReceiveCount?: number | undefined;
  /** How long the dead-letter queue keeps messages (default 14 days, the most SQS allows). */
  readonly deadLetterRetention?: Duration | undefined;
  /** Concurrent invocations the event source may use (default: Lambda's own scaling). */
  readonly maxConcurrency?: number | undefined;
}

/** Settings of the `stream` function's DynamoDB stream event source. */
export interface StreamSettings {
  /** Records per invocation (default 100). */
  readonly batchSize?: number | undefined;
  /** Retries of a failing batch before its records are skipped (default 3). */
  readonly retryAttempts?: number | undefined;
  /**
   * Invoke only for records whose write announced a wake (the item's `note` attribute is set) or
   * ended the instance (a final status, a delete: its timer schedule is deleted); claims and
   * releases then cost no invocation (default true).
   */
  readonly onlyNotices?: boolean | undefined;
}

/** Settings of the HTTP API in front of the `api` function. */
export interface ApiSettings {
  /** Authorizer for every route (default: none, the API is public). */
  readonly authorizer?: IHttpRouteAuthorizer | undefined;
  /** The API's name (default: the construct's path). */
  readonly apiName?: string | undefined;
}

/** Settings shared by all props shapes of {@link StepfoldApp}. */
export interface StepfoldAppBaseProps {
  /** Table name (default: one CloudFormation generates, which allows replacing the table). */
  readonly tableName?: string | undefined;
  /** What happens to the table when it leaves the stack (default `RemovalPolicy.RETAIN`). */
  readonly removalPolicy?: RemovalPolicy | undefined;
  /** Point-in-time recovery for the table (default false: it is billed per GB-month). */
  readonly pointInTimeRecovery?: boolean | undefined;
  /** Lambda runtime (default Node.js 22). */
  readonly runtime?: Runtime | undefined;
  /** Instruction set (default ARM_64, cheaper per GB-second than x86_64). */
  readonly architecture?: Architecture | undefined;
  /** Memory of every function in MB (default 512). */
  readonly memorySize?: number | undefined;
  /** Timeout of every function (default 30 seconds; HTTP APIs wait at most 30 for `api`). */
  readonly timeout?: Duration | undefined;
  /** Per-function settings over the two above. */
  readonly functions?: Partial<Record<FunctionRole, FunctionSettings>> | undefined;
  /** Environment variables for every function (the STEPFOLD_ ones cannot be overridden). */
  readonly environment?: Readonly<Record<string, string>> | undefined;
  /** How long the functions' log groups keep events (default one month). */
  readonly logRetention?: RetentionDays | undefined;
  /** When the `sweep` function runs (default `rate(1 minute)`). */
  readonly sweepSchedule?: Schedule | undefined;
  /** The queue, its dead-letter queue and the `queue` function's event source. */
  readonly queue?: QueueSettings | undefined;
  /** The `stream` function's event source. */
  readonly stream?: StreamSettings | undefined;
  /** The HTTP API. */
  readonly api?: ApiSettings | undefined;
  /** Schedule group name (default: one CloudFormation generates). */
  readonly scheduleGroupName?: string | undefined;
}

/** Props of {@link StepfoldApp}: the shared settings and the code, as an entry file or built. */
export type StepfoldAppProps = StepfoldAppBaseProps & (EntryCode | PrebuiltCode);
