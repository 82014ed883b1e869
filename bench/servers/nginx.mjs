// nginx as a one-worker reverse proxy in front of the upstream, keep-alive connections to it:
// what a mature C proxy costs for the same pass-through. Debian's nginx-light, installed with
// apt-get when no nginx is on the machine. Usage:
//   node bench/servers/nginx.mjs <upstream origin> <work dir>   → prints `LISTENING <url> <pid,pid>`
// (the master's and the worker's pids, for the bench's CPU time per request).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

const upstream = new URL(process.argv[2]);
const dir = process.argv[3];
const NGINX = '/usr/sbin/nginx';

function ensureNginx() {
  if (existsSync(NGINX)) return;
  process.stderr.write('nginx: not installed; apt-get install nginx-light\n');
  // RUNLEVEL=1: the package's init script does not start a system nginx on port 80.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'nginx-light'], { env, stdio: ['ignore', 'ignore', 'inherit'] }).status;
  if (install() !== 0) {
    spawnSync('apt-get', ['update'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (install() !== 0 || !existsSync(NGINX)) throw new Error('nginx-light could not be installed');
  }
}

/** A port free right now (nginx cannot listen on port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port }, () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

ensureNginx();
mkdirSync(dir, { recursive: true });
const port = await freePort();
const conf = join(dir, 'nginx.conf');
writeFileSync(
  conf,
  `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  upstream provider {
    server ${upstream.hostname}:${upstream.port};
    keepalive 1024;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://provider;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # Streams go through as they arrive.
      proxy_buffering off;
    }
  }
}
`,
);
// setpriv --pdeathsig: nginx stops with this process even when the bench kills it outright.
const nginx = spawn('setpriv', ['--pdeathsig', 'TERM', '--', NGINX, '-e', join(dir, 'error.log'), '-p', dir, '-c', conf], { stdio: ['ignore', 'inherit', 'inherit'] });
nginx.once('exit', (code, signal) => {
  process.stderr.write(`nginx exited (${code ?? signal})\n`);
  process.exit(1);
});
const until = Date.now() + 20_000;
while (!(await accepts(port))) {
  if (Date.now() > until) throw new Error(`nginx did not listen on ${port}: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
  await new Promise((r) => setTimeout(r, 50));
}
const workers = readFileSync(`/proc/${nginx.pid}/task/${nginx.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
process.stdout.write(`LISTENING http://127.0.0.1:${port} ${[nginx.pid, ...workers].join(',')}\n`);
process.on('SIGTERM', () => {
  nginx.removeAllListeners('exit');
  nginx.once('exit', () => process.exit(0));
  nginx.kill('SIGTERM');
});
