/** Spawns the real worker process (dist/main.js) and talks to it over HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON from the API, checked by the tests
  body: any;
}

export interface LogLine {
  event: string;
  [key: string]: unknown;
}

/** One worker process on a free port. */
export class Worker {
  readonly lines: LogLine[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  port = 0;

  private constructor(readonly proc: ChildProcess) {
    this.exited = new Promise((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    let buf = '';
    proc.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          this.lines.push({ event: 'text', text: line });
        }
      }
    });
    proc.stderr!.on('data', (b: Buffer) => {
      this.stderr = (this.stderr + b.toString()).slice(-8000);
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Starts `node dist/main.js` with `env` and waits for its `listening` line. */
  static async start(env: Record<string, string>): Promise<Worker> {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`pnpm build\` first`);
    const w = new Worker(
      spawn(process.execPath, [MAIN], {
        env: { ...process.env, ...env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const deadline = Date.now() + 30_000;
    let exited = false;
    void w.exited.then(() => {
      exited = true;
    });
    for (;;) {
      const l = w.lines.find((x) => x.event === 'listening');
      if (l) {
        w.port = l.port as number;
        return w;
      }
      if (exited || Date.now() > deadline) {
        w.proc.kill('SIGKILL');
        throw new Error(`worker did not start:\n${w.stderr}\n${JSON.stringify(w.lines)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async request(method: string, path: string, body?: unknown, raw?: string): Promise<Reply> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(raw !== undefined ? { body: raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** Kills the process if it is still running (test cleanup). */
  async dispose(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    await this.exited;
  }
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
