#!/usr/bin/env node
// gateway-limits.mjs -- what one client can make the gateway hold.
//
//   node tests/bench/gateway-limits.mjs [--bin build/talkback-gateway]
//
// Starts the gateway alone (no workers: only ping is asked, which needs
// none) twice, on free loopback ports, and prints:
//   1. its resident memory idle and with 40 request bodies of 8 MB held
//      open (each sent all but its last 4 KiB, from 127.0.0.2-21), with
//      whether a ping from 127.0.0.1 is answered meanwhile;
//   2. with 4 200 idle sockets from one address (127.0.0.2): how many the
//      gateway closed within 3 s, and whether a ping from 127.0.0.1 is
//      answered (and how fast).
// Figures, not a pass/fail test.  Point --bin at an older build to compare.
// Needs a file-descriptor limit above 4 300 (`ulimit -n 16384`).

import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const i = args.indexOf('--bin');
const BIN = i >= 0 && args[i + 1] ? args[i + 1] : path.join(ROOT, 'build', 'talkback-gateway');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startGateway() {
  const port = await freePort();
  const dir = fs.mkdtempSync('/tmp/talkback-limits-bench-');
  const env = { ...process.env, TALKBACK_LISTEN: `127.0.0.1:${port}`, TALKBACK_HUB_ENDPOINT: `ipc://${dir}/hub.ipc`,
    TALKBACK_CONFIG: '/dev/null', TALKBACK_LOG_LEVEL: 'warn' };
  const gw = spawn('bash', ['-c', `ulimit -n 16384; exec "$0"`, BIN], { env, stdio: 'ignore' });
  for (let k = 0; k < 100 && !(await ping(port, 500).then((s) => s === 200)); k++) await sleep(50);
  return { port, gw, dir };
}

/** A ping on a new connection from 127.0.0.1: the HTTP status, 0 when none came. */
function ping(port, timeoutMs = 10000) {
  return new Promise((resolve) => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const s = net.connect({ port, host: '127.0.0.1' }, () => s.write(
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n' +
      `Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
    let got = '';
    const done = () => { clearTimeout(t); s.destroy(); resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] || 0)); };
    const t = setTimeout(done, timeoutMs);
    s.on('data', (d) => { got += d; });
    s.on('end', done);
    s.on('error', done);
  });
}

const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function heldBodies() {
  const { port, gw, dir } = await startGateway();
  const idle = rssMiB(gw.pid);
  const body = Buffer.alloc(8 * 1024 * 1024 - 4096, 0x20);
  const socks = [];
  for (let k = 0; k < 40; k++) {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${2 + (k % 20)}` });
    s.on('error', () => {});
    s.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n' +
      `Content-Length: ${8 * 1024 * 1024}\r\n\r\n`);
    s.write(body);
    socks.push(s);
  }
  await sleep(5000);
  const held = rssMiB(gw.pid);
  const p = await ping(port);
  console.log(`40 bodies of 8 MB held: RSS ${idle.toFixed(1)} MiB idle -> ${held.toFixed(1)} MiB; a ping meanwhile: ${p}`);
  socks.forEach((s) => s.destroy());
  gw.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}

async function idleSockets() {
  const { port, gw, dir } = await startGateway();
  let closed = 0;
  const socks = [];
  for (let k = 0; k < 4200; k++) {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    s.on('error', () => {});
    s.on('close', () => closed++);
    socks.push(s);
    if (k % 200 === 0) await sleep(20);
  }
  await sleep(3000);
  const t0 = Date.now();
  const p = await ping(port);
  console.log(`4200 idle sockets from 127.0.0.2: ${closed} closed by the gateway within 3 s; ` +
    `a ping from 127.0.0.1: ${p} after ${Date.now() - t0} ms`);
  socks.forEach((s) => s.destroy());
  gw.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}

console.log(`gateway: ${BIN}`);
await heldBodies();
await idleSockets();
