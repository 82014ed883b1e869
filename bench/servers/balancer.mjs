// A loopback TCP balancer for the scale-out phase: each new client connection goes to the next
// backend in turn and its bytes are piped both ways, untouched (HTTP keep-alive connections stay
// on one backend, like an L4 load balancer). Usage:
//   node bench/servers/balancer.mjs <backend url> <backend url> …   → prints `LISTENING <url>`
import { createServer, connect } from 'node:net';

const backends = process.argv.slice(2).map((u) => new URL(u));
let next = 0;
const server = createServer((client) => {
  const b = backends[next++ % backends.length];
  const upstream = connect({ host: b.hostname, port: Number(b.port), noDelay: true });
  client.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
