/**
 * The deployable module: four Lambda functions over one table, one queue and one schedule group,
 * configured by the environment (STEPFOLD_TABLE, STEPFOLD_QUEUE_URL, STEPFOLD_QUEUE_ARN,
 * STEPFOLD_SCHEDULE_GROUP, STEPFOLD_SCHEDULER_ROLE_ARN; see @stepfold/aws-lambda's README).
 *
 *   api     API Gateway (HTTP API or REST proxy)
 *   queue   the SQS queue's event source
 *   stream  the table's DynamoDB stream (new images)
 *   sweep   a rate(1 minute) schedule rule
 */
import { createLambdaApp } from '@stepfold/aws-lambda';
import { createHandlers, workflows } from './workflows.js';

export const { api, queue, stream, sweep } = createLambdaApp({ workflows, handlers: createHandlers() });
