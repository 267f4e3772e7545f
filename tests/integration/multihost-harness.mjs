// multihost-harness.mjs -- talkback on several Docker hosts, for the
// multi-host integration tests and the benchmark.
//
// A Cluster is one private talkback installation spread over Docker hosts
// on this machine: one gateway whose hub listens on tcp://127.0.0.1:PORT
// with keys (talkback-keys, as a real multi-host install has them), and per
// host a sandbox manager and a reaper, each with that host's Docker socket
// (`docker_host`), its own `host_name`, `state_dir` and sandbox network;
// plus judges.  The machine's dockerd is one host; tests/tools/dockerd2
// starts the other (a second dockerd in a network namespace of its own).
//
// On the machine's dockerd, shared with every other test file, a host gets
// a sandbox network of its own (made by its manager, removed at cleanup,
// with deploy/egress-rule installed for it under chains of its own): the
// sandbox manager counts running sandboxes per network, so other files'
// sandboxes do not weigh on placement here.  The reapers only look at this
// cluster's conversations (`reaper_prefix`).  Cleanup removes every
// container of the cluster's prefix on every host, tombstones included.
//
// Cluster has `url` and `chat()` like harness.mjs's Talkback, so connect(),
// call(), run(), runOk() and withLogs() from there work with it.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import { BUILD, BIN, ROOT, Proc, freePort, randomTag, waitFor, poolScope } from './harness.mjs';

const execFileP = promisify(execFile);

export const KEYS_BIN = path.join(BUILD, 'talkback-keys');
export const REAPER_BIN = path.join(BUILD, 'talkback-reaper');
export const CTL_BIN = path.join(BUILD, 'talkbackctl');
export const DOCKERD2 = path.join(ROOT, 'tests', 'tools', 'dockerd2');
/** The second dockerd's network namespace (tests/tools/dockerd2). */
export const DOCKERD2_NS = process.env.TALKBACK_DOCKERD2_NAME || 'talkback-dockerd2';

/** The machine's dockerd's socket, as docker_host says it. */
export const LOCAL_DOCKER = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';

/** Start the second dockerd (idempotent; it may already run, as tests/run
 *  starts it): {host, startedHere}.  startedHere: it was not running before,
 *  so whoever asked should stop it again. */
export async function startDockerd2() {
  const running = await execFileP(DOCKERD2, ['status']).then(() => true, () => false);
  const { stdout } = await execFileP(DOCKERD2, ['start'], { maxBuffer: 1 << 20, timeout: 900000 });
  const host = stdout.trim().split('\n').pop();
  if (!host.startsWith('unix://')) throw new Error(`dockerd2 start printed ${JSON.stringify(stdout)}`);
  return { host, startedHere: !running };
}

export async function stopDockerd2() {
  await execFileP(DOCKERD2, ['stop'], { timeout: 120000 });
}

/** The docker CLI against one daemon; resolves with stdout. */
export async function dockerAt(dockerHost, ...args) {
  const { stdout } = await execFileP('docker', ['-H', dockerHost, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

/** The pids of the workers of kind that joined, in a gateway log
 *  ("worker judge-12 (judge) joined", "... (sandbox) on beta joined"),
 *  only those of pid when it is not null. */
function joins(log, kind, pid) {
  const re = new RegExp(`worker ${kind}-(\\d+) \\(${kind}\\)(?: on \\S+)? joined`, 'g');
  return [...log.matchAll(re)].map((m) => Number(m[1])).filter((p) => pid === null || p === pid);
}

export class Cluster {
  /** hosts: [{name, dockerHost, maxRunning}] (dockerHost: the socket,
   *  default the machine's dockerd); judges: how many judge workers;
   *  env: TALKBACK_* for every process; gatewayEnv: the gateway's only. */
  constructor({ name = 'mh', hosts, judges = 1, env = {}, gatewayEnv = {} }) {
    this.tag = randomTag();
    this.name = name;
    this.dir = fs.mkdtempSync(`/tmp/talkback-it-${this.tag}-`);
    fs.chmodSync(this.dir, 0o700);
    this.keys = path.join(this.dir, 'keys');
    execFileSync(KEYS_BIN, [this.keys], { stdio: 'ignore' });
    this.prefix = `it-${this.tag}-`;
    this.baseEnv = env;
    this.gatewayEnv = gatewayEnv;
    this.judgeCount = judges;
    this.failed = false;
    this.nextChat = 0;
    this.hosts = hosts.map((h) => ({
      name: h.name,
      dockerHost: h.dockerHost || LOCAL_DOCKER,
      local: !h.dockerHost || h.dockerHost === LOCAL_DOCKER,
      maxRunning: h.maxRunning ?? 0,
      stateDir: path.join(this.dir, `state-${h.name}`),
      network: null,
      chain: null,
    }));
    for (const h of this.hosts) {
      // The machine's dockerd is shared: a network of this cluster's own there.
      h.network = h.local ? `talkback-it-${this.tag}-${h.name}` : 'talkback-sandboxes';
      h.chain = h.local ? `TBIT-${this.tag}` : null;
    }
  }

  get url() { return `http://127.0.0.1:${this.port}/mcp`; }
  get healthUrl() { return `http://127.0.0.1:${this.port}/healthz`; }

  /** A fresh conversation id under this cluster's prefix. */
  chat(label = 'chat') { return `${this.prefix}${label}-${this.nextChat++}`; }

  host(name) {
    const h = this.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no host ${name} in this cluster`);
    return h;
  }

  /** The environment of a process, with the hub and its keys. */
  env(extra = {}) {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('TALKBACK_') || k === 'DOCKER_HOST') delete env[k];
    return {
      ...env,
      TALKBACK_LISTEN: `127.0.0.1:${this.port}`,
      TALKBACK_HUB_ENDPOINT: this.hub,
      TALKBACK_HUB_KEYS: this.keys,
      TALKBACK_HUB_HOSTS_FILE: path.join(this.dir, 'hub-hosts'),
      TALKBACK_MAX_RUNNING_PER_USER: '0',
      TALKBACK_LOG_LEVEL: 'debug',
      ...(process.env.TALKBACK_TEST_IMAGE ? { TALKBACK_IMAGE: process.env.TALKBACK_TEST_IMAGE } : {}),
      ...this.baseEnv,
      ...extra,
    };
  }

  /** What a host's manager and reaper share: its Docker, name, state, network. */
  hostEnv(h, extra = {}) {
    return this.env({
      TALKBACK_HOST_NAME: h.name,
      TALKBACK_DOCKER_HOST: h.dockerHost,
      TALKBACK_STATE_DIR: h.stateDir,
      TALKBACK_NETWORK: h.network,
      // A second dockerd's network has no egress rule of this test's.
      ...(h.chain ? {} : { TALKBACK_EGRESS_CHECK: 'off' }),
      TALKBACK_MAX_RUNNING: String(h.maxRunning),
      TALKBACK_REAPER_PREFIX: this.prefix,
      ...extra,
    });
  }

  log(name) { return path.join(this.dir, `${name}.log`); }
  gatewayLog() { return fs.existsSync(this.log('gateway')) ? fs.readFileSync(this.log('gateway'), 'utf8') : ''; }

  /** Start the gateway, every host's manager and reaper, and the judges;
   *  resolves once every one of them has joined the hub. */
  async start() {
    this.port = await freePort();
    this.hub = `tcp://127.0.0.1:${await freePort()}`;
    this.gateway = new Proc('gateway', BIN.gateway, [], this.env(this.gatewayEnv), this.log('gateway'));
    for (const h of this.hosts) {
      h.manager = new Proc(`sandbox-${h.name}`, BIN.sandbox, [], this.hostEnv(h), this.log(`sandbox-${h.name}`));
      h.reaper = new Proc(`reaper-${h.name}`, REAPER_BIN, [], this.hostEnv(h), this.log(`reaper-${h.name}`));
    }
    this.judges = [];
    for (let i = 0; i < this.judgeCount; i++) {
      this.judges.push(new Proc(`judge-${i}`, BIN.judge, [], this.env(), this.log(`judge-${i}`)));
    }
    await this.startGateway();
    await Promise.all(this.hosts.map((h) => this.startManager(h.name)));
    await this.egress();
    await Promise.all(this.hosts.map((h) => this.startReaper(h.name)));
    await Promise.all(this.judges.map((j) => this.startProc(j, 'judge')));
    return this;
  }

  /** Start p and wait until the gateway's log says it joined as kind
   *  ("worker sandbox-PID (sandbox) on alpha joined"). */
  async startProc(p, kind, extraEnv = {}) {
    const seenBefore = joins(this.gatewayLog(), kind, null);
    p.start(extraEnv);
    const pid = p.child.pid;
    const before = seenBefore.filter((x) => x === pid).length;
    try {
      await waitFor(() => {
        if (!p.running) throw new Error(`${p.name} exited`);
        return joins(this.gatewayLog(), kind, pid).length > before;
      }, { timeoutMs: 30000, what: `worker ${kind}-${pid} to join in ${this.log('gateway')}` });
    } catch (e) {
      this.failed = true;
      e.message += this.logTail();
      throw e;
    }
  }

  async startManager(name) { await this.startProc(this.host(name).manager, 'sandbox'); }
  async stopManager(name) { return this.host(name).manager.stop(); }
  async killManager(name) { return this.host(name).manager.kill9(); }
  async startReaper(name) { await this.startProc(this.host(name).reaper, 'reaper'); }
  async killReaper(name) { return this.host(name).reaper.kill9(); }

  /** The egress rule for the networks this cluster made on the machine's
   *  dockerd (their managers have made them by now). */
  async egress() {
    for (const h of this.hosts.filter((x) => x.chain)) {
      await execFileP(path.join(ROOT, 'deploy', 'egress-rule'),
        ['--network', h.network, '--chain', h.chain, '--wait', '30']);
    }
  }

  /** Start the gateway and wait until /healthz answers at all. */
  async startGateway(extraEnv = {}) {
    this.gateway.start(extraEnv);
    await waitFor(async () => {
      if (!this.gateway.running) throw new Error(`gateway exited${this.logTail()}`);
      return (await this.health()) !== 0;
    }, { timeoutMs: 15000, what: 'the gateway to answer /healthz' });
  }

  /** Stop the gateway and start it again; resolves when every manager has
   *  joined the new hub (the workers dial again by themselves). */
  async restartGateway(extraEnv = {}) {
    await this.gateway.stop();
    const mark = this.gatewayLog().length;
    await this.startGateway(extraEnv);
    const pids = this.hosts.filter((h) => h.manager.running).map((h) => h.manager.child.pid);
    await waitFor(() => {
      const log = this.gatewayLog().slice(mark);
      return pids.every((pid) => joins(log, 'sandbox', pid).length > 0);
    }, { timeoutMs: 30000, what: 'every sandbox manager to join the restarted hub' });
  }

  async health() {
    try {
      const r = await fetch(this.healthUrl, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 0;
    }
  }

  /** The chats' containers on host h: [{id, conv}], by their
   *  talkback.conversation label or, for a spare a chat claimed (no such
   *  label), by its name "talkback-<conv>-<16 hex>". */
  async chatsAt(h) {
    const out = await dockerAt(h.dockerHost, 'ps', '-a', '--no-trunc', '--filter', 'label=talkback.conversation',
      '--format', '{{.ID}} {{.Label "talkback.conversation"}}').catch(() => '');
    const chats = out.split('\n').filter(Boolean).map((l) => ({ id: l.split(' ')[0], conv: l.slice(l.indexOf(' ') + 1) }));
    const claimed = await dockerAt(h.dockerHost, 'ps', '-a', '--no-trunc', '--filter', 'label=talkback.spare',
      '--format', '{{.ID}} {{.Names}}').catch(() => '');
    for (const l of claimed.split('\n').filter(Boolean)) {
      const [id, name] = l.split(' ');
      if (name && !name.startsWith('talkback-spare-') && /^talkback-.+-[0-9a-f]{16}$/.test(name))
        chats.push({ id, conv: name.slice('talkback-'.length, -17) });
    }
    return chats;
  }

  /** The hosts whose Docker holds a container of conversation conv. */
  async whereIs(conv) {
    const out = [];
    for (const h of this.hosts)
      for (const c of await this.chatsAt(h)) if (c.conv === conv) out.push(h.name);
    return out;
  }

  /** {host: number of this cluster's containers there}. */
  async countByHost() {
    const counts = {};
    for (const h of this.hosts)
      counts[h.name] = (await this.chatsAt(h)).filter((c) => c.conv.startsWith(this.prefix)).length;
    return counts;
  }

  /** talkbackctl with this cluster's config: {code, stdout, stderr}. */
  async ctl(...args) {
    try {
      const { stdout, stderr } = await execFileP(CTL_BIN, args, { env: this.env(), timeout: 60000 });
      return { code: 0, stdout, stderr };
    } catch (e) {
      if (e.code === 'ENOENT') throw new Error(`${CTL_BIN} is missing: build talkback first`);
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(e) };
    }
  }

  /** The last lines of every log, for failure messages. */
  logTail(lines = 40) {
    let s = '';
    for (const f of fs.readdirSync(this.dir).filter((n) => n.endsWith('.log')).sort()) {
      const all = fs.readFileSync(path.join(this.dir, f), 'utf8').split('\n');
      s += `\n---- ${path.join(this.dir, f)} (last ${lines} lines) ----\n${all.slice(-lines).join('\n')}`;
    }
    return s;
  }

  /** Stop everything; remove this cluster's containers, its networks on the
   *  machine's dockerd and their egress chains; keep logs only after a failure. */
  async cleanup() {
    const procs = [this.gateway, ...this.judges ?? []];
    for (const h of this.hosts) procs.push(h.manager, h.reaper);
    await Promise.all(procs.map((p) => p?.stop()));
    for (const h of this.hosts) {
      // Sandboxes, and the tombstones of removed ones (talkbackctl rm).
      const ids = (await this.chatsAt(h)).filter((c) => c.conv.startsWith(this.prefix)).map((c) => c.id);
      // The spares of this host's manager nobody claimed.
      const spares = await dockerAt(h.dockerHost, 'ps', '-aq', '--no-trunc', '--filter',
        `label=talkback.pool=${poolScope(h)}`).catch(() => '');
      ids.push(...spares.split('\n').filter(Boolean));
      for (const label of ['talkback.tombstone']) {
        const out = await dockerAt(h.dockerHost, 'ps', '-a', '--no-trunc', '--filter', `label=${label}`,
          '--format', `{{.ID}} {{.Label "${label}"}}`).catch(() => '');
        for (const l of out.split('\n')) if (l.split(' ')[1]?.startsWith(this.prefix)) ids.push(l.split(' ')[0]);
      }
      if (ids.length) await dockerAt(h.dockerHost, 'rm', '-f', '-v', ...ids).catch(() => {});
      if (h.chain) {
        await execFileP(path.join(ROOT, 'deploy', 'egress-rule'), ['--remove', '--chain', h.chain]).catch(() => {});
        await dockerAt(h.dockerHost, 'network', 'rm', h.network).catch(() => {});
      }
    }
    if (this.failed) {
      process.stderr.write(`talkback logs kept in ${this.dir}\n`);
    } else {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
