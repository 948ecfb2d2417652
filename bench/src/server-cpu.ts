import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// Where the time goes on a store's side: the CPU the server process (the one listening on the
// store's port, on this machine) used over a stretch of wall time, read from /proc (Linux only;
// elsewhere, or for a server we cannot see, it is simply not reported).

const TICKS_PER_SECOND = 100; // USER_HZ on every Linux the bench runs on

/** Inodes of the sockets listening on `port` (IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address, state 0A = LISTEN, inode is the 10th field
      if (f[1]?.endsWith(hex) && f[3] === '0A' && f[9]) out.add(f[9]);
    }
  }
  return out;
}

/** The pid of the process listening on `port`, or null when none of ours is to be seen. */
export function pidListening(port: number): number | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return Number(entry);
      } catch {}
    }
  }
  return null;
}

/** CPU seconds (user + system, its threads included) process `pid` has used, or null. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Measures the CPU of `pid` around `work`: cores it kept busy on average (1 = one core all along). */
export async function withServerCpu<T>(
  pid: number | null,
  work: () => Promise<T>,
): Promise<[T, number | null]> {
  const c0 = pid === null ? null : cpuSeconds(pid);
  const t0 = performance.now();
  const out = await work();
  const c1 = pid === null ? null : cpuSeconds(pid);
  const seconds = (performance.now() - t0) / 1000;
  return [out, c0 === null || c1 === null ? null : (c1 - c0) / seconds];
}
