import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { StepfoldApp, type StepfoldAppProps } from '../src/index.js';

/** A stack with one StepfoldApp, synthesized offline into a fresh folder, and its template. */
export function synthesize(props: StepfoldAppProps) {
  const outdir = mkdtempSync(join(tmpdir(), 'stepfold-cdk-'));
  const app = new App({ outdir });
  const stack = new Stack(app, 'Workflows', { env: { account: '111111111111', region: 'eu-west-1' } });
  const stepfold = new StepfoldApp(stack, 'Stepfold', props);
  const template = Template.fromStack(stack);
  /** The logical id CloudFormation knows a construct's resource by. */
  const idOf = (c: IConstruct) =>
    stack.getLogicalId((c instanceof CfnElement ? c : c.node.defaultChild) as CfnElement);
  return { outdir, stack, stepfold, template, idOf };
}

/** The fixture folders. */
export const FIXTURES = join(import.meta.dirname, 'fixtures');
