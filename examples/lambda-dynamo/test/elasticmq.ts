/**
 * ElasticMQ (an SQS-compatible server, from Maven Central) for the tests: fetched with Maven on
 * first use into `.elasticmq/lib` (and `~/.m2`), started with the machine's Java on a free
 * 127.0.0.1 port, stopped after the tests. `STEPFOLD_SQS_ENDPOINT` uses a running server instead.
 * Java 17 and Maven come with `bash scripts/services.sh` (`up java` installs only them).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pom = join(root, 'elasticmq', 'pom.xml');
const cache = join(root, '.elasticmq');
const lib = join(cache, 'lib');

export interface SqsServer {
  endpoint: string;
  stop(): Promise<void>;
}

const run = promisify(execFile);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const r = await fetch(`${endpoint}/?Action=ListQueues`, { signal: AbortSignal.timeout(1000) });
    return r.ok;
  } catch {
    return false;
  }
}

/** Copies ElasticMQ's jars into .elasticmq/lib unless they are there for this pom.xml already. */
async function fetchJars(): Promise<void> {
  const stamp = createHash('sha256').update(readFileSync(pom)).digest('hex');
  const stampFile = join(cache, 'lib.stamp');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(lib)) return;
  mkdirSync(cache, { recursive: true });
  const tmp = join(cache, `lib.${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  try {
    await run(
      'mvn',
      [
        '-B',
        '-q',
        '-f',
        pom,
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${tmp}`,
      ],
      { timeout: 600_000 },
    );
  } catch (e) {
    throw new Error(
      'could not fetch ElasticMQ with Maven (needs mvn and Java 17: `bash scripts/services.sh up java` installs both)',
      { cause: e },
    );
  }
  rmSync(lib, { recursive: true, force: true });
  renameSync(tmp, lib);
  writeFileSync(stampFile, stamp);
}

/** Starts ElasticMQ (or returns the server at `STEPFOLD_SQS_ENDPOINT`); fails loudly if it cannot. */
export async function startSqs(): Promise<SqsServer> {
  const given = process.env.STEPFOLD_SQS_ENDPOINT;
  if (given) {
    if (!(await answers(given)))
      throw new Error(`no SQS-compatible server answers at ${given} (STEPFOLD_SQS_ENDPOINT)`);
    return { endpoint: given, stop: async () => {} };
  }
  await fetchJars();
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const conf = join(cache, `elasticmq-${port}.conf`);
  writeFileSync(
    conf,
    [
      'include classpath("application.conf")',
      `node-address { protocol = http, host = "127.0.0.1", port = ${port}, context-path = "" }`,
      `rest-sqs { enabled = true, bind-port = ${port}, bind-hostname = "127.0.0.1", sqs-limits = strict }`,
      'rest-stats.enabled = false',
      'generate-node-address = false',
      '',
    ].join('\n'),
  );
  let output = '';
  const child: ChildProcess = spawn(
    'java',
    [
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      `-Dconfig.file=${conf}`,
      '-cp',
      `${lib}/*`,
      'org.elasticmq.server.Main',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  const gone = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  child.once('error', (e) => keep(Buffer.from(String(e))));
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    if (!exited) child.kill('SIGKILL');
    rmSync(conf, { force: true });
  };
  const deadline = Date.now() + 90_000;
  while (!(await answers(endpoint))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`ElasticMQ did not start on ${endpoint}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { endpoint, stop };
}
