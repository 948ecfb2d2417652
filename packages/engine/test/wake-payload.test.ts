import { describe, expect, it } from 'vitest';
import { parseWakePayload } from '../src/index.js';

describe('parseWakePayload', () => {
  it('reads at, workflow, id and a snapshot of the instance named', () => {
    const s = { id: 'o-1', version: 3 };
    expect(parseWakePayload(`{"at":5,"w":"order","i":"o-1","s":${JSON.stringify(s)}}`)).toEqual({
      at: 5,
      workflow: 'order',
      id: 'o-1',
      snapshot: s,
    });
    expect(parseWakePayload('{"at":5}')).toEqual({ at: 5 });
  });

  it('drops a snapshot of another instance, or one with no valid id to check it against', () => {
    expect(parseWakePayload('{"at":5,"i":"o-1","s":{"id":"o-2"}}')).toEqual({ at: 5, id: 'o-1' });
    expect(parseWakePayload('{"at":5,"i":"no spaces","s":{"id":"no spaces"}}')).toEqual({ at: 5 });
    expect(parseWakePayload('{"at":5,"i":"o-1","s":"o-1"}')).toEqual({ at: 5, id: 'o-1' });
  });

  it('is null for anything else, and never throws', () => {
    for (const junk of [undefined, '', 'null', '[]', '7', '{', '{"at":"5"}', '{"at":null}', '{"w":"x"}'])
      expect(parseWakePayload(junk), String(junk)).toBeNull();
  });
});
