import { register } from 'node:module';

// Passed to every test process with --import (vitest.config.ts), and so inherited by the worker
// threads the code under test starts: such a thread loads its module natively, outside vitest, so
// a `.js` module that exists only as its `.ts` source is compiled by ts-hooks-load.mjs.
register('./ts-hooks-load.mjs', import.meta.url);
