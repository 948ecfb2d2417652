// @ts-check
// What a soak leaves behind, taken away however it ends: at its end, on an error nobody caught, on
// SIGINT or SIGTERM, the worker processes still running are stopped and the soak's own servers
// taken down (stores.mjs dropOwnServers), then the process exits.
import { stopFleets } from './fleet.mjs';
import { dropOwnServers } from './stores.mjs';

/**
 * Installs the handlers (error, SIGINT, SIGTERM) and returns the soak's way out: `exit(code)` tears
 * down, then exits with `code`. A second signal while tearing down exits at once.
 * @returns {(code: number) => Promise<never>}
 */
export function tearDownOnExit() {
  let leaving = false;
  /** @param {number} code @returns {Promise<never>} */
  const exit = async (code) => {
    if (leaving) process.exit(code);
    leaving = true;
    await stopFleets().catch((e) => console.error(`soak: stopping the worker processes failed: ${e}`));
    await dropOwnServers((line) => console.log(line));
    process.exit(code);
  };
  /** @param {NodeJS.Signals} signal @param {number} code */
  const on = (signal, code) =>
    process.on(signal, () => {
      console.log(`soak: ${signal}, stopping the workers and taking the soak's own servers down`);
      void exit(code);
    });
  on('SIGINT', 130);
  on('SIGTERM', 143);
  // A rejected top-level await of run.mjs arrives here too (origin "unhandledRejection").
  process.on('uncaughtException', (e) => {
    console.error(e);
    void exit(1);
  });
  return exit;
}
