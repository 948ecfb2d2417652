// The consumer program of @stepfold/aws-cdk, installed from its tarball with its peers: a stack
// with the construct on prebuilt code, synthesized offline, its table checked against the store's.
import assert from 'node:assert/strict';
import { StepfoldApp } from '@stepfold/aws-cdk';
import { tableDefinition } from '@stepfold/store-dynamo';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code } from 'aws-cdk-lib/aws-lambda';

const app = new App();
const stack = new Stack(app, 'Workflows');
const stepfold = new StepfoldApp(stack, 'Stepfold', {
  code: Code.fromInline('exports.api = exports.queue = exports.stream = exports.sweep = async () => ({});'),
});
const template = Template.fromStack(stack);
template.resourceCountIs('AWS::Lambda::Function', 4);
template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
const definition = tableDefinition('stepfold_instances', { streams: true });
template.hasResourceProperties('AWS::DynamoDB::Table', {
  KeySchema: definition.KeySchema,
  StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
});
assert.equal(Object.keys(stepfold.functions).length, 4);
console.log('pack-check cdk app: ok');
