// Preload (`node --import`) for servers the bench cannot tell where to listen (Portkey's gateway
// takes only --port=N and binds every interface). It rewrites the first listen() of an http
// server to 127.0.0.1 on port 0 and prints the real address as `LISTENING http://127.0.0.1:<port>`,
// the line every bench server prints.
//
// With BENCH_NATIVE_RESPONSE=1 it also puts Node's own Response back on globalThis once the
// server listens. @hono/node-server ≥ 1.14.3 (what npm resolves for Portkey 1.15.2) swaps in a
// "lightweight" Response that keeps an upstream fetch Response's immutable headers, and Portkey's
// streamed answers then fail with `TypeError: immutable` (Portkey-AI/gateway#1389, #1550). The
// bench measures Portkey's streams with this switch and its non-streamed path without it.
import http from 'node:http';

const NativeResponse = globalThis.Response;

const listen = http.Server.prototype.listen;
let done = false;
http.Server.prototype.listen = function patchedListen(...args) {
  if (done) return listen.apply(this, args);
  done = true;
  const cb = args.find((a) => typeof a === 'function');
  this.once('listening', () => {
    if (process.env.BENCH_NATIVE_RESPONSE === '1') Object.defineProperty(globalThis, 'Response', { value: NativeResponse });
    process.stdout.write(`LISTENING http://127.0.0.1:${this.address().port}\n`);
  });
  return listen.call(this, 0, '127.0.0.1', cb);
};
