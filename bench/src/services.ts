import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Connection URLs of the test servers: the environment if set, else what
 * `bash scripts/services.sh env` prints (the project's defaults and overrides).
 */
export function serviceUrls(): { pg: string; redis: string; mongo: string; dynamo: string } {
  const env: Record<string, string | undefined> = { ...process.env };
  const keys = ['STEPFOLD_PG_URL', 'STEPFOLD_REDIS_URL', 'STEPFOLD_MONGO_URL', 'STEPFOLD_DYNAMO_ENDPOINT'];
  if (keys.some((k) => !env[k])) {
    const r = spawnSync('bash', ['scripts/services.sh', 'env'], { cwd: ROOT, encoding: 'utf8' });
    for (const m of (r.stdout ?? '').matchAll(/^export (\w+)=(.*)$/gm))
      env[m[1]!] ??= m[2]!.replace(/^'|'$/g, '');
  }
  return {
    pg: env['STEPFOLD_PG_URL'] ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold',
    redis: env['STEPFOLD_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    mongo: env['STEPFOLD_MONGO_URL'] ?? 'mongodb://127.0.0.1:27017/stepfold',
    dynamo: env['STEPFOLD_DYNAMO_ENDPOINT'] ?? 'http://127.0.0.1:8000',
  };
}
