// compose.test.mjs -- deploy/compose.yaml and deploy/Dockerfile, for real.
//
//   1. The compose file validates (`config`) and says what it must: every
//      talkback service non-root, read-only, no capabilities,
//      no-new-privileges, a tmpfs /tmp; only the sandbox manager and the
//      reaper share a network with the Docker socket proxy, and that network
//      and the hub's are internal; only the proxy mounts the Docker socket;
//      the sandbox network talkback-sandboxes is not declared.
//   2. The stack runs: builds talkback:latest (deploy/Dockerfile; Docker's
//      cache makes a rebuild quick), starts it under a project, networks and
//      port of its own, and checks that the gateway answers a run call, that
//      run_code (exec with stdin, through the proxy) passes, that every
//      talkback container runs as a non-root uid with a read-only root and
//      no capabilities, that the gateway cannot even resolve the proxy, and
//      that `down` then `up` keeps the chat's sandbox and its files.
//
// The proxy is the Docker guard from talkback:latest (deploy/docker-proxy).
//
// Needs `docker compose` or `docker-compose` (Debian: docker-compose);
// skipped without one.  TALKBACK_SKIP_COMPOSE_UP=1 skips part 2.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort, toolCallHttp } from './harness.mjs';

const execFileP = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const COMPOSE_FILE = path.join(ROOT, 'deploy', 'compose.yaml');
const tag = crypto.randomBytes(3).toString('hex');
const project = `tbct-${tag}`;
const conv = `ct-${tag}`;
const TALKBACK_SERVICES = ['gateway', 'sandbox', 'judge', 'reaper'];

// The MCP endpoint's bearer token (compose.yaml requires TALKBACK_TOKEN).
const TOKEN = `it-compose-${process.pid}-0123456789abcdef`;
let compose = null; // [cmd, ...prefixArgs]
let composeEnv;
let port;
let up = false;

async function run(cmd, args, opts = {}) {
  const { stdout } = await execFileP(cmd, args, { maxBuffer: 64 << 20, ...opts });
  return stdout;
}

const dc = (...args) => run(compose[0], [...compose.slice(1), '-p', project, '-f', COMPOSE_FILE, ...args],
  { env: composeEnv, timeout: 300000 });

/** The resolved compose file as an object. */
async function config() {
  if (compose[0] === 'docker') return JSON.parse(await dc('config', '--format', 'json'));
  // docker-compose v1 prints YAML only; its own Python has PyYAML.
  const yaml = await dc('config');
  const py = 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))';
  return JSON.parse(await new Promise((resolve, reject) => {
    const child = execFile('python3', ['-c', py], (err, out) => (err ? reject(err) : resolve(out)));
    child.stdin.end(yaml);
  }));
}

async function imageExists(ref) {
  try {
    await run('docker', ['image', 'inspect', ref]);
    return true;
  } catch {
    return false;
  }
}

before(async () => {
  for (const c of [['docker', 'compose'], ['docker-compose']]) {
    try {
      await run(c[0], [...c.slice(1), 'version']);
      compose = c;
      break;
    } catch { /* try the next */ }
  }
  port = await freePort();
  composeEnv = {
    ...process.env,
    TALKBACK_PUBLISH: `127.0.0.1:${port}`,
    TALKBACK_TOKEN: TOKEN,
    TALKBACK_NET_PREFIX: project,
  };
});

after(async () => {
  if (compose && up) await dc('down', '-v', '--remove-orphans').catch(() => {});
  const ids = (await run('docker', ['ps', '-aq', '--filter', `label=talkback.conversation=${conv}`]).catch(() => ''))
    .split('\n').filter(Boolean);
  // A spare the chat claimed (warm pool) carries its name, not its label.
  ids.push(...(await run('docker', ['ps', '-aq', '--filter', 'label=talkback.spare', '--filter',
    `name=^talkback-${conv}-`]).catch(() => '')).split('\n').filter(Boolean));
  if (ids.length) await run('docker', ['rm', '-f', ...ids]).catch(() => {});
});

test('compose: the file validates and says what the deployment needs', async (t) => {
  if (!compose) {
    t.skip('no docker compose / docker-compose here (Debian package docker-compose)');
    return;
  }
  const cfg = await config();
  const svc = cfg.services;
  // ctl (talkbackctl) is in profile "tools": docker-compose 1.29 lists it, Compose v2 only with
  // --profile tools.
  assert.deepEqual(Object.keys(svc).filter((n) => n !== 'ctl').sort(),
    ['docker-proxy', 'gateway', 'judge', 'keys', 'reaper', 'sandbox']);
  if (svc.ctl) {
    assert.deepEqual(svc.ctl.entrypoint, ['talkbackctl']);
    assert.deepEqual(svc.ctl.profiles, ['tools']);
  }
  const nets = (s) => (Array.isArray(svc[s].networks) ? svc[s].networks : Object.keys(svc[s].networks || {}));
  for (const name of [...TALKBACK_SERVICES, 'keys', ...(svc.ctl ? ['ctl'] : [])]) {
    const s = svc[name];
    assert.equal(s.user, 'talkback', `${name}: user`);
    assert.equal(s.read_only, true, `${name}: read_only`);
    assert.deepEqual(s.cap_drop, ['ALL'], `${name}: cap_drop`);
    assert.ok((s.security_opt || []).includes('no-new-privileges:true'), `${name}: no-new-privileges`);
    assert.ok((s.tmpfs || []).some((m) => m.startsWith('/tmp')), `${name}: tmpfs /tmp`);
    assert.ok(!JSON.stringify(s.volumes || []).includes('docker.sock'), `${name} must not mount the Docker socket`);
    assert.ok(!nets(name).includes('talkback-sandboxes'), `${name} is not on the sandbox network`);
  }
  // Who reaches the proxy.
  for (const name of Object.keys(svc)) {
    const onApi = nets(name).includes('docker-api');
    assert.equal(onApi, ['docker-proxy', 'sandbox', 'reaper'].includes(name), `${name} on docker-api: ${onApi}`);
  }
  assert.ok(JSON.stringify(svc['docker-proxy'].volumes).includes('/var/run/docker.sock'));
  assert.equal(svc.sandbox.environment.TALKBACK_DOCKER_HOST, 'tcp://docker-proxy:2375');
  assert.equal(svc.reaper.environment.TALKBACK_DOCKER_HOST, 'tcp://docker-proxy:2375');
  assert.equal(svc.gateway.environment.TALKBACK_DOCKER_HOST, undefined);
  assert.equal(svc.gateway.environment.TALKBACK_HUB_BIND, 'tcp://0.0.0.0:5555');
  // The hub's keys: made once by the keys service, read-only for the rest.
  assert.deepEqual(svc.keys.command, ['talkback-keys', '/etc/talkback/keys']);
  for (const name of TALKBACK_SERVICES) {
    assert.equal(svc[name].environment.TALKBACK_HUB_KEYS, '/etc/talkback/keys', `${name}: TALKBACK_HUB_KEYS`);
    assert.ok(JSON.stringify(svc[name].volumes).includes('/etc/talkback/keys:ro'), `${name}: the keys, read-only`);
    assert.equal(svc[name].depends_on.keys.condition, 'service_completed_successfully', `${name}: after keys`);
  }
  assert.equal(svc.gateway.environment.TALKBACK_AUTH_TOKEN, TOKEN);
  assert.equal(svc.gateway.environment.TALKBACK_ALLOWED_HOSTS, 'gateway');
  assert.equal(cfg.networks['docker-api'].internal, true);
  assert.equal(cfg.networks.hub.internal, true);
  assert.ok(!Object.keys(cfg.networks).some((n) => n.includes('sandboxes')), 'talkback-sandboxes is not declared');
  assert.ok(!Object.values(cfg.networks).some((n) => String(n.name || '').includes('sandboxes')));
});

test('compose: the stack runs, hardened, and down/up keeps a chat\'s sandbox', { timeout: 600000 }, async (t) => {
  if (!compose) {
    t.skip('no docker compose / docker-compose here (Debian package docker-compose)');
    return;
  }
  if (process.env.TALKBACK_SKIP_COMPOSE_UP === '1') {
    t.skip('TALKBACK_SKIP_COMPOSE_UP=1');
    return;
  }
  assert.ok(await imageExists('talkback-sandbox:latest'), 'talkback-sandbox:latest is missing (deploy/setup builds it)');

  // The talkback image (cached layers make this quick after the first time).
  await run('docker', ['build', '-q', '-f', 'deploy/Dockerfile', '-t', 'talkback:latest', '.'],
    { cwd: ROOT, timeout: 900000 });

  up = true;
  await dc('up', '-d');
  const url = `http://127.0.0.1:${port}`;
  const healthy = async () => {
    const end = Date.now() + 60000;
    for (;;) {
      try {
        const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status === 200) return;
      } catch { /* not yet */ }
      if (Date.now() > end) throw new Error(`the gateway never answered /healthz 200\n${await dc('logs', '--tail', '30').catch(() => '')}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  };
  await healthy();

  const callTool = (name, args) => toolCallHttp(`${url}/mcp`, conv, name, args,
    { headers: { Authorization: `Bearer ${TOKEN}` } });
  await assert.rejects(toolCallHttp(`${url}/mcp`, conv, 'run', { command: 'true' }), /HTTP 401/);

  assert.equal((await callTool('run', { command: 'echo hi' })).text, '$ echo hi\nhi\n');
  const rc = await callTool('run_code', {
    language: 'python', code: 'print(int(input()) * 2)\n', input: '21\n', expected: '42\n',
  });
  assert.equal(rc.isError, false, rc.text);
  assert.match(rc.text, /PASS/, rc.text);

  // Every talkback container: non-root, read-only root, no capabilities.
  for (const s of TALKBACK_SERVICES) {
    const cid = (await dc('ps', '-q', s)).trim();
    assert.ok(cid, `${s} is running`);
    const uid = (await run('docker', ['exec', cid, 'id', '-u'])).trim();
    assert.notEqual(uid, '0', `${s} runs as uid ${uid}`);
    await assert.rejects(run('docker', ['exec', cid, 'touch', '/x']), `${s}: / is read-only`);
    const caps = await run('docker', ['exec', cid, 'grep', '^CapEff', '/proc/self/status']);
    assert.match(caps, /CapEff:\s+0+\s*$/, `${s}: ${caps}`);
  }
  // The gateway and the judge cannot reach the Docker proxy at all.
  for (const s of ['gateway', 'judge']) {
    const cid = (await dc('ps', '-q', s)).trim();
    await assert.rejects(run('docker', ['exec', cid, 'bash', '-c', 'exec 3<>/dev/tcp/docker-proxy/2375']),
      `${s} must not reach docker-proxy`);
    await assert.rejects(run('docker', ['exec', cid, 'test', '-e', '/var/run/docker.sock']));
  }

  // down + up: the chat's sandbox and its files survive.
  assert.equal((await callTool('write_file', { path: 'kept.txt', content: 'still here\n' })).isError, false);
  await dc('down');
  await dc('up', '-d');
  await healthy();
  assert.equal((await callTool('run', { command: 'cat kept.txt' })).text, '$ cat kept.txt\nstill here\n');
});
