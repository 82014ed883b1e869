// The floor for a JSON read in Node: node:http answering every request with the same bytes.
//   node bench/servers/raw-json.mjs <file with the body>   → prints `LISTENING <url>`
// The bench fills the file with the exact body mediagate answered, so both send the same bytes.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const body = readFileSync(process.argv[2]);
const server = createServer((req, res) => {
  // Drain a request body, if any, before answering (keeps keep-alive connections healthy).
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
