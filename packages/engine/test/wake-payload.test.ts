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

  it('reads the signals a send notice carries with the snapshot, or marks them to claim by id', () => {
    const s = { id: 'o-1', version: 3 };
    const e = { type: 'signal', at: 4, name: 'go' };
    const p = `[{"n":7,"e":${JSON.stringify(e)}},{"n":9,"e":${JSON.stringify(e)}}]`;
    expect(parseWakePayload(`{"at":5,"i":"o-1","s":${JSON.stringify(s)},"p":${p}}`)).toEqual({
      at: 5,
      id: 'o-1',
      snapshot: s,
      sent: [
        { seq: 7, event: e },
        { seq: 9, event: e },
      ],
    });
    // Too large for the notice: no snapshot, and the signals are claimed by id.
    expect(parseWakePayload('{"at":5,"i":"o-1","p":true}')).toEqual({ at: 5, id: 'o-1', sent: [] });
    // A seq that is not an integer: not trusted, claimed by id instead.
    expect(parseWakePayload(`{"at":5,"i":"o-1","s":${JSON.stringify(s)},"p":[{"n":"7"}]}`)).toEqual({
      at: 5,
      id: 'o-1',
      snapshot: s,
      sent: [],
    });
  });
});
