import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FUNCTION_ROLES } from '../src/index.js';
import { FIXTURES, synthesize } from './stack.js';

// NodejsFunction bundles at synth, with the workspace's esbuild (a root devDependency) when it
// finds one and with Docker otherwise: forbidding Docker makes a fallback fail instead of hang.
process.env['CDK_DOCKER'] = 'docker-is-not-used-by-these-tests';

describe('StepfoldApp with an entry file', () => {
  const { template, outdir } = synthesize({ entry: join(FIXTURES, 'entry/app.ts') });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: {
      Handler: string;
      Runtime: string;
      Code: { S3Key: string };
      Environment: { Variables: Record<string, unknown> };
    };
  }[];
  const keys = new Set(functions.map((f) => f.Properties.Code.S3Key));
  const asset = join(outdir, `asset.${[...keys][0]?.replace(/\.zip$/, '')}`);

  it('bundles once: the four functions share one asset, each naming its export', () => {
    expect(functions.map((f) => f.Properties.Handler).sort()).toEqual(
      FUNCTION_ROLES.map((role) => `index.${role}`).sort(),
    );
    expect(keys.size).toBe(1);
    for (const f of functions) {
      expect(f.Properties.Runtime).toBe('nodejs22.x');
      expect(f.Properties.Environment.Variables).toMatchObject({
        NODE_OPTIONS: '--enable-source-maps',
        STEPFOLD_TABLE: expect.anything(),
        STEPFOLD_QUEUE_URL: expect.anything(),
        STEPFOLD_QUEUE_ARN: expect.anything(),
        STEPFOLD_SCHEDULE_GROUP: expect.anything(),
        STEPFOLD_SCHEDULER_ROLE_ARN: expect.anything(),
      });
    }
  });

  it('emits a minified ESM bundle with a source map, the store inside and the AWS SDK left to the runtime', () => {
    const bundle = readFileSync(join(asset, 'index.mjs'), 'utf8');
    expect(existsSync(join(asset, 'index.mjs.map'))).toBe(true);
    expect(bundle.startsWith("import { createRequire as __stepfoldRequire } from 'node:module';")).toBe(true);
    // ESM exports of the four handlers.
    expect(bundle).toMatch(/export\s*\{[^}]*\bapi\b[^}]*\}/);
    for (const role of FUNCTION_ROLES) expect(bundle).toMatch(new RegExp(`\\bas ${role}\\b|[{,]${role}[,}]`));
    // The store is bundled (its index names are in the code), the SDK is imported, not inlined.
    expect(bundle).toContain('sent-index');
    expect(bundle).toMatch(/from\s*"@aws-sdk\/client-dynamodb"/);
    expect(bundle).not.toContain('DynamoDBServiceException');
    // Minified: no line per statement.
    expect(bundle.split('\n').length).toBeLessThan(20);
  });
});
