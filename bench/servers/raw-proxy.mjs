// The practical limit for a proxy in Node: node:http in front, one pooled undici Agent behind, no
// auth, no parsing; request and response bodies stream straight through. Usage:
//   node bench/servers/raw-proxy.mjs <upstream origin>     → prints `LISTENING <url>`
import { createServer } from 'node:http';
import { Agent } from 'undici';

const upstream = new URL(process.argv[2]).origin;
const agent = new Agent({ keepAliveTimeout: 60_000, connections: null, pipelining: 1 });

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function forwardable(raw) {
  const out = {};
  for (const [k, v] of Object.entries(raw)) if (!HOP.has(k) && v !== undefined) out[k] = v;
  return out;
}

const server = createServer((req, res) => {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  agent
    .stream(
      { origin: upstream, path: req.url, method: req.method, headers: forwardable(req.headers), body: hasBody ? req : null },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, forwardable(headers));
        return res;
      },
    )
    .catch(() => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"upstream failed","type":"upstream_error"}}');
      } else res.destroy();
    });
  // A client that goes away mid-stream ends the upstream request too (undici sees res close).
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
