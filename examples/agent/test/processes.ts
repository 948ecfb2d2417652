import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The example's entry, as built by `pnpm build`. */
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** One process of the example (a server or a worker) and the JSON lines it logged. */
export interface ExampleProcess {
  proc: ChildProcess;
  lines: Array<Record<string, unknown>>;
  /** Ends it with SIGTERM (SIGKILL after 5 s) and waits for its exit. */
  stop(): Promise<void>;
}

/** Starts `node dist/main.js` with `env` and waits until it logs `event`. */
export async function startExample(env: Record<string, string>, event: string): Promise<ExampleProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`pnpm build\` first`);
  const proc = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let rest = '';
  proc.stdout!.on('data', (b: Buffer) => {
    const parts = (rest + b.toString()).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ event: 'text', text: line });
      }
    }
  });
  proc.stderr!.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 30_000;
  while (!lines.some((l) => l['event'] === event)) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the example did not log ${event}:\n${stderr}\n${JSON.stringify(lines)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, lines, stop };
}
