// A local OTLP/HTTP receiver for the traced bench targets: takes every export (traces, metrics;
// protobuf or JSON), reads it whole and answers 200 with an empty body, so the gateway's export
// costs what it would against a collector on the same host. Prints `LISTENING <url>` like every
// bench server.
import http from 'node:http';

let exports = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf') });
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => {
  process.stdout.write(`EXPORTS ${exports}\n`);
  process.exit(0);
});
