// socketproxy.test.mjs -- the Docker socket proxy of deploy/haproxy.cfg, run
// for real: Debian's haproxy with that file, listening on a free loopback
// port, forwarding to this machine's /var/run/docker.sock.
//
// It checks that:
//   - every call talkback makes passes, bare and with a version prefix: ping,
//     version, container list, create, start, exec (output-only, and with
//     stdin over a 101 upgrade and a half-close, which needs HAProxy's
//     tunnel), exec inspect, archive PUT/HEAD/GET, stop, kill, wait, remove,
//     and the sandbox network's inspect;
//   - everything else is refused with 403 and a JSON message, before it
//     reaches Docker: images, builds, volumes, other networks, swarm,
//     plugins, /info, /events, /system/df, prune, update, export, escaped
//     and dot-segment paths;
//   - talkback works through it: talkback-sandbox with
//     TALKBACK_DOCKER_HOST=tcp://127.0.0.1:PORT and talkback-gateway on a
//     hub of its own answer tools/call run and write_file, and run_code
//     with an input on stdin (when talkback-judge is built).
//
// Exec with stdin needs an HAProxy that passes the Upgrade of a request with
// a body: 3.1 and later, and 3.0 from the backported fix (Debian 13's 3.0.11
// does).  2.4 to 3.0 before it drop the header (haproxy/haproxy issue
// #2684), and Docker's exec start always has a body, so Docker answers 200
// instead of 101 and stdin never arrives.  When the haproxy under test is
// older than 3.1 and does that (Debian 12's 2.6.12 does), those two tests
// are skipped and say why; 3.1 and later must pass them.  TALKBACK_HAPROXY
// names another haproxy binary to test with.
//
// Only plain fetch, net and child_process: no packages.  Containers are
// labelled talkback.conversation=sp-<rand>...; every one of them is removed
// at the end.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { waitFor as pollUntil, freePort, toolCallHttp } from './harness.mjs';

const execFileP = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = process.env.TALKBACK_BUILD_DIR || path.join(ROOT, 'build');
const CFG = path.join(ROOT, 'deploy', 'haproxy.cfg');
const IMAGE = 'talkback-sandbox:latest';
const HAPROXY = process.env.TALKBACK_HAPROXY || 'haproxy';

const tag = crypto.randomBytes(4).toString('hex');
const prefix = `sp-${tag}`;
const dir = fs.mkdtempSync(`/tmp/talkback-sp-${tag}-`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const OLD_HAPROXY = () => `haproxy ${haproxyVersion} drops the Upgrade of a request with a body ` +
  '(haproxy/haproxy issue #2684; fixed in 3.1 and later 3.0 releases): exec with stdin cannot pass it; ' +
  'deploy/compose.yaml uses haproxy:3.2';

let proxyPort;
let proxyBase;
let proxy;
let haproxyVersion = '';
let newHaproxy = false; // HAProxy >= 3.1: must pass exec with stdin
const procs = [];
let failed = false;

/** Start a program with its output appended to DIR/NAME.log. */
function startProc(name, bin, args, env) {
  const log = path.join(dir, `${name}.log`);
  const fd = fs.openSync(log, 'a');
  const child = spawn(bin, args, { env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const p = { name, child, log, exited: new Promise((r) => child.on('exit', (code, sig) => r({ code, sig }))) };
  procs.push(p);
  return p;
}

async function stopProc(p) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(t);
}

function logTail() {
  let s = '';
  for (const p of procs) {
    if (!fs.existsSync(p.log)) continue;
    s += `\n---- ${p.log} ----\n${fs.readFileSync(p.log, 'utf8').split('\n').slice(-40).join('\n')}`;
  }
  return s;
}

/** A test body whose failure message carries the logs. */
const withLogs = (fn) => async (t) => {
  try {
    await fn(t);
  } catch (e) {
    failed = true;
    try { e.message = `${e.message}\n${logTail()}`; } catch { /* read-only */ }
    throw e;
  }
};

/** The harness's poller, with this file's (fn, what, timeoutMs) order. */
const waitFor = (fn, what, timeoutMs = 15000) => pollUntil(fn, { what, timeoutMs });

/** One Engine API call through the proxy: {status, headers, text, json}. */
async function api(method, p, { body, json, headers = {} } = {}) {
  const h = { ...headers };
  let b = body;
  if (json !== undefined) {
    h['Content-Type'] = 'application/json';
    b = JSON.stringify(json);
  }
  const r = await fetch(`${proxyBase}${p}`, { method, headers: h, body: b, signal: AbortSignal.timeout(60000) });
  const buf = Buffer.from(await r.arrayBuffer());
  let parsed;
  try { parsed = JSON.parse(buf.toString('utf8')); } catch { /* not JSON */ }
  return { status: r.status, headers: r.headers, buf, text: buf.toString('utf8'), json: parsed };
}

/** Docker's 8-byte-header stream: {stdout, stderr} as strings. */
function demux(buf) {
  const out = { stdout: '', stderr: '' };
  let i = 0;
  while (i + 8 <= buf.length) {
    const stream = buf[i];
    const size = buf.readUInt32BE(i + 4);
    const payload = buf.subarray(i + 8, i + 8 + size).toString('utf8');
    if (stream === 2) out.stderr += payload; else out.stdout += payload;
    i += 8 + size;
  }
  return out;
}

/** A ustar archive of one regular file. */
function tarOne(name, content) {
  const data = Buffer.from(content);
  const h = Buffer.alloc(512, 0);
  const put = (s, off, len) => h.write(s, off, len, 'ascii');
  put(name, 0, 100);
  put('0000644\0', 100, 8);
  put('0000000\0', 108, 8);
  put('0000000\0', 116, 8);
  put(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 12);
  put(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 12);
  put('        ', 148, 8);
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const byte of h) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512, 0);
  return Buffer.concat([h, data, pad, Buffer.alloc(1024, 0)]);
}

/** Exec with stdin over a raw socket, as talkback-sandbox does it:
 *  Connection: Upgrade, read the head, write stdin, half-close, read the
 *  stream until the daemon closes.  Resolves {status, stdout, stderr}. */
function execWithStdin(execId, input, version) {
  return new Promise((resolve, reject) => {
    const body = '{"Detach":false,"Tty":false}';
    const sock = net.connect(proxyPort, '127.0.0.1');
    const chunks = [];
    let head = null;
    let rest = Buffer.alloc(0);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('exec with stdin timed out')); }, 30000);
    sock.on('connect', () => {
      sock.write(`POST ${version}/exec/${execId}/start HTTP/1.1\r\nHost: docker\r\n` +
        'Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}`);
    });
    sock.on('data', (d) => {
      if (head === null) {
        rest = Buffer.concat([rest, d]);
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = rest.subarray(0, end).toString('latin1');
        chunks.push(rest.subarray(end + 4));
        if (!/^HTTP\/1\.1 101 /.test(head)) {
          sock.destroy(); // not upgraded: stdin would never arrive
          return;
        }
        sock.write(input, () => sock.end()); // stdin, then the half-close
      } else {
        chunks.push(d);
      }
    });
    sock.on('error', (e) => { clearTimeout(timer); reject(e); });
    sock.on('close', () => {
      clearTimeout(timer);
      const status = head ? Number(head.split(' ')[1]) : 0;
      resolve({ status, head, ...demux(Buffer.concat(chunks)) });
    });
  });
}

async function docker(...args) {
  const { stdout } = await execFileP('docker', args, { maxBuffer: 16 << 20 });
  return stdout;
}

async function removeOurContainers() {
  const out = await docker('ps', '-a', '--no-trunc', '--filter', 'label=talkback.conversation',
    '--format', '{{.ID}} {{.Label "talkback.conversation"}}').catch(() => '');
  const ids = out.split('\n').filter(Boolean).map((l) => l.split(' ')).filter(([, c]) => c && c.startsWith(prefix))
    .map(([id]) => id);
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => {});
}

before(async () => {
  const { stdout: v } = await execFileP(HAPROXY, ['-v']).catch(() => {
    throw new Error(`${HAPROXY} is not installed (Debian package haproxy; deploy/setup installs it)`);
  });
  const m = /version (\d+)\.(\d+)[.\d]*/i.exec(v);
  haproxyVersion = m ? m[0].replace(/^version /i, '') : 'unknown';
  newHaproxy = !!m && (Number(m[1]) > 3 || (Number(m[1]) === 3 && Number(m[2]) >= 1));
  await docker('image', 'inspect', IMAGE).catch(() => {
    throw new Error(`${IMAGE} is missing (deploy/setup builds it)`);
  });
  proxyPort = await freePort();
  proxyBase = `http://127.0.0.1:${proxyPort}`;
  proxy = startProc('haproxy', HAPROXY, ['-db', '-f', CFG],
    { ...process.env, TALKBACK_PROXY_BIND: `127.0.0.1:${proxyPort}` });
  await waitFor(async () => {
    if (proxy.child.exitCode !== null) throw new Error(`haproxy exited ${proxy.child.exitCode}${logTail()}`);
    return (await api('GET', '/_ping')).status === 200;
  }, 'haproxy to answer /_ping');
});

after(async () => {
  for (const p of [...procs].reverse()) await stopProc(p);
  await removeOurContainers();
  if (failed) process.stderr.write(`socket proxy test logs kept in ${dir}\n`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------

test('allowed: ping and version, bare and with a version prefix', withLogs(async () => {
  for (const p of ['/_ping', '/v1.41/_ping']) {
    const r = await api('GET', p);
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    assert.equal(r.text, 'OK');
    assert.ok(r.headers.get('api-version'), `${p} carries Api-Version`);
  }
  assert.equal((await api('HEAD', '/_ping')).status, 200);
  for (const p of ['/version', '/v1.41/version']) {
    const r = await api('GET', p);
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    assert.ok(r.json.ApiVersion, r.text);
  }
}));

test('allowed: container list and the sandbox network inspect', withLogs(async () => {
  const filters = encodeURIComponent(JSON.stringify({ label: ['talkback.conversation'] }));
  for (const v of ['', '/v1.41']) {
    const r = await api('GET', `${v}/containers/json?all=1&filters=${filters}`);
    assert.equal(r.status, 200, r.text);
    assert.ok(Array.isArray(r.json), r.text);
  }
  const n = await api('GET', '/v1.41/networks/talkback-sandboxes');
  assert.ok(n.status === 200 || n.status === 404, `network inspect passes the proxy: ${n.status} ${n.text}`);
}));

test('allowed: create, start, exec, exec inspect, archive, stop, kill, wait, remove', withLogs(async () => {
  const v = '/v1.41';
  const name = `talkback-${prefix}-raw`;
  const c = await api('POST', `${v}/containers/create?name=${name}`, {
    json: {
      Image: IMAGE, Cmd: ['sleep', 'infinity'], WorkingDir: '/work',
      Labels: { 'talkback.conversation': `${prefix}-raw` },
      HostConfig: { Init: true, Memory: 256 << 20, NetworkMode: 'none' },
    },
  });
  assert.equal(c.status, 201, c.text);
  const id = c.json.Id;

  assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
  // Without a version prefix, and by name.
  const ins = await api('GET', `/containers/${name}/json`);
  assert.equal(ins.status, 200, ins.text);
  assert.equal(ins.json.State.Running, true);

  // Exec without stdin: Docker answers 200 and streams until it closes.
  const e1 = await api('POST', `${v}/containers/${id}/exec`, {
    json: { AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['sh', '-c', 'echo out; echo err >&2; exit 3'] },
  });
  assert.equal(e1.status, 201, e1.text);
  const s1 = await api('POST', `${v}/exec/${e1.json.Id}/start`, { json: { Detach: false, Tty: false } });
  assert.equal(s1.status, 200, s1.text);
  const o1 = demux(s1.buf);
  assert.equal(o1.stdout, 'out\n');
  assert.equal(o1.stderr, 'err\n');
  const i1 = await waitFor(async () => {
    const r = await api('GET', `${v}/exec/${e1.json.Id}/json`);
    return r.json && r.json.ExitCode !== null ? r : null;
  }, 'the exec exit code');
  assert.equal(i1.json.ExitCode, 3);

  // Archive: PUT a file, HEAD its stat, GET it back.
  const put = await api('PUT', `${v}/containers/${id}/archive?path=${encodeURIComponent('/work')}`, {
    body: tarOne('proxy.txt', 'via haproxy\n'), headers: { 'Content-Type': 'application/x-tar' },
  });
  assert.equal(put.status, 200, put.text);
  const head = await api('HEAD', `${v}/containers/${id}/archive?path=${encodeURIComponent('/work/proxy.txt')}`);
  assert.equal(head.status, 200);
  const stat = JSON.parse(Buffer.from(head.headers.get('x-docker-container-path-stat'), 'base64').toString());
  assert.equal(stat.size, 12);
  const get = await api('GET', `${v}/containers/${id}/archive?path=${encodeURIComponent('/work/proxy.txt')}`);
  assert.equal(get.status, 200);
  assert.ok(get.buf.includes(Buffer.from('via haproxy\n')), 'the tar holds the file');

  // Stop, start again, kill, wait, remove.
  assert.equal((await api('POST', `${v}/containers/${id}/stop?t=1`)).status, 204);
  assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
  assert.equal((await api('POST', `${v}/containers/${id}/kill`)).status, 204);
  const w = await api('POST', `${v}/containers/${id}/wait`);
  assert.equal(w.status, 200, w.text);
  assert.equal(typeof w.json.StatusCode, 'number');
  assert.equal((await api('DELETE', `${v}/containers/${id}?force=1&v=1`)).status, 204);
  assert.equal((await api('GET', `${v}/containers/${id}/json`)).status, 404);
}));

/** An exec with stdin through the proxy, once: {status, head, stdout}. */
let stdinProbe;
function stdinThroughProxy() {
  stdinProbe ??= (async () => {
    const v = '/v1.41';
    const c = await api('POST', `${v}/containers/create?name=talkback-${prefix}-stdin`, {
      json: {
        Image: IMAGE, Cmd: ['sleep', 'infinity'], Labels: { 'talkback.conversation': `${prefix}-stdin` },
        HostConfig: { Init: true, NetworkMode: 'none' },
      },
    });
    assert.equal(c.status, 201, c.text);
    const id = c.json.Id;
    try {
      assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
      const e = await api('POST', `${v}/containers/${id}/exec`, {
        json: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['sh', '-c', 'tr a-z A-Z; echo eof'] },
      });
      assert.equal(e.status, 201, e.text);
      return await execWithStdin(e.json.Id, 'hello through the proxy\n', v);
    } finally {
      await api('DELETE', `${v}/containers/${id}?force=1`);
    }
  })();
  return stdinProbe;
}

/** Whether this haproxy is an old one known to drop the upgrade (skip then). */
async function oldHaproxyDropsUpgrade() {
  const s = await stdinThroughProxy();
  return s.status === 200 && !newHaproxy;
}

test('allowed: exec with stdin, through a 101 upgrade and HAProxy\'s tunnel', withLogs(async (t) => {
  if (await oldHaproxyDropsUpgrade()) {
    t.skip(OLD_HAPROXY());
    return;
  }
  // stdin arrives, the half-close ends it (tr sees EOF), the output comes
  // back and the daemon's close ends the stream.
  const s = await stdinThroughProxy();
  assert.equal(s.status, 101, s.head);
  assert.equal(s.stdout, 'HELLO THROUGH THE PROXY\neof\n');
}));

test('refused with 403 and a JSON message: images, builds, volumes, networks, swarm, plugins, system', withLogs(async () => {
  const refused = [
    ['GET', '/images/json'],
    ['GET', '/v1.41/images/json'],
    ['POST', '/build'],
    ['POST', '/v1.41/build?t=x'],
    ['GET', '/volumes'],
    ['POST', '/volumes/create', '{'],
    ['POST', '/v1.41/volumes/create', '{'],
    ['GET', '/info'],
    ['GET', '/v1.41/info'],
    ['GET', '/swarm'],
    ['GET', '/plugins'],
    ['POST', '/images/create'],
    ['POST', '/v1.41/images/create?fromImage=x'],
    ['DELETE', '/networks/xyz'],
    ['DELETE', '/v1.41/networks/talkback-sandboxes'],
    ['GET', '/networks'],
    ['GET', '/v1.41/networks/bridge'],
    ['POST', '/v1.41/networks/create', JSON.stringify({ Name: `${prefix}-net`, Driver: 'bridge' })],
    ['POST', '/v1.41/networks/create', JSON.stringify({ Name: 'talkback-sandboxes', Driver: 'macvlan' })],
    ['POST', '/v1.41/networks/create', '{"Name":"talkback-sandboxes","Driver":"bridge","name":"x"}'],
    ['POST', '/v1.41/networks/bridge/connect', '{'],
    ['GET', '/events'],
    ['GET', '/v1.41/system/df'],
    ['POST', '/v1.41/containers/prune'],
    ['POST', '/v1.41/containers/x/update', '{'],
    ['GET', '/v1.41/containers/x/export'],
    ['GET', '/v1.41/containers/x/logs'],
    ['POST', '/v1.41/containers/x/rename?name=y'],
    ['GET', '/v1.41/secrets'],
    ['POST', '/v1.41/auth', '{'],
    ['POST', '/session'],
    ['GET', '/v1.41/containers/x%2F..%2F..%2Fimages%2Fjson'],
    ['GET', '/v1.41/containers/../images/json'],
    ['GET', '//images/json'],
    ['PATCH', '/v1.41/containers/x/json'],
  ];
  for (const [method, p, body] of refused) {
    const r = await api(method, p, body !== undefined ? { body, headers: { 'Content-Type': 'application/json' } } : {});
    assert.equal(r.status, 403, `${method} ${p} must be refused, got ${r.status} ${r.text}`);
    assert.match(r.json?.message ?? '', /refused by the talkback Docker socket proxy/, `${method} ${p}: ${r.text}`);
  }
  // None of them reached Docker.
  const nets = await docker('network', 'ls', '--format', '{{.Name}}');
  assert.ok(!nets.includes(`${prefix}-net`));
}));

// talkback-gateway, talkback-sandbox (through the proxy) and, when built,
// talkback-judge; started once, by the first test that needs them.
let tbUrl;
let haveJudge = false;
async function startTalkback() {
  if (tbUrl) return tbUrl;
  const httpPort = await freePort();
  const hub = `ipc://${dir}/hub.ipc`;
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_')) delete env[k];
  Object.assign(env, {
    TALKBACK_LISTEN: `127.0.0.1:${httpPort}`,
    TALKBACK_HUB_ENDPOINT: hub,
    TALKBACK_DOCKER_HOST: `tcp://127.0.0.1:${proxyPort}`,
    TALKBACK_LOG_LEVEL: 'debug',
  });
  startProc('gateway', path.join(BUILD, 'talkback-gateway'), [], env);
  startProc('sandbox', path.join(BUILD, 'talkback-sandbox'), [], env);
  const judgeBin = path.join(BUILD, 'talkback-judge');
  haveJudge = fs.existsSync(judgeBin);
  if (haveJudge) startProc('judge', judgeBin, [], env);

  const url = `http://127.0.0.1:${httpPort}`;
  await waitFor(async () => {
    for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}`);
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.status === 200;
  }, 'GET /healthz == 200 (gateway up, sandbox manager connected)', 30000);
  tbUrl = url;
  return url;
}

/** tools/call over plain HTTP (Accept: application/json): {text, isError}. */
async function callTool(name, args) {
  return toolCallHttp(`${await startTalkback()}/mcp`, prefix, name, args);
}

test('talkback works through the proxy: run and write_file', withLogs(async () => {
  const r1 = await callTool('run', { command: 'echo hi' });
  assert.equal(r1.text, '$ echo hi\nhi\n');
  assert.equal(r1.isError, false);

  const w = await callTool('write_file', { path: 'proxied/a.txt', content: 'one\ntwo\n' });
  assert.equal(w.isError, false, w.text);
  const r2 = await callTool('run', { command: 'cat proxied/a.txt' });
  assert.equal(r2.text, '$ cat proxied/a.txt\none\ntwo\n');

  // Every call of talkback-sandbox went through the proxy and none was refused.
  const hlog = fs.readFileSync(proxy.log, 'utf8');
  assert.match(hlog, /POST \/v1\.\d+\/containers\/create\?name=talkback-sp-/);
  const refusedLines = hlog.split('\n').filter((l) => / 403 /.test(l) && /talkback-sp-|\/exec\//.test(l));
  assert.deepEqual(refusedLines, [], 'no call of talkback-sandbox was refused');
}));

test('talkback works through the proxy: run_code with an input on stdin', withLogs(async (t) => {
  await startTalkback();
  if (!haveJudge) {
    t.skip('build/talkback-judge is not built');
    return;
  }
  if (await oldHaproxyDropsUpgrade()) {
    t.skip(OLD_HAPROXY());
    return;
  }
  // The judge runs the program with its input on stdin: the sandbox
  // manager's exec with stdin goes through the proxy's tunnel.
  const rc = await callTool('run_code', {
    language: 'python', code: 'import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n',
    input: '1 2 3\n', expected: '6\n',
  });
  assert.equal(rc.isError, false, rc.text);
  assert.match(rc.text, /PASS/, rc.text);
}));
