// `@stepfold/aws-lambda/local`: what runs the app off AWS (tests, local runs): Lambda's event
// sources in miniature, a driver for a Scheduler that does not fire (moto), request counters, and
// a sample order with the API request that drives it.
export { type LocalResources, type ProvisionOptions, provisionLocally } from './provision.js';
export { type QueueDepth, queueDepth } from './queue-depth.js';
export { countRequests, type RequestCount } from './request-counter.js';
export {
  apiRequest,
  type SampleOrderInput,
  sampleOrder,
  sampleOrderHandlers,
} from './sample-order.js';
export {
  createScheduleDriver,
  type DrivenSchedule,
  type ScheduleDriver,
  type ScheduleDriverOptions,
} from './schedule-driver.js';
export { type ServeLocallyOptions, serveLocally } from './serve.js';
export { pollQueue, type QueuePollOptions } from './sqs-poller.js';
export { pollStream, type StreamPollOptions } from './stream-poller.js';
