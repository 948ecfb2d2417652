import { createHash } from 'node:crypto';

/** A Lua script with its SHA1, run by EVALSHA and loaded by EVAL when the server answers NOSCRIPT. */
export interface Script {
  name: string;
  lua: string;
  sha: string;
}

/** A script named `name` (for inspection) with the SHA1 EVALSHA needs. */
export function script(name: string, lua: string): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}
