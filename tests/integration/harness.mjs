// harness.mjs -- shared helpers of talkback's integration tests.
//
// A Talkback object is one private talkback instance for one test file:
// its own HTTP port, its own hub endpoint (ipc:///tmp/talkback-it-<rand>/
// hub.ipc), its own conversation-id prefix (it-<rand>-) and log files under
// /tmp/talkback-it-<rand>/.  It starts, stops, kill -9s and restarts the
// gateway and the sandbox manager, and at the end removes every container
// whose talkback.conversation label starts with its prefix.  With the
// option `judges: n` it also runs n judge workers (talkback-judge, logs
// judge-0.log ...), which it can kill -9 and start again one by one.
//
// Also here: an MCP SDK client with LibreChat-style headers, callTool
// helpers that return the joined text, a raw fetch helper for protocol
// checks, docker CLI helpers and a polling helper.

import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const execFileP = promisify(execFile);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD = process.env.TALKBACK_BUILD_DIR || path.join(ROOT, 'build');
export const BIN = {
  gateway: path.join(BUILD, 'talkback-gateway'),
  sandbox: path.join(BUILD, 'talkback-sandbox'),
  judge: path.join(BUILD, 'talkback-judge'),
  replay: path.join(BUILD, 'talkback-replay'),
};
export const CONFORMANCE = path.join(ROOT, 'tests', 'integration', 'node_modules', '.bin', 'conformance');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const randomTag = () => crypto.randomBytes(4).toString('hex');

/** Poll fn() until it returns a truthy value; that value is returned.
 *  Throws (with what the last attempt saw) after timeoutMs. */
export async function waitFor(fn, { timeoutMs = 10000, intervalMs = 100, what = 'condition' } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= end) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${seen})`);
    }
    await sleep(intervalMs);
  }
}

/** A TCP port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** One talkback process with its stdout/stderr appended to a log file. */
export class Proc {
  constructor(name, bin, args, env, logPath) {
    this.name = name;
    this.bin = bin;
    this.args = args;
    this.env = env;
    this.logPath = logPath;
    this.child = null;
    this.exited = null;
  }

  get running() {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(extraEnv = {}) {
    if (this.running) throw new Error(`${this.name} is already running`);
    if (!fs.existsSync(this.bin)) throw new Error(`${this.bin} is missing: build talkback first`);
    const fd = fs.openSync(this.logPath, 'a');
    fs.writeSync(fd, `\n==== ${new Date().toISOString()} start ${this.name}\n`);
    const child = spawn(this.bin, this.args, {
      env: { ...this.env, ...extraEnv },
      stdio: ['ignore', fd, fd],
    });
    fs.closeSync(fd);
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
      child.on('error', (err) => resolve({ code: null, signal: null, err }));
    });
    return this;
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves with how it ended. */
  async stop(graceMs = 5000) {
    if (!this.child) return null;
    if (this.running) {
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.running && this.child.kill('SIGKILL'), graceMs);
      const r = await this.exited;
      clearTimeout(t);
      return r;
    }
    return this.exited;
  }

  /** kill -9, and wait until the process is gone. */
  async kill9() {
    if (!this.child) return null;
    if (this.running) this.child.kill('SIGKILL');
    return this.exited;
  }
}

/** The docker CLI; resolves with stdout. */
export async function docker(...args) {
  const { stdout } = await execFileP('docker', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Every chat's container: [{id, conv}] from its talkback.conversation label,
 *  and the spares a chat claimed (label talkback.spare, renamed to the chat's
 *  name "talkback-<conv>-<16 hex>": the tests' ids need no escaping). */
export async function talkbackContainers() {
  const out = await docker('ps', '-a', '--no-trunc', '--filter', 'label=talkback.conversation',
    '--format', '{{.ID}} {{.Label "talkback.conversation"}}');
  const chats = out.split('\n').filter(Boolean).map((line) => {
    const sp = line.indexOf(' ');
    return { id: line.slice(0, sp), conv: line.slice(sp + 1) };
  });
  const claimed = await docker('ps', '-a', '--no-trunc', '--filter', 'label=talkback.spare',
    '--format', '{{.ID}} {{.Names}}');
  for (const line of claimed.split('\n').filter(Boolean)) {
    const [id, name] = line.split(' ');
    if (!name || name.startsWith('talkback-spare-') || !/^talkback-.+-[0-9a-f]{16}$/.test(name)) continue;
    chats.push({ id, conv: name.slice('talkback-'.length, -17) });
  }
  return chats;
}

/** The talkback.pool label of an instance's spares: sandbox/pool.c's hash of its state_dir
 *  (FNV-1a 64 with the starting value common/convid.c uses). */
export function poolScope(tb) {
  let h = 1469598103934665603n;
  for (const b of Buffer.from(tb.stateDir)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/** The spares of an instance nobody claimed: [{id, name, state, hash}]. */
export async function sparesOf(tb) {
  const out = await docker('ps', '-a', '--no-trunc', '--filter', `label=talkback.pool=${poolScope(tb)}`,
    '--format', '{{.ID}} {{.Names}} {{.State}} {{.Label "talkback.spare"}}');
  return out.split('\n').filter(Boolean).map((line) => {
    const [id, name, state, hash] = line.split(' ');
    return { id, name, state, hash };
  }).filter((c) => c.name.startsWith('talkback-spare-'));
}

/** Remove an instance's spares (left by a manager that was killed). */
export async function removeSpares(tb) {
  const ids = (await sparesOf(tb)).map((c) => c.id);
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => {});
  return ids.length;
}

/** Containers whose label equals conv exactly. */
export async function containersOf(conv) {
  return (await talkbackContainers()).filter((c) => c.conv === conv);
}

/** Containers whose label starts with prefix. */
export async function containersWithPrefix(prefix) {
  return (await talkbackContainers()).filter((c) => c.conv.startsWith(prefix));
}

/** Set the last-call record of chat conv (kept on the host, in the
 *  instance's state_dir) to a Date, as if its last call ended then. */
export async function setLastCall(tb, conv, when) {
  const ids = await containersOf(conv);
  if (ids.length !== 1) throw new Error(`chat ${conv} has ${ids.length} containers`);
  const file = path.join(tb.stateDir, `${ids[0].id}.last-call`);
  if (!fs.existsSync(file)) throw new Error(`no last-call record ${file}`);
  fs.utimesSync(file, when, when);
}

export async function removeContainers(prefix) {
  const ids = (await containersWithPrefix(prefix)).map((c) => c.id);
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => {});
  return ids.length;
}

export class Talkback {
  /** env: TALKBACK_* variables for every process; gatewayEnv/sandboxEnv/judgeEnv:
   *  per process; judges: how many judge workers to run (none by default). */
  constructor({ name = 'it', env = {}, gatewayEnv = {}, sandboxEnv = {}, judgeEnv = {}, judges = 0 } = {}) {
    this.tag = randomTag();
    this.name = name;
    this.dir = fs.mkdtempSync(`/tmp/talkback-it-${this.tag}-`);
    fs.chmodSync(this.dir, 0o700); // the hub's ipc:// folder: talkback refuses any other mode
    this.hub = `ipc://${this.dir}/hub.ipc`;
    this.stateDir = path.join(this.dir, 'state');
    this.prefix = `it-${this.tag}-`;
    this.baseEnv = env;
    this.gatewayEnv = gatewayEnv;
    this.sandboxEnv = sandboxEnv;
    this.judgeEnv = judgeEnv;
    this.judges = [];
    this.judgeCount = judges;
    this.failed = false;
    this.nextChat = 0;
  }

  get url() {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  get healthUrl() {
    return `http://127.0.0.1:${this.port}/healthz`;
  }

  /** A fresh conversation id under this instance's prefix. */
  chat(label = 'chat') {
    return `${this.prefix}${label}-${this.nextChat++}`;
  }

  env(extra) {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_')) delete env[k];
    // A test's own sandbox network has no egress rule (tests/run installs
    // it for the shared one): its sandboxes start unchecked, unless the
    // test says otherwise (sandboxnet.test.mjs).
    const net = { ...this.baseEnv, ...extra }.TALKBACK_NETWORK;
    const egress = net && net !== 'talkback-sandboxes' ? { TALKBACK_EGRESS_CHECK: 'off' } : {};
    return {
      ...env,
      TALKBACK_LISTEN: `127.0.0.1:${this.port}`,
      TALKBACK_HUB_ENDPOINT: this.hub,
      TALKBACK_STATE_DIR: this.stateDir,
      TALKBACK_HUB_HOSTS_FILE: path.join(this.dir, 'hub-hosts'),
      // Instances share one dockerd, one sandbox network and user ids such
      // as user-1 across test files: the running caps are set per test.
      TALKBACK_MAX_RUNNING: '0',
      TALKBACK_MAX_RUNNING_PER_USER: '0',
      TALKBACK_LOG_LEVEL: 'debug',
      // TALKBACK_TEST_IMAGE: try the tests on another sandbox image (e.g.
      // one built with TALKBACK_SANDBOX_IMAGE=... deploy/image/build).
      ...(process.env.TALKBACK_TEST_IMAGE ? { TALKBACK_IMAGE: process.env.TALKBACK_TEST_IMAGE } : {}),
      ...egress,
      ...this.baseEnv,
      ...extra,
    };
  }

  /** Start the gateway, the sandbox manager and the judges; `judges` (default:
   *  all of them) says how many judges start now, the others wait for startJudge. */
  async start({ judges = this.judgeCount } = {}) {
    this.port = await freePort();
    this.gateway = new Proc('gateway', BIN.gateway, [], this.env(this.gatewayEnv),
      path.join(this.dir, 'gateway.log'));
    this.sandbox = new Proc('sandbox', BIN.sandbox, [], this.env(this.sandboxEnv),
      path.join(this.dir, 'sandbox.log'));
    this.judges = [];
    for (let i = 0; i < this.judgeCount; i++) {
      this.judges.push(new Proc(`judge-${i}`, BIN.judge, [], this.env(this.judgeEnv),
        path.join(this.dir, `judge-${i}.log`)));
    }
    this.gateway.start();
    this.sandbox.start();
    await this.waitReady();
    await Promise.all(this.judges.slice(0, judges).map((_, i) => this.startJudge(i)));
    return this;
  }

  /** Start judge i and wait until the hub says it joined (its name is judge-<pid>). */
  async startJudge(i, extraEnv = {}) {
    const j = this.judges[i];
    if (!j) throw new Error(`there is no judge ${i} (judges: ${this.judgeCount})`);
    j.start(extraEnv);
    const joined = `worker judge-${j.child.pid} (judge) joined`;
    const log = path.join(this.dir, 'gateway.log');
    try {
      await waitFor(() => {
        if (!j.running) throw new Error(`${j.name} exited`);
        return fs.readFileSync(log, 'utf8').includes(joined);
      }, { timeoutMs: 15000, what: `"${joined}" in ${log}` });
    } catch (e) {
      this.failed = true;
      e.message += this.logTail();
      throw e;
    }
  }

  async stopJudge(i) { return this.judges[i].stop(); }
  async killJudge(i) { return this.judges[i].kill9(); }
  judgePid(i) { return this.judges[i]?.running ? this.judges[i].child.pid : null; }

  /** GET /healthz: the status, or 0 when nothing answers. */
  async health() {
    try {
      const r = await fetch(this.healthUrl, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 0;
    }
  }

  /** Until GET /healthz answers 200 (gateway up and a sandbox manager connected). */
  async waitReady(timeoutMs = 15000) {
    await this.waitHealth(200, timeoutMs);
  }

  /** Until GET /healthz answers status; a process that exits meanwhile fails it. */
  async waitHealth(status, timeoutMs = 15000) {
    const t0 = Date.now();
    try {
      await this.pollHealth(status, timeoutMs);
    } catch (e) {
      this.failed = true;
      e.message += ` (waited ${Date.now() - t0} ms)${this.logTail()}`;
      throw e;
    }
  }

  async pollHealth(status, timeoutMs) {
    await waitFor(async () => {
      for (const p of status === 200 ? [this.gateway, this.sandbox] : [this.gateway]) {
        if (p && p.child && !p.running) {
          const r = await p.exited;
          throw new Error(`${p.name} exited (${JSON.stringify(r)})`);
        }
      }
      return (await this.health()) === status;
    }, { timeoutMs, intervalMs: 100, what: `GET ${this.healthUrl} == ${status}` });
  }

  async startGateway(extraEnv = {}) {
    this.gateway.start(extraEnv);
    await waitFor(async () => {
      if (!this.gateway.running) throw new Error(`gateway exited\n${this.logTail()}`);
      return (await this.health()) !== 0;
    }, { timeoutMs: 10000, what: 'the gateway to answer /healthz' });
  }

  async stopGateway() { return this.gateway.stop(); }
  async killGateway() { return this.gateway.kill9(); }
  async restartGateway(extraEnv = {}) {
    await this.gateway.stop();
    await this.startGateway(extraEnv);
    await this.waitReady();
  }

  startSandbox(extraEnv = {}) { this.sandbox.start(extraEnv); }
  async stopSandbox() { return this.sandbox.stop(); }
  async killSandbox() { return this.sandbox.kill9(); }
  async restartSandbox(extraEnv = {}) {
    await this.sandbox.stop();
    this.sandbox.start(extraEnv);
    await this.waitReady();
  }

  /** The last lines of every log, for failure messages. */
  logTail(lines = 60) {
    let s = '';
    for (const n of ['gateway', 'sandbox', ...this.judges.map((j) => j.name)]) {
      const p = path.join(this.dir, `${n}.log`);
      if (!fs.existsSync(p)) continue;
      const all = fs.readFileSync(p, 'utf8').split('\n');
      s += `\n---- ${p} (last ${lines} lines) ----\n${all.slice(-lines).join('\n')}`;
    }
    return s;
  }

  /** Stop everything, remove this instance's containers; keep logs only after a failure. */
  async cleanup() {
    await Promise.all([this.gateway?.stop(), this.sandbox?.stop(), ...this.judges.map((j) => j.stop())]);
    await removeContainers(this.prefix);
    await removeSpares(this);
    if (this.failed) {
      process.stderr.write(`talkback logs kept in ${this.dir}\n`);
    } else {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** Wrap a test body so a failure carries the instance's log tail. */
export function withLogs(tb, fn) {
  return async (t) => {
    try {
      await fn(t);
    } catch (e) {
      tb.failed = true;
      if (e && typeof e === 'object') {
        try {
          e.message = `${e.message}\n${tb.logTail()}`;
        } catch { /* read-only message */ }
      }
      throw e;
    }
  };
}

/** An MCP SDK client connected the way LibreChat connects. */
export async function connect(tb, { conv, user, headers = {} } = {}) {
  const h = { ...headers };
  if (conv !== undefined) h['X-Conversation-Id'] = conv;
  if (user !== undefined) h['X-User-Id'] = user;
  const client = new Client({ name: 'it', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(tb.url), { requestInit: { headers: h } });
  await client.connect(transport);
  return client;
}

/** The text blocks of a tools/call result, joined as LibreChat shows them. */
export function joinText(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n\n');
}

/** Call a tool: {text, isError, ms, result}. */
export async function call(client, name, args = {}, { timeout = 120000, signal } = {}) {
  const t0 = Date.now();
  const result = await client.callTool({ name, arguments: args }, undefined,
    { timeout, signal, resetTimeoutOnProgress: false });
  return { text: joinText(result), isError: result.isError === true, ms: Date.now() - t0, result };
}

/** run a command: the call() answer. */
export function run(client, command, { timeout, callTimeout, signal } = {}) {
  const args = { command };
  if (timeout !== undefined) args.timeout = timeout;
  const ct = callTimeout ?? ((timeout ?? 60) + 60) * 1000;
  return call(client, 'run', args, { timeout: ct, signal });
}

/** run and assert it succeeded; returns the output without the "$ cmd" line. */
export async function runOk(client, command, opts) {
  const r = await run(client, command, opts);
  const head = `$ ${command}\n`;
  if (r.isError || !r.text.startsWith(head)) {
    throw new Error(`run ${JSON.stringify(command)} failed: isError=${r.isError}\n${r.text}`);
  }
  return r.text.slice(head.length);
}

/** Raw POST /mcp with fetch: {status, headers, body, json}. */
export async function post(tb, message, { headers = {}, accept = 'application/json, text/event-stream',
  raw, signal, method = 'POST' } = {}) {
  const h = { 'Content-Type': 'application/json', Accept: accept, ...headers };
  for (const k of Object.keys(h)) if (h[k] === null) delete h[k];
  const init = { method, headers: h, signal: signal ?? AbortSignal.timeout(120000) };
  if (method !== 'GET' && method !== 'DELETE' && method !== 'HEAD') {
    init.body = raw !== undefined ? raw : JSON.stringify(message);
  }
  const r = await fetch(tb.url, init);
  const body = await r.text();
  let json;
  try {
    json = JSON.parse(body);
  } catch { /* not JSON */ }
  return { status: r.status, headers: r.headers, body, json };
}

/** The JSON-RPC messages of an SSE body ("event: message\ndata: ...\n\n"). */
export function sseMessages(body) {
  const out = [];
  for (const block of body.split('\n\n')) {
    const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
    if (data.length) out.push(JSON.parse(data.join('\n')));
  }
  return out;
}

/** The id of the container a command runs in, read from inside it. */
export async function containerIdFromInside(client) {
  const out = await runOk(client, "grep -o 'containers/[0-9a-f]\\{64\\}' /proc/self/mountinfo | head -n 1 | cut -d/ -f2");
  return out.trim();
}

/** Every process command line in the chat's sandbox. */
export async function psArgs(client) {
  return runOk(client, 'ps -eo args');
}

let tidCounter = 0;
/** A JSON-RPC id no SDK client uses (they count from 0). */
export const tid = () => `raw-${process.pid}-${++tidCounter}`;

/** run through a raw POST with a unique string id: {text, isError}.
 *  For watching a chat while an SDK client of the same chat has a call
 *  open, without sharing its numeric request ids. */
export async function rawRun(tb, conv, user, command, timeout = 60) {
  const r = await post(tb, {
    jsonrpc: '2.0', id: tid(), method: 'tools/call',
    params: { name: 'run', arguments: { command, timeout } },
  }, { headers: { 'X-Conversation-Id': conv, 'X-User-Id': user }, accept: 'application/json' });
  if (!r.json?.result) throw new Error(`run ${command}: HTTP ${r.status} ${r.body}`);
  return { text: joinText(r.json.result), isError: r.json.result.isError === true };
}

/** ps -eo args in a chat's sandbox through rawRun. */
export async function rawPs(tb, conv, user) {
  const r = await rawRun(tb, conv, user, 'ps -eo args');
  if (r.isError) throw new Error(`ps failed: ${r.text}`);
  return r.text;
}

/** A size as hints/hints.c says it: "768 MiB", "1 GiB", "1.5 GiB". */
function sizePhrase(bytes) {
  for (const [unit, name] of [[1 << 30, 'GiB'], [1 << 20, 'MiB'], [1 << 10, 'KiB']]) {
    if (bytes >= unit) return bytes % unit === 0 ? `${bytes / unit} ${name}` : `${(bytes / unit).toFixed(1)} ${name}`;
  }
  return `${bytes} bytes`;
}

/** What talkback says of the memory of a sandbox made with memMiB of memory
 *  and swapMiB of swap allowed ("256 MiB of memory and no swap"): the swap
 *  it can really use is no more than this host has (its agent reads both). */
export function memoryPhrase(memMiB, swapMiB) {
  const m = /^SwapTotal:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'));
  const swap = Math.min(swapMiB * 1024 * 1024, Number(m[1]) * 1024);
  return swap > 0 ? `${memMiB} MiB of memory plus ${sizePhrase(swap)} of swap` : `${memMiB} MiB of memory and no swap`;
}

let httpCallId = 0;
/** One tools/call as a plain HTTP POST (Accept: application/json) to the
 *  MCP endpoint at url (".../mcp"), for tests of talkback started some other
 *  way than Talkback (Compose, behind the socket proxy): {text, isError}.
 *  headers: extra request headers (e.g. Authorization). */
export async function toolCallHttp(url, conv, name, args, { headers = {} } = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Conversation-Id': conv, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++httpCallId, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(180000),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`tools/call ${name}: HTTP ${r.status}: ${text}`);
  const j = JSON.parse(text);
  if (!j.result) throw new Error(`tools/call ${name}: no result: ${text}`);
  return { text: j.result.content.map((c) => c.text).join('\n\n'), isError: j.result.isError === true };
}

/** A v2 SDK client (@modelcontextprotocol/client) with LibreChat-style
 *  headers.  mode: { pin: '2026-07-28' } (the modern era only, no
 *  fallback), 'auto' (probe with server/discover, fall back to initialize)
 *  or 'legacy' (initialize, the v2 default). */
export async function connectV2(tb, { conv, user, headers = {}, mode = { pin: '2026-07-28' } } = {}) {
  const { Client: Client2, StreamableHTTPClientTransport: Transport2 } = await import('@modelcontextprotocol/client');
  const h = { ...headers };
  if (conv !== undefined) h['X-Conversation-Id'] = conv;
  if (user !== undefined) h['X-User-Id'] = user;
  const client = new Client2({ name: 'it-v2', version: '1' }, { versionNegotiation: { mode } });
  await client.connect(new Transport2(new URL(tb.url), { requestInit: { headers: h } }));
  return client;
}

/** The params._meta of a 2026-07-28 request. */
export const modernMeta = () => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'it-raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

/** Raw POST of a 2026-07-28 request: method, params (with _meta added)
 *  and the headers the revision requires (MCP-Protocol-Version,
 *  Mcp-Method, Mcp-Name for tools/call); `headers` adds or (null) removes. */
export function postModern(tb, method, params = {}, { id = tid(), headers = {}, ...opts } = {}) {
  const h = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method };
  if (method === 'tools/call' && typeof params.name === 'string') h['Mcp-Name'] = params.name;
  return post(tb, { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...modernMeta(), ...params._meta } } },
    { headers: { ...h, ...headers }, ...opts });
}
