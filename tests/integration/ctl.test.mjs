// ctl.test.mjs -- talkbackctl against a real gateway, sandbox manager and
// dockerd:
//   - hosts: the manager's host_name with its version, load, caps and
//     workers, as a table and as JSON (answered by the hub itself)
//   - sandboxes [--host H]: a chat made through MCP is listed with its user,
//     host and state
//   - drain / undrain: the host says draining in hosts and in /metrics, and
//     stops saying it
//   - stop / rm of one chat's sandbox: Docker shows it stopped, then gone
//   - a host with no manager, a hub that is not there, and usage errors end
//     with a clear sentence and a non-zero status
//   - on a tcp:// hub with keys: the `ctl` certificate talkback-keys makes
//     works; a judge's key is refused the same requests; a ctl key the hub
//     does not know is refused at the handshake

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, withLogs, connect, runOk, waitFor, freePort, docker, containersOf,
} from './harness.mjs';

const CTL = path.join(BUILD, 'talkbackctl');
const KEYS_BIN = path.join(BUILD, 'talkback-keys');
const HOST = `it-ctl-${process.pid}`;
const tb = new Talkback({ name: 'ctl', sandboxEnv: { TALKBACK_HOST_NAME: HOST } });

const work = fs.mkdtempSync('/tmp/talkback-it-ctl-');
const keys = path.join(work, 'keys');
const otherKeys = path.join(work, 'other-keys');
execFileSync(KEYS_BIN, [keys]);
execFileSync(KEYS_BIN, [otherKeys]);
const hubPort = await freePort();
const keyed = new Talkback({
  name: 'ctl-keys',
  env: { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${hubPort}`, TALKBACK_HUB_KEYS: keys },
  sandboxEnv: { TALKBACK_HOST_NAME: `${HOST}-keyed` },
});

before(async () => { await Promise.all([tb.start(), keyed.start()]); });
after(async () => {
  await Promise.all([tb.cleanup(), keyed.cleanup()]);
  fs.rmSync(work, { recursive: true, force: true });
});

/** Run talkbackctl with the hub of t (or env's): {code, stdout, stderr}. */
function ctl(args, { t = tb, env = {} } = {}) {
  const clean = { ...process.env };
  for (const k of Object.keys(clean)) if (k.startsWith('TALKBACK_')) delete clean[k];
  return new Promise((resolve) => {
    execFile(CTL, args, {
      env: { ...clean, TALKBACK_HUB_ENDPOINT: t.baseEnv.TALKBACK_HUB_ENDPOINT ?? t.hub, ...env },
      timeout: 60000,
    },
      (err, stdout, stderr) => resolve({ code: err ? (err.code ?? -1) : 0, stdout, stderr }));
  });
}

async function ctlJson(args, opts) {
  const r = await ctl(['--json', ...args], opts);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function myHost() {
  const hosts = await ctlJson(['hosts']);
  return hosts.find((h) => h.host === HOST);
}

test('hosts: the manager\'s host, its load, caps and workers', withLogs(tb, async () => {
  const h = await waitFor(myHost, { what: `host ${HOST} in talkbackctl hosts` });
  assert.equal(typeof h.version, 'string');
  assert.ok(h.version.length > 0);
  assert.equal(typeof h.running, 'number');
  assert.equal(typeof h.kept, 'number');
  assert.equal(typeof h.mem_free_kb, 'number');
  assert.equal(h.draining, false);
  assert.match(h.workers, /(^|,)sandbox:1(,|$)/);
  const r = await ctl(['hosts']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^HOST +VERSION +RUNNING +KEPT +SPARES +MEM FREE +DISK FREE +DRAINING +WORKERS$/);
  assert.ok(lines.some((l) => l.startsWith(`${HOST} `) && / no +\S*sandbox:1/.test(l)), r.stdout);
}));

test('sandboxes lists a chat with its user, host and state; stop and rm act on it', withLogs(tb, async () => {
  const conv = tb.chat('listed');
  const c = await connect(tb, { conv, user: 'user-ctl' });
  try {
    await runOk(c, 'echo kept > /work/f');
  } finally {
    await c.close();
  }
  for (const args of [['sandboxes', '--host', HOST], ['sandboxes']]) {
    const rows = await ctlJson(args);
    const row = rows.find((x) => x.conversation === conv);
    assert.ok(row, `${conv} not in ${args.join(' ')}: ${JSON.stringify(rows).slice(0, 2000)}`);
    assert.equal(row.user, 'user-ctl');
    assert.equal(row.host, HOST);
    assert.equal(row.state, 'running');
    assert.equal(typeof row.idle_seconds, 'number');
  }
  const table = await ctl(['sandboxes', '--host', HOST]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^CONVERSATION +USER +HOST +STATE +IDLE +DISK\n/);
  assert.ok(table.stdout.split('\n').some((l) => l.startsWith(`${conv} `) && l.includes(' user-ctl ')),
    table.stdout);

  const [box] = await containersOf(conv);
  let r = await ctl(['stop', conv]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await docker('inspect', '-f', '{{.State.Running}}', box.id)).trim(), 'false');
  r = await ctl(['rm', conv]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /files/);
  assert.deepEqual(await containersOf(conv), []);
}));

test('drain and undrain: hosts and /metrics say so', withLogs(tb, async () => {
  const metric = async () => {
    const text = await (await fetch(`http://127.0.0.1:${tb.port}/metrics`)).text();
    return Number(text.match(/^talkback_hosts_draining (\d+)$/m)[1]);
  };
  try {
    let r = await ctl(['drain', HOST]);
    assert.equal(r.code, 0, r.stderr);
    await waitFor(async () => (await myHost())?.draining === true, { what: `${HOST} draining` });
    assert.equal(await metric(), 1);
    r = await ctl(['hosts']);
    assert.ok(r.stdout.split('\n').some((l) => l.startsWith(`${HOST} `) && / yes /.test(l)), r.stdout);
  } finally {
    const r = await ctl(['undrain', HOST]);
    assert.equal(r.code, 0, r.stderr);
  }
  await waitFor(async () => (await myHost())?.draining === false, { what: `${HOST} not draining` });
  assert.equal(await metric(), 0);
}));

test('an unreachable host or hub, and usage errors, say so and fail', withLogs(tb, async () => {
  let r = await ctl(['sandboxes', '--host', `${HOST}-nowhere`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`host ${HOST}-nowhere is not reachable`));
  assert.equal(r.stdout, '');
  r = await ctl(['drain', `${HOST}-nowhere`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is not reachable/);
  r = await ctl(['hosts'], { env: { TALKBACK_HUB_ENDPOINT: `ipc://${tb.dir}/none.ipc` } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no hub at ipc:\/\/.*none\.ipc/);
  r = await ctl(['hosts'], { env: { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${await freePort()}`,
    TALKBACK_HUB_INSECURE: '1' } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is not reachable/);
  r = await ctl(['forget', `${HOST}-nowhere`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`host ${HOST}-nowhere is not among the hosts the hub knows`));
  for (const bad of [['drain'], ['forget'], ['forget', 'a', 'b'], ['hosts', 'extra'], ['stop', 'a', 'b'], ['frobnicate'], []]) {
    r = await ctl(bad);
    assert.equal(r.code, 2, `${bad.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /usage: talkbackctl/);
  }
}));

test('on a keyed tcp:// hub: the ctl key works, a judge key and a stranger\'s ctl key do not',
  withLogs(keyed, async () => {
    const allowed = fs.readFileSync(path.join(keys, 'allowed/ctl.key'), 'utf8');
    assert.match(allowed, /kinds = "ctl"/);
    assert.match(allowed, /submit = "sandbox:locate,sandbox:list,sandbox:drain,sandbox:undrain,sandbox:stop,sandbox:rm,hub:hosts,hub:forget_host"/);
    assert.equal(fs.statSync(path.join(keys, 'ctl.key_secret')).mode & 0o777, 0o600);
    const env = { TALKBACK_HUB_KEYS: keys };
    const hosts = await waitFor(async () => {
      const r = await ctl(['--json', 'hosts'], { t: keyed, env });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout).find((h) => h.host === `${HOST}-keyed`);
    }, { what: 'the keyed host in talkbackctl hosts' });
    assert.equal(hosts.draining, false);
    let r = await ctl(['sandboxes', '--host', `${HOST}-keyed`], { t: keyed, env });
    assert.equal(r.code, 0, r.stderr);
    // forget: the hub drops a host it remembers, once.
    r = await ctl(['forget', `${HOST}-keyed`], { t: keyed, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Forgot host ${HOST}-keyed`));
    r = await ctl(['forget', `${HOST}-keyed`], { t: keyed, env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /is not among the hosts the hub knows/);

    r = await ctl(['hosts'], { t: keyed, env: { ...env, TALKBACK_HUB_CERT: path.join(keys, 'judge.key_secret') } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the hub refused this request/);
    r = await ctl(['drain', `${HOST}-keyed`], { t: keyed, env: { ...env, TALKBACK_HUB_CERT: path.join(keys, 'judge.key_secret') } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the hub refused this request/);
    r = await ctl(['hosts'], { t: keyed, env: { ...env, TALKBACK_HUB_CERT: path.join(otherKeys, 'ctl.key_secret') } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused talkbackctl's key/);
  }));
