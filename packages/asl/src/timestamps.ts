// Timestamps as Step Functions accepts them: ISO-8601 extended date-times with a `T`, an offset
// (`Z` or `±hh:mm`) and optional fractional seconds; anything else (no zone, a space, month 13,
// hour 25) is not a timestamp.

/** A parsed timestamp: whole epoch seconds and the fraction as nine digits, so no precision is lost. */
export interface Timestamp {
  seconds: number;
  nanos: string;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Parses an ASL timestamp, or null when it is not one. */
export function parseTimestamp(text: string): Timestamp | null {
  const m = PATTERN.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > days) return null;
  let offset = 0;
  const zone = m[8]!;
  if (zone !== 'Z') {
    const [oh, om] = zone.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) return null;
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om) * 60;
  }
  const seconds = Date.UTC(y, mo - 1, d, h, mi, s) / 1000 - offset;
  return { seconds, nanos: (m[7] ?? '').padEnd(9, '0') };
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareTimestamps(a: Timestamp, b: Timestamp): number {
  if (a.seconds !== b.seconds) return a.seconds - b.seconds;
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** The epoch milliseconds of a timestamp (sub-millisecond digits dropped). */
export function timestampMs(t: Timestamp): number {
  return t.seconds * 1000 + Number(t.nanos.slice(0, 3));
}
