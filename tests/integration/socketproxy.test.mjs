// socketproxy.test.mjs -- the Docker guard (deploy/docker-proxy, which
// starts talkback-guard), run for real: listening on a free loopback port,
// forwarding to this machine's /var/run/docker.sock.
//
// It checks that:
//   - the sandbox template itself passes, and every trick on it is refused
//     with 403 before it reaches Docker: Privileged (also spelled
//     "privileged", "Privil\u0065ged", or after a folded "Bindſ"),
//     duplicate keys (the last one, which Docker would use, is the one
//     checked), Binds, Mounts, Volumes, CapAdd, Devices, DeviceRequests,
//     PidMode/NetworkMode/IpcMode/UTSMode/UsernsMode/CgroupnsMode host or
//     container:..., SecurityOpt, Sysctls, another image, runtime or
//     limits, a missing CapDrop, a chunked body, a name not talkback-...;
//   - per-container calls (inspect, start, stop, kill, restart, wait,
//     pause, unpause, attach, archive, exec, exec start/inspect, delete,
//     network connect)
//     to a container that is not talkback's -- by name, by id, by id
//     prefix, and one named talkback-... without the labels -- are refused;
//   - an exec with Privileged is refused; API versions before 1.24 are;
//   - everything talkback calls passes: ping, version, list, create,
//     start, exec (output-only, and with stdin over a 101 upgrade and a
//     half-close), exec inspect, archive PUT/HEAD/GET, stop, restart,
//     pause, unpause, kill, wait, remove, the sandbox network's create (with inter-container
//     traffic off), inspect and connect;
//   - everything else is refused with 403 and a JSON message: images,
//     builds, volumes, other networks, swarm, plugins, /info, /events,
//     /system/df, prune, update, export, escaped and dot-segment paths;
//   - talkback works through it: talkback-sandbox with
//     TALKBACK_DOCKER_HOST=tcp://127.0.0.1:PORT and talkback-gateway on a
//     hub of its own answer run, write_file, reset and run_code with an
//     input on stdin (when talkback-judge is built);
//   - the sandbox manager's storage probe (sandbox/disk.c) passes -- its
//     create, with and without HostConfig.StorageOpt size, its inspect and
//     its removal -- and nothing else reaches a probe container (start,
//     exec, attach, archive, kill are refused), nor is a probe body made
//     under another name; a sandbox with a StorageOpt size of disk_cap is
//     not refused by the guard (this host's ext4 data root makes Docker
//     refuse it with its own error), one with another StorageOpt key, a
//     folded "Size" or a size below disk_cap is;
//   - two sandboxes on the sandbox network cannot reach each other (a
//     listener in one, a connect from the other), while each reaches its
//     own listener, and a sandbox has no NET_RAW or MKNOD.
//
// TALKBACK_GUARD names another talkback-guard binary to test (an ASan
// build, say); deploy/docker-proxy runs it.
//
// The sandbox network is one of this test's own (tbguard-<rand>, through
// the `network` config key), made by the guard-checked create and removed
// at the end; so are the containers (labelled
// talkback.conversation=sp-<rand>..., and tbguard-<rand>-foreign*).

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
const PROXY = path.join(ROOT, 'deploy', 'docker-proxy');
const IMAGE = 'talkback-sandbox:latest';

const tag = crypto.randomBytes(4).toString('hex');
const prefix = `sp-${tag}`;
const NET = `tbguard-${tag}`;
const FOREIGN = `tbguard-${tag}-foreign`;
const FAKE = `talkback-tbguard-${tag}-nolabels`;
const PROBE = `talkback-probe-tbguard-${tag}`;
const PRIV = `tbguard-${tag}-priv`; // what a smuggled create would make
const EVIL = `tbguard-${tag}-evil`; // talkback's label, another name
const LISTED = `tbguard-${tag}-listed`; // a foreign container, for the lists
const DISK_CAP = 2 ** 31; // the disk_cap default, 2G
const dir = fs.mkdtempSync(`/tmp/talkback-sp-${tag}-`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CAP_DROP = ['AUDIT_WRITE', 'MKNOD', 'NET_RAW', 'SETFCAP', 'SETPCAP', 'SYS_CHROOT'];
const REFUSED = /refused by the talkback Docker guard/;

let proxyPort;
let proxyBase;
let proxy;
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
  // Spares a chat claimed carry the chat's name, not its label.
  const claimed = await docker('ps', '-aq', '--no-trunc', '--filter', 'label=talkback.spare',
    '--filter', `name=^talkback-${prefix}`).catch(() => '');
  ids.push(...claimed.split('\n').filter(Boolean));
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => {});
  await docker('rm', '-f', FOREIGN, FAKE, PROBE, `${PROBE}-sized`, PRIV, EVIL, LISTED).catch(() => {});
}

/** The sandbox body of spec/sandbox.c (spec_create_body) with the default config keys
 *  (no agent: sleep infinity and a json-file log), for conversation conv. */
function template(conv) {
  return {
    Image: IMAGE, Cmd: ['sleep', 'infinity'], WorkingDir: '/work', User: 'root', Hostname: 'sandbox',
    Tty: false, OpenStdin: false,
    Labels: { 'talkback.conversation': conv, 'talkback.user': '', 'talkback.created': '2026-01-01T00:00:00Z' },
    HostConfig: {
      Init: true, Memory: 256 << 20, MemorySwap: 1 << 30, NanoCpus: 1000000000, CpuShares: 256,
      PidsLimit: 512, NetworkMode: NET, LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
      RestartPolicy: { Name: 'no' }, CapDrop: CAP_DROP,
    },
  };
}

/** POST /containers/create through the guard with a raw body string. */
async function create(name, body) {
  return api('POST', `/v1.41/containers/create?name=${name}`, {
    body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' },
  });
}

before(async () => {
  await docker('image', 'inspect', IMAGE).catch(() => {
    throw new Error(`${IMAGE} is missing (deploy/setup builds it)`);
  });
  proxyPort = await freePort();
  proxyBase = `http://127.0.0.1:${proxyPort}`;
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_') && k !== 'TALKBACK_GUARD') delete env[k];
  proxy = startProc('guard', PROXY, [],
    { ...env, TALKBACK_PROXY_BIND: `127.0.0.1:${proxyPort}`, TALKBACK_NETWORK: NET, TALKBACK_LOG_LEVEL: 'debug' });
  await waitFor(async () => {
    if (proxy.child.exitCode !== null) throw new Error(`the guard exited ${proxy.child.exitCode}${logTail()}`);
    return (await api('GET', '/_ping').catch(() => ({ status: 0 }))).status === 200;
  }, 'the guard to answer /_ping');
  // The test's sandbox network, made through the guard as the manager does.
  const n = await api('POST', '/v1.41/networks/create', {
    json: { Name: NET, Driver: 'bridge', CheckDuplicate: true, Labels: { 'talkback.network': 'sandboxes' } },
  });
  assert.equal(n.status, 201, n.text);
});

after(async () => {
  for (const p of [...procs].reverse()) await stopProc(p);
  await removeOurContainers();
  await docker('network', 'rm', NET).catch(() => {});
  if (failed) process.stderr.write(`guard test logs kept in ${dir}\n`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------

test('the sandbox network is made with inter-container traffic off', withLogs(async () => {
  const opts = JSON.parse(await docker('network', 'inspect', '-f', '{{json .Options}}', NET));
  assert.equal(opts['com.docker.network.bridge.enable_icc'], 'false');
  // Another network, or the sandbox network with another driver, is not made.
  for (const body of [{ Name: `${NET}x`, Driver: 'bridge' }, { Name: NET, Driver: 'macvlan' },
    { Name: NET, Driver: 'bridge', Internal: false }, { Name: NET, Driver: 'bridge', Options: { 'com.docker.network.bridge.enable_icc': 'true' } }]) {
    const r = await api('POST', '/v1.41/networks/create', { json: body });
    assert.equal(r.status, 403, `${JSON.stringify(body)}: ${r.text}`);
  }
}));

test('the sandbox template passes, and is what Docker made', withLogs(async () => {
  const name = `talkback-${prefix}-tpl`;
  const c = await create(name, template(`${prefix}-tpl`));
  assert.equal(c.status, 201, c.text);
  const hc = JSON.parse(await docker('inspect', '-f', '{{json .HostConfig}}', c.json.Id));
  assert.equal(hc.Privileged, false);
  assert.deepEqual(hc.CapDrop, CAP_DROP);
  assert.equal(hc.CapAdd, null);
  assert.equal(hc.Binds, null);
  assert.equal(hc.NetworkMode, NET);
  assert.equal(hc.Memory, 256 << 20);
  assert.equal((await api('DELETE', `/v1.41/containers/${c.json.Id}?force=1`)).status, 204);
}));

test('refused: every trick in a container create body', withLogs(async () => {
  const t = () => template(`${prefix}-trick`);
  const withHost = (extra) => { const b = t(); Object.assign(b.HostConfig, extra); return b; };
  const withTop = (extra) => ({ ...t(), ...extra });
  const s = (b) => JSON.stringify(b);
  const hostStr = (raw) => s(t()).replace('"HostConfig":{', `"HostConfig":{${raw},`);
  const tricks = {
    privileged: withHost({ Privileged: true }),
    'privileged lowercase': withHost({ privileged: true }),
    'PRIVILEGED upper': withHost({ PRIVILEGED: true }),
    'escaped key': hostStr('"Privil\\u0065ged":true'),
    'escaped key, second spelling': hostStr('"\\u0050rivileged":true'),
    'duplicate NetworkMode, last host': s(t()).replace('"RestartPolicy"', '"NetworkMode":"host","RestartPolicy"'),
    'duplicate Image, last another': s(t()) .replace(/}$/, ',"Image":"debian:12"}'),
    'folded duplicate Memory': hostStr('"memory":0'),
    'folded long-s key': hostStr('"Bind\u017f":["/:/host"]'),
    'Kelvin-sign key': hostStr('"\u212aernelMemory":1'),
    binds: withHost({ Binds: ['/:/host'] }),
    'binds lowercase': withHost({ binds: ['/:/host'] }),
    mounts: withHost({ Mounts: [{ Type: 'bind', Source: '/', Target: '/host' }] }),
    volumes: withTop({ Volumes: { '/data': {} } }),
    'volumes from': withHost({ VolumesFrom: ['x'] }),
    capadd: withHost({ CapAdd: ['SYS_ADMIN'] }),
    'capdrop missing': (() => { const b = t(); delete b.HostConfig.CapDrop; return b; })(),
    'capdrop empty': withHost({ CapDrop: [] }),
    devices: withHost({ Devices: [{ PathOnHost: '/dev/sda', PathInContainer: '/dev/sda', CgroupPermissions: 'rwm' }] }),
    'device requests': withHost({ DeviceRequests: [{ Count: -1, Capabilities: [['gpu']] }] }),
    'device cgroup rules': withHost({ DeviceCgroupRules: ['a *:* rwm'] }),
    'pid host': withHost({ PidMode: 'host' }),
    'network host': withHost({ NetworkMode: 'host' }),
    'network of another container': withHost({ NetworkMode: `container:${FOREIGN}` }),
    'ipc host': withHost({ IpcMode: 'host' }),
    'uts host': withHost({ UTSMode: 'host' }),
    'userns host': withHost({ UsernsMode: 'host' }),
    'cgroupns host': withHost({ CgroupnsMode: 'host' }),
    'seccomp unconfined': withHost({ SecurityOpt: ['seccomp=unconfined'] }),
    'apparmor unconfined': withHost({ SecurityOpt: ['apparmor=unconfined'] }),
    sysctls: withHost({ Sysctls: { 'net.ipv4.ip_forward': '1' } }),
    'another image': withTop({ Image: 'debian:12' }),
    'image with a digest suffix': withTop({ Image: `${IMAGE}@sha256:0` }),
    'another runtime': withHost({ Runtime: 'runc' }),
    'no memory limit': withHost({ Memory: 0 }),
    'memory as a float': withHost({ Memory: 268435456.5 }),
    'unlimited pids': withHost({ PidsLimit: -1 }),
    'more cpu': withHost({ NanoCpus: 4000000000 }),
    'restart always': withHost({ RestartPolicy: { Name: 'always' } }),
    'another log driver': withHost({ LogConfig: { Type: 'syslog', Config: {} } }),
    'oom kill off': withHost({ OomKillDisable: true }),
    'read-write cgroup parent': withHost({ CgroupParent: '/' }),
    entrypoint: withTop({ Entrypoint: ['sh', '-c', 'id'] }),
    'another cmd': withTop({ Cmd: ['sh', '-c', 'id'] }),
    env: withTop({ Env: ['LD_PRELOAD=/x.so'] }),
    'networking config': withTop({ NetworkingConfig: { EndpointsConfig: { bridge: {} } } }),
    'extra label': (() => { const b = t(); b.Labels.x = 'y'; return b; })(),
    'user not root': withTop({ User: '0:0' }),
    'not an object': '[]',
    'not JSON': '{"Image":',
    'HostConfig not an object': s(withTop({ HostConfig: [] })),
  };
  for (const [what, body] of Object.entries(tricks)) {
    const r = await create(`talkback-${prefix}-trick`, body);
    assert.equal(r.status, 403, `${what} must be refused, got ${r.status} ${r.text}`);
    assert.match(r.json?.message ?? '', REFUSED, `${what}: ${r.text}`);
  }
  // A name that is not talkback's, or none.
  for (const q of ['?name=evil', '', '?name=talkback-x&platform=linux', '?name=talkback-%2e%2e']) {
    const r = await api('POST', `/v1.41/containers/create${q}`, { json: t() });
    assert.equal(r.status, 403, `create${q}: ${r.text}`);
  }
  // A chunked body cannot pass either.
  const raw = await rawRequest(`POST /v1.41/containers/create?name=talkback-${prefix}-trick HTTP/1.1\r\nHost: d\r\n` +
    'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n');
  assert.match(raw, /^HTTP\/1\.1 400 /);
  // None of them reached Docker.
  assert.equal((await docker('ps', '-a', '-q', '--filter', `name=talkback-${prefix}-trick`)).trim(), '');
}));

/** Send a raw request; resolves with everything the guard answered. */
function rawRequest(text) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(proxyPort, '127.0.0.1', () => sock.write(text));
    const chunks = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.setTimeout(10000, () => sock.destroy());
  });
}

test('refused: per-container calls to containers that are not talkback\'s', withLogs(async () => {
  await docker('create', '--name', FOREIGN, IMAGE, 'sleep', 'infinity');
  await docker('start', FOREIGN);
  await docker('create', '--name', FAKE, '--network', 'none', IMAGE, 'sleep', 'infinity');
  const id = (await docker('inspect', '-f', '{{.Id}}', FOREIGN)).trim();
  const fakeId = (await docker('inspect', '-f', '{{.Id}}', FAKE)).trim();
  // An exec in the foreign container, made straight at dockerd.
  const { stdout: ex } = await execFileP('curl', ['-s', '--unix-socket', '/var/run/docker.sock', '-X', 'POST',
    '-H', 'Content-Type: application/json', '-d', '{"Cmd":["true"]}', `http://d/v1.41/containers/${id}/exec`]);
  const execId = JSON.parse(ex).Id;
  const archive = `archive?path=${encodeURIComponent('/etc/hostname')}`;
  for (const ref of [FOREIGN, id, id.slice(0, 12), FAKE, fakeId]) {
    const calls = [
      ['GET', `/v1.41/containers/${ref}/json`], ['GET', `/containers/${ref}/json`],
      ['POST', `/v1.41/containers/${ref}/start`], ['POST', `/v1.41/containers/${ref}/stop?t=1`],
      ['POST', `/v1.41/containers/${ref}/kill`], ['POST', `/v1.41/containers/${ref}/restart?t=1`],
      ['POST', `/v1.41/containers/${ref}/wait`], ['POST', `/v1.41/containers/${ref}/attach?stream=1&stdout=1`],
      ['POST', `/v1.41/containers/${ref}/pause`], ['POST', `/v1.41/containers/${ref}/unpause`],
      ['GET', `/v1.41/containers/${ref}/${archive}`], ['HEAD', `/v1.41/containers/${ref}/${archive}`],
      ['PUT', `/v1.41/containers/${ref}/archive?path=/tmp`, tarOne('x', 'x')],
      ['POST', `/v1.41/containers/${ref}/exec`, JSON.stringify({ Cmd: ['id'] })],
      ['DELETE', `/v1.41/containers/${ref}?force=1`],
      ['POST', `/v1.41/networks/${NET}/connect`, JSON.stringify({ Container: ref })],
      ['POST', `/v1.41/networks/${NET}/disconnect`, JSON.stringify({ Container: ref, Force: true })],
    ];
    for (const [method, p, body] of calls) {
      const r = await api(method, p, body !== undefined ? { body, headers: { 'Content-Type': 'application/json' } } : {});
      assert.equal(r.status, 403, `${method} ${p} must be refused, got ${r.status} ${r.text}`);
      if (method !== 'HEAD') assert.match(r.json?.message ?? '', /is not a talkback sandbox/, `${method} ${p}: ${r.text}`);
    }
  }
  for (const [method, p, body] of [['GET', `/v1.41/exec/${execId}/json`],
    ['POST', `/v1.41/exec/${execId}/start`, '{"Detach":false,"Tty":false}']]) {
    const r = await api(method, p, body ? { body, headers: { 'Content-Type': 'application/json' } } : {});
    assert.equal(r.status, 403, `${method} ${p}: ${r.text}`);
  }
  // Both are still there, untouched: running, and not on the sandbox network.
  assert.equal((await docker('inspect', '-f', '{{.State.Running}}', FOREIGN)).trim(), 'true');
  const nets = JSON.parse(await docker('inspect', '-f', '{{json .NetworkSettings.Networks}}', FOREIGN));
  assert.ok(!(NET in nets), 'the foreign container was not connected to the sandbox network');
  assert.equal((await docker('inspect', '-f', '{{.State.Status}}', FAKE)).trim(), 'created');
}));

/** The storage probe's body, as sandbox/disk.c's probe_create sends it
 *  (a StorageOpt size when size is given). */
function probeBody(size) {
  const b = {
    Image: IMAGE, Cmd: ['true'], Labels: { 'talkback.probe': 'storage' },
    HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'none' } },
  };
  if (size !== undefined) b.HostConfig.StorageOpt = { size };
  return b;
}

test('allowed: the storage probe, only to be made, inspected and removed', withLogs(async () => {
  const c = await create(PROBE, probeBody());
  assert.equal(c.status, 201, c.text);
  const i = await api('GET', `/v1.41/containers/${PROBE}/json?size=1`);
  assert.equal(i.status, 200, i.text);
  assert.equal(i.json.Config.Labels['talkback.probe'], 'storage');
  assert.equal(i.json.HostConfig.NetworkMode, 'none');
  const archive = `archive?path=${encodeURIComponent('/etc/hostname')}`;
  for (const [method, p, body] of [
    ['POST', `/v1.41/containers/${PROBE}/start`], ['POST', `/v1.41/containers/${PROBE}/kill`],
    ['POST', `/v1.41/containers/${PROBE}/attach?stream=1&stdout=1`], ['GET', `/v1.41/containers/${PROBE}/${archive}`],
    ['PUT', `/v1.41/containers/${PROBE}/archive?path=/tmp`, tarOne('x', 'x')],
    ['POST', `/v1.41/containers/${PROBE}/exec`, JSON.stringify({ Cmd: ['id'] })],
    ['POST', `/v1.41/networks/${NET}/connect`, JSON.stringify({ Container: PROBE })]]) {
    const r = await api(method, p, body !== undefined ? { body, headers: { 'Content-Type': 'application/json' } } : {});
    assert.equal(r.status, 403, `${method} ${p} must be refused, got ${r.status} ${r.text}`);
    assert.match(r.json?.message ?? '', /is not a talkback sandbox/, `${method} ${p}: ${r.text}`);
  }
  assert.equal((await docker('inspect', '-f', '{{.State.Status}}', PROBE)).trim(), 'created');
  assert.equal((await api('DELETE', `/v1.41/containers/${PROBE}?force=1`)).status, 204);
  // The probe's body under a name that is not talkback-probe-..., or with a
  // loosened HostConfig, is refused.
  for (const [name, body] of [[`talkback-${prefix}-probe`, probeBody()],
    [PROBE, (() => { const b = probeBody(); b.HostConfig.Privileged = true; return b; })()],
    [PROBE, (() => { const b = probeBody(); b.Cmd = ['sh', '-c', 'id']; return b; })()],
    [PROBE, probeBody('1G')]]) {
    const r = await create(name, body);
    assert.equal(r.status, 403, `${name} ${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.json?.message ?? '', REFUSED, r.text);
  }
}));

test('StorageOpt size: disk_cap or more passes the guard, anything else is refused', withLogs(async () => {
  // The probe's second container and a sandbox, each with a size of disk_cap:
  // the guard lets them through; on a data root without quotas Docker
  // itself then refuses the size with its own error.
  const sized = template(`${prefix}-sized`);
  sized.HostConfig.StorageOpt = { size: String(DISK_CAP) };
  for (const [name, body] of [[`${PROBE}-sized`, probeBody(String(DISK_CAP))], [`talkback-${prefix}-sized`, sized]]) {
    const r = await create(name, body);
    assert.doesNotMatch(r.text, REFUSED, `${name}: the guard must not refuse it`);
    assert.ok(r.status === 201 || /storage-opt|quota|size/i.test(r.json?.message ?? ''), `${name}: ${r.status} ${r.text}`);
    if (r.status === 201) {
      assert.equal((await docker('inspect', '-f', '{{json .HostConfig.StorageOpt}}', r.json.Id)).trim(),
        JSON.stringify({ size: String(DISK_CAP) }));
      await docker('rm', '-f', r.json.Id);
    }
  }
  const tricks = {
    'another key': { size: String(DISK_CAP), 'dm.basesize': '1G' },
    'only another key': { 'overlay2.size': String(DISK_CAP) },
    'folded key': { Size: String(DISK_CAP) },
    'size below disk_cap': { size: String(DISK_CAP - 1) },
    'size below disk_cap with a unit': { size: '1G' },
    'size not a string': { size: DISK_CAP },
    'size far past disk_cap': { size: '1P' },
  };
  for (const [what, opt] of Object.entries(tricks)) {
    const b = template(`${prefix}-sized`);
    b.HostConfig.StorageOpt = opt;
    const r = await create(`talkback-${prefix}-sized`, b);
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.match(r.json?.message ?? '', REFUSED, `${what}: ${r.text}`);
    assert.match(r.json.message, /StorageOpt/, `${what}: ${r.text}`);
  }
}));

test('refused: a privileged exec, a body where none belongs, an old API version', withLogs(async () => {
  const name = `talkback-${prefix}-exec`;
  const c = await create(name, template(`${prefix}-exec`));
  assert.equal(c.status, 201, c.text);
  assert.equal((await api('POST', `/v1.41/containers/${name}/start`)).status, 204);
  for (const body of ['{"Cmd":["id"],"Privileged":true}', '{"Cmd":["id"],"privileged":true}',
    '{"Cmd":["id"],"Privil\\u0065ged":true}', '{"Cmd":["id"],"Privileged":false,"Privileged":true}']) {
    const r = await api('POST', `/v1.41/containers/${name}/exec`, { body, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 403, `${body}: ${r.text}`);
  }
  const hc = await api('POST', `/v1.41/containers/${name}/start`, {
    body: JSON.stringify({ Binds: ['/:/host'], Privileged: true }), headers: { 'Content-Type': 'application/json' },
  });
  assert.equal(hc.status, 403, hc.text);
  for (const v of ['/v1.12', '/v1.23', '/v0.9', '/v1']) {
    const r = await api('POST', `${v}/containers/${name}/start`);
    assert.equal(r.status, 403, `${v}: ${r.text}`);
  }
  assert.equal((await api('DELETE', `/v1.41/containers/${name}?force=1`)).status, 204);
}));

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
  const n = await api('GET', `/v1.41/networks/${NET}`);
  assert.equal(n.status, 200, n.text);
}));

test('allowed: create, start, exec, exec inspect, archive, stop, restart, pause, unpause, kill, wait, remove', withLogs(async () => {
  const v = '/v1.41';
  const name = `talkback-${prefix}-raw`;
  const c = await create(name, template(`${prefix}-raw`));
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
    body: tarOne('proxy.txt', 'via guard\n'), headers: { 'Content-Type': 'application/x-tar' },
  });
  assert.equal(put.status, 200, put.text);
  const head = await api('HEAD', `${v}/containers/${id}/archive?path=${encodeURIComponent('/work/proxy.txt')}`);
  assert.equal(head.status, 200);
  const stat = JSON.parse(Buffer.from(head.headers.get('x-docker-container-path-stat'), 'base64').toString());
  assert.equal(stat.size, 10);
  const get = await api('GET', `${v}/containers/${id}/archive?path=${encodeURIComponent('/work/proxy.txt')}`);
  assert.equal(get.status, 200);
  assert.ok(get.buf.includes(Buffer.from('via guard\n')), 'the tar holds the file');

  // Stop, start again, restart (the last resort of a kill pass), kill,
  // wait, remove; a disconnect and connect of the sandbox network.
  assert.equal((await api('POST', `${v}/containers/${id}/stop?t=1`)).status, 204);
  assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
  assert.equal((await api('POST', `${v}/containers/${name}/restart?t=1`)).status, 204);
  // The paused tier: pause and unpause, by id and by name.
  assert.equal((await api('POST', `${v}/containers/${id}/pause`)).status, 204);
  assert.equal((await api('GET', `${v}/containers/${id}/json`)).json.State.Status, 'paused');
  assert.equal((await api('POST', `${v}/containers/${name}/unpause`)).status, 204);
  assert.equal((await api('GET', `${v}/containers/${id}/json`)).json.State.Status, 'running');
  assert.equal((await api('POST', `${v}/networks/${NET}/disconnect`, { json: { Container: name, Force: true } })).status, 200);
  assert.equal((await api('POST', `${v}/networks/${NET}/connect`, { json: { Container: id, EndpointConfig: {} } })).status, 200);
  assert.equal((await api('POST', `${v}/containers/${id}/kill`)).status, 204);
  const w = await api('POST', `${v}/containers/${id}/wait`);
  assert.equal(w.status, 200, w.text);
  assert.equal(typeof w.json.StatusCode, 'number');
  assert.equal((await api('DELETE', `${v}/containers/${id}?force=1&v=1`)).status, 204);
  assert.equal((await api('GET', `${v}/containers/${id}/json`)).status, 404);
}));

test('allowed: exec with stdin, through a 101 upgrade and the guard\'s splice', withLogs(async () => {
  const v = '/v1.41';
  const c = await create(`talkback-${prefix}-stdin`, template(`${prefix}-stdin`));
  assert.equal(c.status, 201, c.text);
  const id = c.json.Id;
  try {
    assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
    const e = await api('POST', `${v}/containers/${id}/exec`, {
      json: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['sh', '-c', 'tr a-z A-Z; echo eof'] },
    });
    assert.equal(e.status, 201, e.text);
    // stdin arrives, the half-close ends it (tr sees EOF), the output
    // comes back and the daemon's close ends the stream.
    const s = await execWithStdin(e.json.Id, 'hello through the guard\n', v);
    assert.equal(s.status, 101, s.head);
    assert.equal(s.stdout, 'HELLO THROUGH THE GUARD\neof\n');
  } finally {
    await api('DELETE', `${v}/containers/${id}?force=1`);
  }
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
    ['DELETE', `/v1.41/networks/${NET}`],
    ['GET', '/networks'],
    ['GET', '/v1.41/networks/bridge'],
    ['POST', '/v1.41/networks/create', JSON.stringify({ Name: `${prefix}-net`, Driver: 'bridge' })],
    ['POST', '/v1.41/networks/create', JSON.stringify({ Name: NET, Driver: 'macvlan' })],
    ['POST', '/v1.41/networks/create', `{"Name":"${NET}","Driver":"bridge","name":"x"}`],
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
    assert.match(r.json?.message ?? '', REFUSED, `${method} ${p}: ${r.text}`);
  }
  // None of them reached Docker.
  const nets = await docker('network', 'ls', '--format', '{{.Name}}');
  assert.ok(!nets.includes(`${prefix}-net`));
}));

// talkback-gateway, talkback-sandbox (through the guard) and, when built,
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
    TALKBACK_NETWORK: NET,
    TALKBACK_EGRESS_CHECK: 'off', // the guard is what this file tests: no egress rule for NET
    TALKBACK_LOG_LEVEL: 'debug',
    TALKBACK_HUB_HOSTS_FILE: `${dir}/hub-hosts`,
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
async function callTool(name, args, conv = prefix) {
  return toolCallHttp(`${await startTalkback()}/mcp`, conv, name, args);
}

test('talkback works through the guard: new chat, run, write_file, reset, resume', withLogs(async () => {
  await startTalkback();
  const logFrom = fs.statSync(proxy.log).size;
  const r1 = await callTool('run', { command: 'echo hi' });
  assert.equal(r1.text, '$ echo hi\nhi\n');
  assert.equal(r1.isError, false);

  const w = await callTool('write_file', { path: 'proxied/a.txt', content: 'one\ntwo\n' });
  assert.equal(w.isError, false, w.text);
  const r2 = await callTool('run', { command: 'cat proxied/a.txt' });
  assert.equal(r2.text, '$ cat proxied/a.txt\none\ntwo\n');
  // An archive larger than any JSON body the guard reads streams through.
  const big = await callTool('write_file', { path: 'big.txt', content: 'x'.repeat(3 << 20) });
  assert.equal(big.isError, false, big.text);
  assert.match((await callTool('run', { command: 'wc -c < big.txt' })).text, /3145728/);

  const rs = await callTool('reset', {});
  assert.equal(rs.isError, false, rs.text);
  const r3 = await callTool('run', { command: 'ls proxied 2>&1; echo after-reset' });
  assert.match(r3.text, /after-reset/);
  assert.doesNotMatch(r3.text, /a\.txt/);

  // A stopped sandbox is started again (a resume) through the guard.
  const id = (await docker('ps', '-q', '--no-trunc', '--filter', `name=^talkback-${prefix}-[0-9a-f]{16}$`)).trim();
  assert.ok(id, 'the chat has a running sandbox');
  await docker('stop', '-t', '1', id);
  const r4 = await callTool('run', { command: 'echo resumed' });
  assert.match(r4.text, /resumed/);

  // None of talkback-sandbox's calls was refused.
  const glog = fs.readFileSync(proxy.log).subarray(logFrom).toString('utf8');
  // Made on its call, or a spare of the warm pool made and claimed (renamed).
  assert.match(glog, /POST \/v1\.\d+\/containers\/(create\?name=talkback-sp-|[0-9a-f]{64}\/rename\?name=talkback-sp-)/);
  const refusedLines = glog.split('\n').filter((l) => / (403|400|502) /.test(l));
  assert.deepEqual(refusedLines, [], 'no call of talkback-sandbox was refused');
}));

test('talkback works through the guard: run_code with an input on stdin', withLogs(async (t) => {
  await startTalkback();
  if (!haveJudge) {
    t.skip('build/talkback-judge is not built');
    return;
  }
  const rc = await callTool('run_code', {
    language: 'python', code: 'import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n',
    input: '1 2 3\n', expected: '6\n',
  });
  assert.equal(rc.isError, false, rc.text);
  assert.match(rc.text, /PASS/, rc.text);
}));

/** Run sh -c script in container id through the guard: {code, stdout}. */
async function execIn(id, script) {
  const e = await api('POST', `/v1.41/containers/${id}/exec`, {
    json: { AttachStdout: true, AttachStderr: true, Cmd: ['sh', '-c', script] },
  });
  assert.equal(e.status, 201, e.text);
  const s = await api('POST', `/v1.41/exec/${e.json.Id}/start`, { json: { Detach: false, Tty: false } });
  const i = await api('GET', `/v1.41/exec/${e.json.Id}/json`);
  return { code: i.json.ExitCode, ...demux(s.buf) };
}

test('two sandboxes cannot reach each other; a sandbox has no NET_RAW or MKNOD', withLogs(async () => {
  const ids = [];
  for (const n of ['a', 'b']) {
    const c = await create(`talkback-${prefix}-iso-${n}`, template(`${prefix}-iso-${n}`));
    assert.equal(c.status, 201, c.text);
    ids.push(c.json.Id);
    assert.equal((await api('POST', `/v1.41/containers/${c.json.Id}/start`)).status, 204);
  }
  const [a, b] = ids;
  const ipB = (await docker('inspect', '-f', `{{(index .NetworkSettings.Networks "${NET}").IPAddress}}`, b)).trim();
  assert.match(ipB, /^\d+\.\d+\.\d+\.\d+$/);
  // A listener in b, on its own address of the sandbox network.
  const srv = 'import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n' +
    `s.bind(("${ipB}",8765))\ns.listen(5)\nwhile True:\n  c,_=s.accept();c.sendall(b"hello\\n");c.close()\n`;
  await execIn(b, `printf '%s' '${srv}' > /tmp/srv.py; (python3 /tmp/srv.py >/dev/null 2>&1 &)`);
  const probe = `timeout 5 python3 -c 'import socket;s=socket.create_connection(("${ipB}",8765),4);print(s.recv(9).decode().strip())'`;
  // b reaches its own listener (so the listener is up and the probe works)...
  const own = await waitFor(async () => {
    const r = await execIn(b, probe);
    return r.stdout.includes('hello') ? r : null;
  }, 'the listener in b');
  assert.match(own.stdout, /hello/);
  // ...and a does not.
  const other = await execIn(a, probe);
  assert.notEqual(other.code, 0, `a reached b: ${other.stdout}${other.stderr}`);
  assert.doesNotMatch(other.stdout, /hello/);
  // Capabilities: NET_RAW (13) and MKNOD (27) are gone, CHOWN (0) stays.
  const st = await execIn(a, 'grep CapEff /proc/self/status');
  const eff = BigInt(`0x${st.stdout.split(/\s+/)[1]}`);
  assert.equal(eff & (1n << 13n), 0n, 'no NET_RAW');
  assert.equal(eff & (1n << 27n), 0n, 'no MKNOD');
  assert.notEqual(eff & 1n, 0n, 'CHOWN');
  for (const id of ids) await api('DELETE', `/v1.41/containers/${id}?force=1`);
}));

// ---------------------------------------------------------------------------
// The splice: only a real hijack is spliced; any other answer ends the
// connection, so nothing a client sends after its request reaches dockerd.

/** One raw connection to the guard on port (or unix path) target: send
 *  `first`; once the first answer head is in, send `after` (and half-close
 *  with end); read until the guard closes, or timeoutMs.  Resolves {text,
 *  closed, statuses: every "HTTP/1.x NNN" seen}. */
function rawExchange(target, first, { after = null, end = false, timeoutMs = 10000 } = {}) {
  return new Promise((resolve) => {
    const sock = typeof target === 'number' ? net.connect(target, '127.0.0.1') : net.connect(target);
    const chunks = [];
    let sent = false;
    const finish = (closed) => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ text, closed, statuses: [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1])) });
    };
    const timer = setTimeout(() => { sock.destroy(); finish(false); }, timeoutMs);
    sock.on('connect', () => sock.write(first));
    sock.on('data', (d) => {
      chunks.push(d);
      if (after !== null && !sent && Buffer.concat(chunks).includes('\r\n\r\n')) {
        sent = true;
        if (end) sock.end(after); else sock.write(after);
      }
    });
    sock.on('error', () => {}); // a reset once the guard closed
    sock.on('close', () => finish(true));
  });
}

/** A request head (and body) as a raw client sends it. */
function httpText(method, p, { body = '', upgrade = false } = {}) {
  return `${method} ${p} HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n` +
    `${upgrade ? 'Connection: Upgrade\r\nUpgrade: tcp\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** What the audit sent after its detached exec start: an unchecked call
 *  and a privileged create. */
const SMUGGLED = httpText('GET', '/v1.41/info') + httpText('POST', `/v1.41/containers/create?name=${PRIV}`, {
  body: JSON.stringify({ Image: IMAGE, Cmd: ['true'], HostConfig: { Privileged: true, Binds: ['/:/host'], NetworkMode: 'none' } }),
});

test('refused: a detached exec start, and nothing sent after it on the connection reaches dockerd', withLogs(async () => {
  const v = '/v1.41';
  const c = await create(`talkback-${prefix}-detach`, template(`${prefix}-detach`));
  assert.equal(c.status, 201, c.text);
  const id = c.json.Id;
  try {
    assert.equal((await api('POST', `${v}/containers/${id}/start`)).status, 204);
    for (const detach of ['{"Detach":true,"Tty":false}', '{"detach":true}', '{"Detach":false,"Detach":true}']) {
      const e = await api('POST', `${v}/containers/${id}/exec`, { json: { AttachStdout: true, Cmd: ['true'] } });
      assert.equal(e.status, 201, e.text);
      const start = httpText('POST', `${v}/exec/${e.json.Id}/start`, { body: detach, upgrade: true });
      // Pipelined at once, and (as the audit did) after the answer came.
      for (const r of [await rawExchange(proxyPort, start + SMUGGLED), await rawExchange(proxyPort, start, { after: SMUGGLED })]) {
        assert.equal(r.closed, true, `the guard left the connection open: ${r.text}`);
        assert.deepEqual(r.statuses, [403], `${detach}: one answer, a refusal: ${r.text}`);
        assert.match(r.text, /detached exec start/);
        assert.doesNotMatch(r.text, /ServerVersion|"Id"/);
      }
    }
    await assert.rejects(docker('inspect', PRIV), 'the privileged container was never made');
    // Not detached, it still runs and streams (no upgrade: a 200 raw stream).
    const e = await api('POST', `${v}/containers/${id}/exec`, { json: { AttachStdout: true, Cmd: ['echo', 'attached'] } });
    const s = await api('POST', `${v}/exec/${e.json.Id}/start`, { json: { Detach: false, Tty: false } });
    assert.equal(s.status, 200, s.text);
    assert.equal(demux(s.buf).stdout, 'attached\n');
  } finally {
    await api('DELETE', `${v}/containers/${id}?force=1`);
  }
}));

test('every answer that is not a hijack says Connection: close, and the guard closes after it', withLogs(async () => {
  for (const req of [httpText('GET', '/_ping'), httpText('GET', '/v1.41/version'),
    httpText('GET', '/v1.41/containers/nonexistent-tbguard/json')]) {
    const r = await rawExchange(proxyPort, req + httpText('GET', '/v1.41/info'));
    assert.equal(r.closed, true, r.text);
    assert.equal(r.statuses.length, 1, `one answer only: ${r.text}`);
    assert.match(r.text, /\r\nConnection: close\r\n/i, r.text);
    assert.doesNotMatch(r.text, /ServerVersion/);
  }
}));

test('a container list shows only talkback\'s own containers, whatever the filters', withLogs(async () => {
  const v = '/v1.41';
  const mine = await create(`talkback-${prefix}-listed`, template(`${prefix}-listed`));
  assert.equal(mine.status, 201, mine.text);
  await docker('create', '--name', LISTED, IMAGE, 'true');
  // Talkback's label on a container that is not talkback's by name.
  await docker('create', '--name', EVIL, '--label', `talkback.conversation=${prefix}-evil`,
    '--label', 'talkback.created=x', IMAGE, 'true');
  const ids = async (query) => {
    const r = await api('GET', `${v}/containers/json${query}`);
    assert.equal(r.status, 200, `${query}: ${r.text}`);
    return r.json.map((x) => x.Names[0].slice(1));
  };
  const f = (o) => `&filters=${encodeURIComponent(JSON.stringify(o))}`;
  const lists = {
    'all=1': await ids('?all=1'),
    'no query': await ids(''),
    name: await ids(`?all=1${f({ name: [`tbguard-${tag}`] })}`),
    'talkback label': await ids(`?all=1${f({ label: ['talkback.conversation'] })}`),
    'talkback label, map form': await ids(`?all=1${f({ label: { 'talkback.created': true } })}`),
    'negated label': await ids(`?all=1${f({ label: ['talkback.conversation!=x'] })}`),
  };
  for (const [what, names] of Object.entries(lists)) {
    assert.ok(!names.includes(LISTED), `${what}: a foreign container is listed`);
    assert.ok(!names.includes(EVIL), `${what}: a container with talkback's label and another name is listed`);
    assert.ok(names.every((n) => n.startsWith('talkback-')), `${what}: ${names.join(' ')}`);
  }
  for (const what of ['all=1', 'talkback label', 'talkback label, map form'])
    assert.ok(lists[what].includes(`talkback-${prefix}-listed`), `${what}: talkback's own sandbox is listed`);
  assert.deepEqual(lists.name, []);
  // The caller's filters are kept (narrowed, never replaced).
  const byId = await ids(`?all=1${f({ id: [mine.json.Id] })}`);
  assert.deepEqual(byId, [`talkback-${prefix}-listed`]);
  for (const q of ['?all=1&all=0', '?all=1;size=1', '?before=x', `?filters=${encodeURIComponent('{"label":["a"],"label":["b"]}')}`,
    `?filters=${encodeURIComponent('["label"]')}`, '?all=%zz']) {
    const r = await api('GET', `${v}/containers/json${q}`);
    assert.equal(r.status, 403, `${q}: ${r.text}`);
  }
  await api('DELETE', `${v}/containers/${mine.json.Id}?force=1`);
}));

// The relay rules with a stand-in dockerd: what it answers is scripted,
// and what reaches it after its answer is recorded.

const FAKE_CID = crypto.randomBytes(32).toString('hex');

/** How the stand-in answers POST /exec/EID/start: [head and body, hijack?]. */
const FAKE_ANSWERS = {
  keepalive200: ['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', false],
  json404: ['HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"message":"no"}\n', false],
  chunked200: ['HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n', false],
  rawWithLength: ['HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\nContent-Length: 0\r\n\r\n', false],
  upgraded101: ['HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nstream', true],
  raw200: ['HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\nstream', true],
};

/** A container list with two of talkback's, a tombstone, and three that
 *  are not: no labels, talkback's label under another name, and one whose
 *  own name is not talkback's (its talkback- name is a link alias). */
const FAKE_LIST = [
  { Id: 'a'.repeat(64), Names: ['/talkback-x-0123456789abcdef'], Labels: { 'talkback.conversation': 'x', 'talkback.created': 't' } },
  { Id: 'b'.repeat(64), Names: ['/talkback-gone-x'], Labels: { 'talkback.tombstone': 'x' } },
  { Id: 'c'.repeat(64), Names: [`/talkback-spare-${'0'.repeat(24)}`], Labels: { 'talkback.spare': 'h', 'talkback.pool': 'p', 'talkback.created': 't' } },
  { Id: 'd'.repeat(64), Names: ['/foreign'], Labels: {} },
  { Id: 'e'.repeat(64), Names: ['/evil'], Labels: { 'talkback.conversation': 'x', 'talkback.created': 't' } },
  { Id: 'f'.repeat(64), Names: ['/talkback-y-0123456789abcdef/db', '/db'], Labels: { 'talkback.conversation': 'x' } },
];

/** The stand-in dockerd on a unix socket. */
function fakeDockerd(sockPath) {
  const fake = { after: {}, queries: [] };
  const answer = (s, status, body, type = 'application/json') => {
    s.end(`HTTP/1.1 ${status}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };
  fake.server = net.createServer((s) => {
    let buf = Buffer.alloc(0);
    let answered = null;
    s.on('error', () => {});
    s.on('data', (d) => {
      if (answered !== null) {
        fake.after[answered] += d.toString('latin1');
        return;
      }
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number((/\r\ncontent-length: *(\d+)/i.exec(head) || [0, '0'])[1]);
      if (buf.length < end + 4 + len) return;
      const [, method, target] = /^(\S+) (\S+)/.exec(head);
      const u = new URL(target, 'http://docker');
      let m;
      if ((m = /\/exec\/(\w+)\/start$/.exec(u.pathname)) && FAKE_ANSWERS[m[1]]) {
        const [text, hijack] = FAKE_ANSWERS[m[1]];
        answered = m[1];
        fake.after[answered] = buf.subarray(end + 4 + len).toString('latin1');
        s.write(text);
        if (hijack) s.on('end', () => s.end()); // a spliced stream ends when the client's does
      } else if (/\/exec\/\w+\/json$/.test(u.pathname)) {
        answer(s, '200 OK', JSON.stringify({ ContainerID: FAKE_CID }));
      } else if (/\/containers\/\w+\/json$/.test(u.pathname)) {
        answer(s, '200 OK', JSON.stringify({ Id: FAKE_CID, Name: '/talkback-fake-0123456789abcdef', Config: { Labels: { 'talkback.conversation': 'fake' } } }));
      } else if (method === 'GET' && /\/containers\/json$/.test(u.pathname)) {
        fake.queries.push(u.searchParams);
        const text = JSON.stringify(FAKE_LIST);
        const half = Math.floor(text.length / 2);
        s.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
          `${half.toString(16)}\r\n${text.slice(0, half)}\r\n${(text.length - half).toString(16)}\r\n${text.slice(half)}\r\n0\r\n\r\n`);
      } else if (/\/_ping$/.test(u.pathname)) {
        answer(s, '200 OK', 'OK', 'text/plain');
      } else {
        answer(s, '404 Not Found', '{"message":"not in the stand-in"}');
      }
    });
  });
  return new Promise((res, rej) => fake.server.once('error', rej).listen(sockPath, () => res(fake)));
}

let fakeGuard; // { port, fake }
async function startFakeGuard() {
  if (fakeGuard) return fakeGuard;
  const fake = await fakeDockerd(path.join(dir, 'fake-docker.sock'));
  const port = await freePort();
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_') && k !== 'TALKBACK_GUARD') delete env[k];
  const p = startProc('guard-fake', PROXY, [], {
    ...env, TALKBACK_PROXY_BIND: `127.0.0.1:${port}`, TALKBACK_DOCKER_SOCKET: path.join(dir, 'fake-docker.sock'),
    TALKBACK_NETWORK: NET, TALKBACK_LOG_LEVEL: 'debug',
  });
  await waitFor(async () => {
    if (p.child.exitCode !== null) throw new Error(`the guard exited ${p.child.exitCode}`);
    const r = await fetch(`http://127.0.0.1:${port}/_ping`).catch(() => null);
    return r && r.status === 200;
  }, 'the guard on the stand-in dockerd');
  fakeGuard = { port, fake };
  return fakeGuard;
}

after(() => fakeGuard?.fake.server.close());

test('relay: an answer on attach or exec start that is no hijack is relayed as framed and the connection ends', withLogs(async () => {
  const { port, fake } = await startFakeGuard();
  const body = '{"Detach":false,"Tty":false}';
  const later = httpText('GET', '/v1.41/info');
  for (const [eid, [text]] of Object.entries(FAKE_ANSWERS)) {
    if (FAKE_ANSWERS[eid][1]) continue;
    const r = await rawExchange(port, httpText('POST', `/v1.41/exec/${eid}/start`, { body, upgrade: true }), { after: later });
    assert.equal(r.closed, true, `${eid}: the guard left the connection open: ${r.text}`);
    assert.equal(r.statuses.length, 1, `${eid}: ${r.text}`);
    assert.match(r.text, /\r\nConnection: close\r\n/, `${eid}: ${r.text}`);
    // The body as it was framed, to its last byte and no further.
    assert.ok(r.text.endsWith(text.slice(text.indexOf('\r\n\r\n') + 4)), `${eid}: ${JSON.stringify(r.text)}`);
    await sleep(200);
    assert.equal(fake.after[eid], '', `${eid}: bytes reached dockerd after its answer: ${fake.after[eid]}`);
  }
  // A 101 to a request that asked no upgrade is no answer to pass on.
  const r = await rawExchange(port, httpText('POST', '/v1.41/exec/upgraded101/start', { body }), { after: later });
  assert.deepEqual(r.statuses, [502], r.text);
  await sleep(200);
  assert.equal(fake.after.upgraded101, '', 'nothing reached dockerd');
}));

test('relay: a real hijack (101 to an upgrade, or a 200 raw stream without length) is spliced both ways', withLogs(async () => {
  const { port, fake } = await startFakeGuard();
  const body = '{"Detach":false,"Tty":false}';
  for (const [eid, upgrade] of [['upgraded101', true], ['raw200', false]]) {
    const r = await rawExchange(port, httpText('POST', `/v1.41/exec/${eid}/start`, { body, upgrade }),
      { after: 'stdin bytes', end: true });
    assert.equal(r.closed, true, `${eid}: ${r.text}`);
    assert.ok(r.text.endsWith('\r\n\r\nstream'), `${eid}: the stream came back: ${JSON.stringify(r.text)}`);
    assert.equal(fake.after[eid], 'stdin bytes', `${eid}: the client's bytes reached the hijacked stream`);
  }
}));

test('relay: a container list is filtered, and its query keeps the caller\'s filters plus talkback\'s label', withLogs(async () => {
  const { port, fake } = await startFakeGuard();
  const base = `http://127.0.0.1:${port}/v1.41/containers/json`;
  const get = async (q) => {
    const r = await fetch(`${base}${q}`);
    return { status: r.status, json: await r.json(), query: fake.queries.at(-1) };
  };
  const r1 = await get(`?all=1&filters=${encodeURIComponent(JSON.stringify({ name: ['x'], status: ['running'] }))}`);
  assert.equal(r1.status, 200);
  assert.deepEqual(r1.json.map((c) => c.Id[0]), ['a', 'b', 'c']);
  assert.equal(r1.query.get('all'), '1');
  assert.deepEqual(JSON.parse(r1.query.get('filters')),
    { name: { x: true }, status: { running: true }, label: { 'talkback.created': true } });
  const r2 = await get(`?filters=${encodeURIComponent(JSON.stringify({ label: ['talkback.tombstone', 'a=b'] }))}`);
  assert.deepEqual(JSON.parse(r2.query.get('filters')), { label: { 'talkback.tombstone': true, 'a=b': true } });
  assert.deepEqual(r2.json.map((c) => c.Id[0]), ['a', 'b', 'c']);
  const r3 = await get('');
  assert.deepEqual(JSON.parse(r3.query.get('filters')), { label: { 'talkback.created': true } });
}));

test('the guard\'s default bind is a unix socket, not a TCP port', withLogs(async (t) => {
  // A mount namespace of its own with a private /run: the default path
  // there is this test's alone (no dockerd behind it: /_ping gets 502).
  try {
    await execFileP('unshare', ['-m', 'true']);
  } catch {
    t.skip('unshare -m is not available');
    return;
  }
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_') && k !== 'TALKBACK_GUARD') delete env[k];
  const p = startProc('guard-default', 'unshare',
    ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs tmpfs /run && exec "$0"', PROXY], env);
  try {
    const sock = await waitFor(() => {
      if (p.child.exitCode !== null) throw new Error(`the guard exited ${p.child.exitCode}`);
      const s = `/proc/${p.child.pid}/root/run/talkback-docker/docker.sock`;
      return fs.existsSync(s) ? s : null;
    }, 'the default unix socket');
    assert.equal(fs.statSync(sock).mode & 0o777, 0o660);
    const r = await rawExchange(sock, httpText('GET', '/_ping'));
    assert.deepEqual(r.statuses, [502], r.text);
    // No TCP socket listens for it.
    const inodes = new Set(fs.readdirSync(`/proc/${p.child.pid}/fd`).map((fd) => {
      try { return (/^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${p.child.pid}/fd/${fd}`)) || [])[1]; } catch { return undefined; }
    }).filter(Boolean));
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length > 9 && f[3] === '0A') assert.ok(!inodes.has(f[9]), `the guard listens on TCP ${f[1]}`);
      }
    }
  } finally {
    await stopProc(p);
  }
}));
