import { vi } from 'vitest';

/** What one in-process CLI run printed and how it exited. */
export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI's `main` in this process with `args`, capturing what it writes to stdout and stderr. */
export async function runInProcess(
  main: (argv: readonly string[]) => Promise<number>,
  args: readonly string[],
): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'stepfold', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
