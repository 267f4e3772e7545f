// endpoint.test.mjs -- who may use the MCP endpoint and talkback-proxy,
// and what one client can make the gateway hold.
//
//   1. The bearer token: the official MCP client and raw fetch, without,
//      with a wrong and with the right token; a non-loopback bind without
//      a token refuses to start; allowed_hosts off loopback.
//   2. Owners: once a chat's sandbox belongs to a user, a call that names
//      no user (or another user) is refused and changes nothing.
//   3. Header bytes: NUL and other control bytes in any header are refused
//      (raw sockets: fetch will not send them); a foreign Host is refused.
//   4. talkback-proxy forwards only origin-form targets to its upstream: an
//      "@host:port/x" or absolute-form target is refused, and a second
//      listener this test starts sees no connection.
//   5. Limits: 300 idle and slow connections (from other loopback
//      addresses) do not stop a real call, /healthz answers, the slow ones
//      are closed by header_timeout; a client over max_client_connections
//      gets 429; bodies over body_budget get 503.
//
// Needs the built gateway, sandbox manager and proxy, and dockerd (for the
// real calls).  Loopback only: the test clients bind 127.0.0.x source
// addresses to look like different clients.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import {
  Talkback, BIN, BUILD, freePort, containersOf, waitFor, sleep, withLogs, connect, run, runOk, post, joinText, tid,
} from './harness.mjs';

const TOKEN = 'it-endpoint-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const PROXY_BIN = path.join(BUILD, 'talkback-proxy');

// ---- raw HTTP over a socket ----------------------------------------------------------------

/** Send raw bytes, read until the server closes (or timeoutMs): {status, head, body}. */
function rawRequest(port, bytes, { localAddress, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const s = net.connect({ port, host: '127.0.0.1', localAddress }, () => s.write(bytes));
    const t = setTimeout(() => { s.destroy(); finish(); }, timeoutMs);
    function finish() {
      clearTimeout(t);
      const text = Buffer.concat(chunks).toString('latin1');
      const i = text.indexOf('\r\n\r\n');
      const head = i >= 0 ? text.slice(0, i) : text;
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      resolve({ status: m ? Number(m[1]) : 0, head, body: i >= 0 ? text.slice(i + 4) : '' });
    }
    s.on('data', (d) => chunks.push(d));
    s.on('end', finish);
    s.on('error', (e) => (chunks.length ? finish() : reject(e)));
  });
}

/** A POST /mcp as raw bytes; extra is a list of raw header lines (Buffers or strings). */
function rawPost(port, message, extra, { host = '127.0.0.1', auth = true } = {}) {
  const body = Buffer.from(JSON.stringify(message));
  const lines = [
    'POST /mcp HTTP/1.1', `Host: ${host}`, 'Content-Type: application/json',
    'Accept: application/json', `Content-Length: ${body.length}`, 'Connection: close',
    ...(auth ? [`Authorization: Bearer ${TOKEN}`] : []),
  ].map((l) => Buffer.from(l, 'latin1'));
  const all = [...lines, ...extra.map((l) => (Buffer.isBuffer(l) ? l : Buffer.from(l, 'latin1')))];
  const head = Buffer.concat(all.flatMap((l) => [l, Buffer.from('\r\n')]));
  return Buffer.concat([head, Buffer.from('\r\n'), body]);
}

const ping = () => ({ jsonrpc: '2.0', id: tid(), method: 'ping' });
const runMsg = (command) => ({ jsonrpc: '2.0', id: tid(), method: 'tools/call', params: { name: 'run', arguments: { command } } });

/** A raw tools/call run with the token: the result text. */
async function runAs(tb, conv, user, command) {
  const headers = { ...AUTH, 'X-Conversation-Id': conv };
  if (user !== undefined) headers['X-User-Id'] = user;
  const r = await post(tb, runMsg(command), { headers, accept: 'application/json' });
  assert.equal(r.status, 200, r.body);
  return { text: joinText(r.json.result), isError: r.json.result.isError === true };
}

/** A socket from localAddress that is open (connected) and left as it is. */
function openSocket(port, localAddress) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(s));
    s.on('error', reject);
  });
}

/** Whether the server has closed s (or closes it within ms). */
function closedBy(s, ms) {
  if (s.destroyed || s.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    const done = () => { clearTimeout(t); resolve(true); };
    s.once('end', done);
    s.once('close', done);
    s.once('error', done);
  });
}

// ---- 1-3: token, owners, header bytes ------------------------------------------------------

const tb = new Talkback({ name: 'endpoint', gatewayEnv: { TALKBACK_AUTH_TOKEN: TOKEN } });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

test('endpoint: the official MCP client needs the bearer token', withLogs(tb, async () => {
  const conv = tb.chat('token');
  await assert.rejects(connect(tb, { conv, user: 'alice' }), /401|Unauthorized/);
  await assert.rejects(connect(tb, { conv, user: 'alice', headers: { Authorization: 'Bearer wrong-token-0123456789' } }),
    /401|Unauthorized/);
  const client = await connect(tb, { conv, user: 'alice', headers: AUTH });
  try {
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'run'));
    assert.equal((await runOk(client, 'echo token-ok')).trim(), 'token-ok');
  } finally {
    await client.close();
  }
}));

test('endpoint: raw requests without or with a wrong token get 401 and a JSON-RPC error', withLogs(tb, async () => {
  for (const headers of [{}, { Authorization: `Bearer ${TOKEN}x` }, { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    { Authorization: TOKEN }, { Authorization: `Basic ${TOKEN}` }]) {
    const r = await post(tb, ping(), { headers });
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    assert.equal(r.json.jsonrpc, '2.0');
    assert.equal(r.json.id, null);
    assert.match(r.json.error.message, /bearer token/);
  }
  const ok = await post(tb, ping(), { headers: AUTH });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json.result, {});
  // /healthz stays open: compose and systemd probe it without the token.
  assert.equal(await tb.health(), 200);
}));

test('endpoint: a non-loopback bind without a token refuses to start', withLogs(tb, async () => {
  const port = await freePort();
  const log = path.join(tb.dir, 'nobind.log');
  const out = fs.openSync(log, 'a');
  const env = tb.env({ TALKBACK_LISTEN: `0.0.0.0:${port}`, TALKBACK_HUB_ENDPOINT: `ipc://${tb.dir}/nobind.ipc` });
  const child = spawn(BIN.gateway, [], { env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const r = await new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  assert.notEqual(r, 0);
  assert.match(fs.readFileSync(log, 'utf8'), /non-loopback address, so it needs a bearer token: set auth_token or auth_token_file/);
}));

test('endpoint: off loopback, Host must be an IP or in allowed_hosts', withLogs(tb, async () => {
  const port = await freePort();
  const log = path.join(tb.dir, 'hosts.log');
  const out = fs.openSync(log, 'a');
  const env = tb.env({
    TALKBACK_LISTEN: `0.0.0.0:${port}`, TALKBACK_HUB_ENDPOINT: `ipc://${tb.dir}/hosts.ipc`,
    TALKBACK_AUTH_TOKEN: TOKEN, TALKBACK_ALLOWED_HOSTS: 'talkback',
  });
  const child = spawn(BIN.gateway, [], { env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  try {
    await waitFor(async () => (await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n').catch(() => ({ status: 0 }))).status !== 0,
      { what: 'the second gateway' });
    const status = async (host) => (await rawRequest(port, rawPost(port, ping(), [], { host }))).status;
    assert.equal(await status('talkback:8080'), 200);
    assert.equal(await status('127.0.0.1'), 200);
    assert.equal(await status('evil.example.com'), 403);
    assert.equal(await status('talkback.evil.example.com:8080'), 403);
  } finally {
    child.kill('SIGTERM');
  }
}));

test('endpoint: an owned sandbox refuses a call that names no user', withLogs(tb, async () => {
  const conv = tb.chat('owner');
  const mine = await runAs(tb, conv, 'alice', 'echo secret > /tmp/owned && echo made');
  assert.equal(mine.isError, false, mine.text);
  for (const user of [undefined, '', 'bob']) {
    const r = await runAs(tb, conv, user, 'cat /tmp/owned');
    assert.equal(r.isError, true, `user ${JSON.stringify(user)}: ${r.text}`);
    assert.match(r.text, /belongs to another user/);
    assert.doesNotMatch(r.text, /secret/);
    const reset = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/call', params: { name: 'reset', arguments: {} } },
      { headers: { ...AUTH, 'X-Conversation-Id': conv, ...(user === undefined ? {} : { 'X-User-Id': user }) }, accept: 'application/json' });
    assert.match(joinText(reset.json.result), /belongs to another user/);
  }
  const still = await runAs(tb, conv, 'alice', 'cat /tmp/owned');
  assert.match(still.text, /secret/);
  // A chat made without a user stays open to calls without one.
  const open = tb.chat('open');
  assert.equal((await runAs(tb, open, undefined, 'true')).isError, false);
  assert.equal((await runAs(tb, open, undefined, 'echo again')).isError, false);
}));

test('endpoint: NUL and other control bytes in headers are refused', withLogs(tb, async () => {
  const conv = tb.chat('nul');
  const cases = [
    [Buffer.concat([Buffer.from(`X-Conversation-Id: ${conv}`), Buffer.from([0]), Buffer.from('other')])],
    [`X-Conversation-Id: ${conv}`, Buffer.concat([Buffer.from('X-User-Id: alice'), Buffer.from([0]), Buffer.from('bob')])],
    [Buffer.concat([Buffer.from(`X-Conversation-Id: ${conv}`), Buffer.from([0])])],
    [`X-Conversation-Id: ${conv}`, Buffer.concat([Buffer.from('X-Other: a'), Buffer.from([1]), Buffer.from('b')])],
    [Buffer.concat([Buffer.from(`X-Conversation-Id: ${conv}`), Buffer.from([0x7f])])],
  ];
  for (const extra of cases) {
    const r = await rawRequest(tb.port, rawPost(tb.port, runMsg('echo ran'), extra));
    assert.equal(r.status, 400, `${JSON.stringify(extra.map(String))}: ${r.head}`);
    // libmicrohttpd 1.0 and later refuse a NUL themselves, with their own page.
    if (!/invalid character/.test(r.body)) assert.match(JSON.parse(r.body).error.message, /NUL or another control byte/);
  }
  // The same request without the bad byte runs: the refusals were the bytes.
  const ok = await rawRequest(tb.port, rawPost(tb.port, runMsg('echo ran'), [`X-Conversation-Id: ${conv}`]));
  assert.equal(ok.status, 200, ok.head);
  assert.match(ok.body, /ran/);
  // A chunked body: the same rule, with the chunk-size line after the headers.
  const chunked = (extra) => Buffer.concat([
    Buffer.from('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n' +
      `Transfer-Encoding: chunked\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\n`),
    extra, Buffer.from('\r\n\r\n'),
    (() => { const b = JSON.stringify(runMsg('echo chunked')); return Buffer.from(`${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`); })(),
  ]);
  const cgood = await rawRequest(tb.port, chunked(Buffer.from(`X-Conversation-Id: ${conv}`)));
  assert.equal(cgood.status, 200, cgood.head);
  assert.match(cgood.body, /chunked/);
  const cbad = await rawRequest(tb.port, chunked(Buffer.concat([Buffer.from(`X-Conversation-Id: ${conv}`),
    Buffer.from([0, 0, 0, 0]), Buffer.from('1a')])));
  assert.equal(cbad.status, 400, cbad.head);
  if (!/invalid character/.test(cbad.body)) assert.match(JSON.parse(cbad.body).error.message, /NUL or another control byte/);
  // A refused id never got a sandbox under its cut-off form.
  const cut = tb.chat('cut');
  const r = await rawRequest(tb.port, rawPost(tb.port, runMsg('echo ran'),
    [Buffer.concat([Buffer.from(`X-Conversation-Id: ${cut}`), Buffer.from([0]), Buffer.from('x')])]));
  assert.equal(r.status, 400);
  assert.deepEqual(await containersOf(cut), []);
}));

test('endpoint: a foreign Host is refused on loopback', withLogs(tb, async () => {
  const bad = await rawRequest(tb.port, rawPost(tb.port, ping(), [], { host: 'evil.example.com' }));
  assert.equal(bad.status, 403);
  assert.match(JSON.parse(bad.body).error.message, /Host not allowed/);
  const good = await rawRequest(tb.port, rawPost(tb.port, ping(), [], { host: `localhost:${tb.port}` }));
  assert.equal(good.status, 200);
}));

// ---- 4: talkback-proxy is no open proxy ------------------------------------------------------

/** A listener that records every connection and request it gets. */
async function recorder() {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.setHeader('Content-Type', 'application/json');
    res.end('{"object":"list","data":[]}');
  });
  let connections = 0;
  server.on('connection', () => { connections++; });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port, seen, connections: () => connections,
    close: () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); },
  };
}

test('proxy: only origin-form targets reach the upstream; nothing reaches another listener', async () => {
  const upstream = await recorder();
  const other = await recorder();
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talkback-endpoint-proxy-'));
  const conf = path.join(dir, 'empty.conf');
  fs.writeFileSync(conf, '');
  const log = path.join(dir, 'proxy.log');
  const out = fs.openSync(log, 'a');
  const child = spawn(PROXY_BIN, [], {
    env: { ...process.env, TALKBACK_CONFIG: conf, TALKBACK_PROXY_LISTEN: `127.0.0.1:${port}`,
      TALKBACK_PROXY_UPSTREAM: `http://127.0.0.1:${upstream.port}`, TALKBACK_LOG_LEVEL: 'debug' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  try {
    await waitFor(() => openSocket(port).then((s) => { s.destroy(); return true; }).catch(() => false),
      { what: 'talkback-proxy to listen' });
    const o = `127.0.0.1:${other.port}`;
    const targets = [`@${o}/x`, `http://${o}/x`, `${o}/x`, o, '*', '/v1/../x'];
    for (const target of targets) {
      const r = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-secret\r\nConnection: close\r\n\r\n`);
      assert.equal(r.status, 400, `${target}: ${r.head}\n${fs.readFileSync(log, 'utf8')}`);
      assert.match(r.body, /talkback-proxy: the request-target/);
    }
    const connect = await rawRequest(port, `CONNECT ${o} HTTP/1.1\r\nHost: ${o}\r\nConnection: close\r\n\r\n`);
    assert.ok(connect.status >= 400 && connect.status < 500, connect.head);
    assert.equal(other.connections(), 0, `the other listener saw: ${other.seen.join(', ')}`);
    assert.deepEqual(upstream.seen, []);
    // An origin-form request does go through (so the refusals above mean something).
    const ok = await rawRequest(port, 'GET /v1/models?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.equal(ok.status, 200, ok.head);
    assert.deepEqual(upstream.seen, ['GET /v1/models?x=1']);
    assert.equal(other.connections(), 0);
  } finally {
    child.kill('SIGTERM');
    await upstream.close();
    await other.close();
  }
});

// ---- 5: limits -------------------------------------------------------------------------------

test('limits: 300 idle and slow connections do not stop a real call', { timeout: 240000 }, async () => {
  const lt = new Talkback({
    name: 'limits',
    gatewayEnv: {
      TALKBACK_AUTH_TOKEN: TOKEN, TALKBACK_MAX_CLIENT_CONNECTIONS: '40', TALKBACK_HEADER_TIMEOUT: '3s',
      TALKBACK_BODY_TIMEOUT: '20s', TALKBACK_BODY_BUDGET: '256K', TALKBACK_MAX_BODY: '1M',
    },
  });
  const sockets = [];
  const timers = [];
  try {
    await lt.start();
    // 10 other clients (127.0.0.2-11), 30 connections each: half idle, half
    // dribbling their headers a byte a second.
    for (let i = 0; i < 300; i++) {
      const s = await openSocket(lt.port, `127.0.0.${2 + (i % 10)}`);
      s.on('error', () => {});
      sockets.push(s);
      if (i % 2) {
        const text = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ' + 'x'.repeat(200);
        let k = 0;
        timers.push(setInterval(() => { if (!s.destroyed && k < text.length) s.write(text[k++]); }, 1000));
      }
    }
    await withLogs(lt, async () => {
      assert.equal(await lt.health(), 200);
      const client = await connect(lt, { conv: lt.chat('busy'), user: 'u', headers: AUTH });
      try {
        assert.equal((await runOk(client, 'echo through')).trim(), 'through');
      } finally {
        await client.close();
      }
      // header_timeout closes every one of them (idle or dribbling).
      const closed = await Promise.all(sockets.map((s) => closedBy(s, 60000)));
      assert.equal(closed.filter(Boolean).length, 300);
    })();
  } finally {
    timers.forEach(clearInterval);
    sockets.forEach((s) => s.destroy());
  }

  try {
    await withLogs(lt, async () => {
      // One client past max_client_connections (40): its request gets 429.
      const held = [];
      for (let i = 0; i < 40; i++) held.push(await openSocket(lt.port, '127.0.0.20'));
      held.forEach((s) => s.on('error', () => {}));
      const over = await rawRequest(lt.port, rawPost(lt.port, ping(), []), { localAddress: '127.0.0.20' });
      assert.equal(over.status, 429, over.head);
      assert.match(JSON.parse(over.body).error.message, /max_client_connections/);
      // /healthz still answers that client, and another client is served.
      const hz = await rawRequest(lt.port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
        { localAddress: '127.0.0.20' });
      assert.equal(hz.status, 200);
      const other = await rawRequest(lt.port, rawPost(lt.port, ping(), []), { localAddress: '127.0.0.21' });
      assert.equal(other.status, 200);
      held.forEach((s) => s.destroy());

      // Bodies in flight past body_budget (256K): 503, and fine again once freed.
      // A holder sends 150 000 of its 160 000 body bytes and waits.  A
      // holder that lost the race for the budget to one of the requests
      // below (it got its own 503) holds nothing: open another.
      const big = Buffer.alloc(150000, 0x20);
      const openHolder = async () => {
        const s = await openSocket(lt.port, '127.0.0.22');
        s.on('error', () => {});
        s.answered = false;
        s.on('data', () => { s.answered = true; });
        s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n` +
          `Authorization: Bearer ${TOKEN}\r\nContent-Length: 160000\r\n\r\n`);
        s.write(big);
        await new Promise((r) => setTimeout(r, 300));
        return s;
      };
      let holder = await openHolder();
      // A body past the first 64 KiB (which never count) needs the budget.
      const bigPing = () => ({ ...ping(), params: { pad: 'p'.repeat(200000) } });
      const refused = await waitFor(async () => {
        if (holder.answered || holder.destroyed) {
          holder.destroy();
          holder = await openHolder();
        }
        const r = await rawRequest(lt.port, rawPost(lt.port, bigPing(), []), { localAddress: '127.0.0.23' });
        return r.status === 503 ? r : null;
      }, { timeoutMs: 15000, intervalMs: 200, what: 'a 503 while a body holds the budget' });
      assert.match(JSON.parse(refused.body).error.message, /body_budget/);
      // Small requests do not wait for the budget.
      const small = await rawRequest(lt.port, rawPost(lt.port, ping(), []), { localAddress: '127.0.0.23' });
      assert.equal(small.status, 200, small.head);
      holder.destroy();
      await waitFor(async () => (await rawRequest(lt.port, rawPost(lt.port, bigPing(), []))).status === 200,
        { timeoutMs: 15000, what: 'the budget to come back' });
    })();
  } finally {
    await lt.cleanup();
  }
});
