export { createLambdaApp, ENV, type LambdaApp, type LambdaAppOptions } from './app.js';
export { type ApiHandlerOptions, createApiHandler } from './http-api.js';
export type {
  ApiGatewayEvent,
  ApiGatewayResult,
  BatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  ScheduledEvent,
  SQSEvent,
  SQSRecord,
  SweepResult,
} from './lambda-types.js';
export { jsonLog, type LambdaLog, type LambdaLogEntry } from './log.js';
export { parseMessage, type QueueMessage } from './messages.js';
export { createQueueHandler, type QueueHandlerOptions } from './queue-handler.js';
export { createStreamHandler, isBlockingWake, type StreamHandlerOptions } from './stream-handler.js';
export { createSweepHandler, type SweepContext, type SweepHandlerOptions } from './sweep.js';
export {
  type Armed,
  atExpression,
  createTimers,
  delaySecondsUntil,
  MAX_DELAY_SECONDS,
  parseAtExpression,
  scheduleName,
  type Timers,
  type TimersOptions,
  type WakeToArm,
} from './timers.js';
