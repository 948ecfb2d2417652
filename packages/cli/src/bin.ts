#!/usr/bin/env node
import { main } from './cli.js';

const code = await main(process.argv);
process.exitCode = code;
// Clients are closed on every path; should a user's handlers module leave a handle open, still exit.
setTimeout(() => process.exit(code), 1000).unref();
