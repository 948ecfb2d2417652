import { connect, type Socket } from 'node:net';
import { REDIS_URL } from './server.js';

// MONITOR on a socket of its own, not ioredis's `monitor()`: on a busy server the first monitored
// lines can arrive in the same read as MONITOR's +OK, and ioredis then fails the connection with
// "Command queue state error" (seen with other test files' traffic on the shared server).

/** One command the server ran: its words, and whether a script (`lua`) ran it. */
export interface MonitoredCommand {
  args: string[];
  lua: boolean;
}

/** A MONITOR connection: `close()` ends it. */
export interface Monitor {
  close(): void;
}

/** Parses one MONITOR line (`<time> [<db> <source>] "word" "word" …`); null for anything else. */
export function parseMonitorLine(line: string): MonitoredCommand | null {
  const head = /^\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line);
  if (!head) return null;
  const args: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] !== '"') {
      i++;
      continue;
    }
    let word = '';
    for (i++; i < line.length && line[i] !== '"'; i++) {
      if (line[i] !== '\\') {
        word += line[i];
        continue;
      }
      const next = line[++i];
      if (next === 'x') {
        word += String.fromCharCode(Number.parseInt(line.slice(i + 1, i + 3), 16));
        i += 2;
      } else word += next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : next;
    }
    args.push(word);
    i++;
  }
  return { args, lua: head[1] === 'lua' };
}

/** Starts MONITOR on the test server; resolves once the server answered +OK. */
export function monitor(onCommand: (c: MonitoredCommand) => void, url = REDIS_URL): Promise<Monitor> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: hostname, port: Number(port || 6379) });
    let buffer = '';
    let ready = false;
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!ready) {
          if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
          ready = true;
          resolve({ close: () => socket.destroy() });
        } else {
          const c = parseMonitorLine(line.startsWith('+') ? line.slice(1) : line);
          if (c) onCommand(c);
        }
        end = buffer.indexOf('\r\n');
      }
    });
  });
}
