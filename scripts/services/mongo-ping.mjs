// Readiness probe for the MongoDB wire protocol (FerretDB): sends one OP_MSG
// `{ ping: 1, $db: "admin" }` and exits 0 only if the reply says ok: 1.
// Plain Node, no driver, so the probe needs no npm install.
// Usage: node mongo-ping.mjs HOST PORT
import net from 'node:net';

const [host, port] = [process.argv[2] ?? '127.0.0.1', Number(process.argv[3] ?? 27017)];

const int32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
};
const cstring = (s) => Buffer.from(`${s}\0`, 'utf8');

function bsonDoc(elements) {
  const body = Buffer.concat([...elements, Buffer.from([0])]);
  return Buffer.concat([int32(body.length + 4), body]);
}

const doc = bsonDoc([
  Buffer.from([0x10]),
  cstring('ping'),
  int32(1), // int32 ping: 1
  Buffer.from([0x02]),
  cstring('$db'),
  int32(6),
  cstring('admin'), // string $db: "admin"
]);
const OP_MSG = 2013;
const payload = Buffer.concat([int32(0) /* flagBits */, Buffer.from([0]) /* section kind 0 */, doc]);
const message = Buffer.concat([int32(16 + payload.length), int32(1), int32(0), int32(OP_MSG), payload]);

// Find top-level field "ok" in the reply's body document and read it as a number.
function okValue(reply) {
  const start = 16 + 4 + 1; // header, flagBits, section kind
  const end = start + reply.readInt32LE(start) - 1;
  let i = start + 4;
  while (i < end) {
    const type = reply[i];
    const nameEnd = reply.indexOf(0, i + 1);
    const name = reply.toString('utf8', i + 1, nameEnd);
    const v = nameEnd + 1;
    if (name === 'ok') {
      if (type === 0x01) return reply.readDoubleLE(v);
      if (type === 0x10) return reply.readInt32LE(v);
      return undefined;
    }
    // Only the types a ping reply may carry before "ok" need skipping.
    if (type === 0x01 || type === 0x09 || type === 0x11 || type === 0x12) i = v + 8;
    else if (type === 0x10) i = v + 4;
    else if (type === 0x08) i = v + 1;
    else if (type === 0x02) i = v + 4 + reply.readInt32LE(v);
    else if (type === 0x03 || type === 0x04) i = v + reply.readInt32LE(v);
    else return undefined;
  }
  return undefined;
}

const fail = (why) => {
  console.error(`mongo-ping ${host}:${port}: ${why}`);
  process.exit(1);
};

const socket = net.connect({ host, port });
socket.setTimeout(3000, () => fail('timed out'));
socket.on('error', (err) => fail(err.message));
let buf = Buffer.alloc(0);
socket.on('connect', () => socket.write(message));
socket.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  if (buf.length < 4 || buf.length < buf.readInt32LE(0)) return;
  socket.destroy();
  if (buf.readInt32LE(12) !== OP_MSG) fail(`unexpected opCode ${buf.readInt32LE(12)}`);
  const ok = okValue(buf);
  if (ok !== 1) fail(`reply ok=${ok}`);
  process.exit(0);
});
