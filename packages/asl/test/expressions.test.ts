import { describe, expect, it } from 'vitest';
import { evaluateIntrinsic } from '../src/intrinsics.js';
import { readJsonPath, writeJsonPath } from '../src/json-path.js';

// The intrinsic functions and JSONPath forms the recorded executions do not exercise, with the
// results AWS documents for them.

const data = {
  nums: [1, 2, 3, 4, 5, 6, 7],
  dupes: [1, 2, 3, 3, 3, 4],
  users: [
    { name: 'ada', status: 0 },
    { name: 'bo', status: 1 },
    { name: 'cy', status: 0 },
  ],
  o: { x: 1, y: 2 },
};
const run = (text: string) => evaluateIntrinsic(text, { data, field: 'value.$' });
const read = (path: string) => readJsonPath(path, { data });

describe('intrinsic functions', () => {
  it('evaluates the array functions', () => {
    expect(run('States.ArrayPartition($.nums, 4)')).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7],
    ]);
    expect(run('States.ArrayContains($.nums, 5)')).toBe(true);
    expect(run('States.ArrayContains($.nums, 9)')).toBe(false);
    expect(run('States.ArrayRange(1, 9, 2)')).toEqual([1, 3, 5, 7, 9]);
    expect(run('States.ArrayGetItem($.nums, 5)')).toBe(6);
    expect(run('States.ArrayUnique($.dupes)')).toEqual([1, 2, 3, 4]);
    expect(run('States.ArrayLength(States.Array(1, 2, States.Array(3)))')).toBe(3);
  });

  it('evaluates the string, encoding and JSON functions', () => {
    expect(run("States.Base64Encode('Data to encode')")).toBe('RGF0YSB0byBlbmNvZGU=');
    expect(run("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')")).toBe('Data to encode');
    expect(run("States.StringSplit('This.is+a,test=string', '.+,=')")).toEqual([
      'This',
      'is',
      'a',
      'test',
      'string',
    ]);
    expect(run("States.Format('{} has {} and \\\\{braces\\\\}', $.o.x, $.nums)")).toBe(
      '1 has [1, 2, 3, 4, 5, 6, 7] and {braces}',
    );
    expect(run('States.JsonMerge($.o, States.StringToJson(\'{"y": 3, "z": 4}\'), false)')).toEqual({
      x: 1,
      y: 3,
      z: 4,
    });
    expect(run('States.JsonToString($.o)')).toBe('{"x":1,"y":2}');
  });

  it('fails a bad argument with States.Runtime', () => {
    expect(() => run('States.ArrayGetItem($.nums, 7)')).toThrow(
      expect.objectContaining({ error: 'States.Runtime' }),
    );
    expect(() => run('States.MathAdd($.o, 1)')).toThrow(expect.objectContaining({ error: 'States.Runtime' }));
  });
});

describe('JSONPath', () => {
  it('reads filters, slices with a step, unions and wildcards as lists', () => {
    expect(read('$.users[?(@.status == 0)].name')).toEqual({ found: true, value: ['ada', 'cy'] });
    expect(read('$.nums[0:5:2]')).toEqual({ found: true, value: [1, 3, 5] });
    expect(read('$.nums[-2:]')).toEqual({ found: true, value: [6, 7] });
    expect(read("$.o['x','y']")).toEqual({ found: true, value: [1, 2] });
    expect(read('$.o.*')).toEqual({ found: true, value: [1, 2] });
    expect(read('$.missing[*]')).toEqual({ found: true, value: [] });
  });

  it('says where a definite path stops', () => {
    expect(read('$.o.z.w')).toEqual({ found: false, missing: "$['o']['z']" });
    expect(read('$.nums[9]')).toEqual({ found: false, missing: "$['nums'][9]" });
  });

  it('writes a ResultPath into a copy, creating objects on the way', () => {
    const input = { a: { b: 1 } };
    expect(writeJsonPath(input, '$.a.c.d', 2)).toEqual({ ok: true, value: { a: { b: 1, c: { d: 2 } } } });
    expect(input).toEqual({ a: { b: 1 } });
    expect(writeJsonPath('text', '$.x', 1)).toEqual({ ok: false });
  });
});
