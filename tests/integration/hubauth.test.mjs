// hubauth.test.mjs -- the hub lets only talkback's own parts act as
// talkback, over real sockets:
//   - a tcp:// hub with keys (talkback-keys): a peer with no key, a peer with
//     a key the hub does not know (made by another talkback-keys) and a peer
//     whose key is allowed only as a judge all say HELLO as sandbox; none
//     gets a request, no forged reply reaches a client, the judge key's
//     request to run a command is refused, and real calls (run, run_code
//     through the judge) still work through the real workers; with the
//     real sandbox manager stopped, a call ends with "no worker", still
//     never reaching the strangers
//   - a judge whose key is not yet in the allow list says so, and joins once
//     its certificate is copied into allowed/ (it dials again by itself)
//   - the gateway refuses a tcp:// hub without keys, and says how to make them
//   - hub_insecure runs a keyless tcp:// hub and says so loudly
//   - an ipc:// hub in a folder of mode 0777 is refused, by the gateway and
//     by a worker
// The strangers are build/hubpeer (tests/integration/hubpeer.c).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, BIN, withLogs, connect, call, run, runOk, waitFor, freePort, sleep, containersOf,
} from './harness.mjs';

const HUBPEER = path.join(BUILD, 'hubpeer');
const KEYS_BIN = path.join(BUILD, 'talkback-keys');
const FORGED = 'FORGED';

const work = fs.mkdtempSync('/tmp/talkback-it-hubauth-');
const keys = path.join(work, 'keys');
const otherKeys = path.join(work, 'other-keys');
execFileSync(KEYS_BIN, [keys]);
execFileSync(KEYS_BIN, [otherKeys]);
const hubPort = await freePort();
const tb = new Talkback({
  name: 'hubauth',
  judges: 1,
  env: { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${hubPort}`, TALKBACK_HUB_KEYS: keys },
});

/** A process whose output is collected: {child, out(), exited}. */
function spawnCollect(bin, args, env = {}) {
  const clean = { ...process.env };
  for (const k of Object.keys(clean)) if (k.startsWith('TALKBACK_')) delete clean[k];
  const child = spawn(bin, args, { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, out: () => out, exited };
}

/** Stop a spawnCollect process (SIGINT lets hubpeer print DONE). */
async function stop(p) {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGINT');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(t);
  return p.out();
}

const gatewayLog = () => fs.readFileSync(path.join(tb.dir, 'gateway.log'), 'utf8');

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
  fs.rmSync(work, { recursive: true, force: true });
});

test('talkback-keys writes the hub key, one certificate per kind, secrets 0600', () => {
  for (const f of ['hub.key', 'hub.key_secret', 'sandbox.key_secret', 'judge.key_secret', 'reaper.key_secret',
    'allowed/sandbox.key', 'allowed/judge.key', 'allowed/reaper.key']) {
    assert.ok(fs.existsSync(path.join(keys, f)), `${f} is missing`);
  }
  for (const f of ['hub.key_secret', 'sandbox.key_secret', 'judge.key_secret', 'reaper.key_secret']) {
    assert.equal(fs.statSync(path.join(keys, f)).mode & 0o777, 0o600, f);
  }
  assert.equal(fs.statSync(keys).mode & 0o777, 0o700);
  const judge = fs.readFileSync(path.join(keys, 'allowed/judge.key'), 'utf8');
  assert.match(judge, /kinds = "judge"/);
  assert.match(judge, /submit = "sandbox:put,sandbox:exec"/);
  assert.match(fs.readFileSync(path.join(keys, 'allowed/sandbox.key'), 'utf8'), /submit = ""/);
  // Run again: nothing is replaced.
  const before = fs.readFileSync(path.join(keys, 'judge.key_secret'), 'utf8');
  const out = execFileSync(KEYS_BIN, [keys], { encoding: 'utf8' });
  assert.match(out, /kept .*judge\.key_secret/);
  assert.equal(fs.readFileSync(path.join(keys, 'judge.key_secret'), 'utf8'), before);
});

test('strangers on a keyed tcp:// hub get no request and forge no reply', withLogs(tb, async () => {
  const hub = `tcp://127.0.0.1:${hubPort}`;
  const victim = tb.chat('victim');
  const intruderConv = tb.chat('intruder');
  const nokey = spawnCollect(HUBPEER, [hub, 'sandbox', '120']);
  // A sandbox key, but from another talkback-keys: not in this hub's allow list.
  const unknown = spawnCollect(HUBPEER, [hub, 'sandbox', '120',
    '--cert', path.join(otherKeys, 'sandbox.key_secret'), '--hub-key', path.join(keys, 'hub.key')]);
  const judgeKey = spawnCollect(HUBPEER, [hub, 'sandbox', '120',
    '--cert', path.join(keys, 'judge.key_secret'), '--hub-key', path.join(keys, 'hub.key'),
    '--submit', `sandbox:run:${intruderConv}:id`]);
  try {
    // The judge key connects (it is in the allow list) and is refused as sandbox.
    await waitFor(() => gatewayLog().includes('refused HELLO as sandbox from the key judge'),
      { timeoutMs: 15000, what: 'the hub to refuse the judge key as sandbox' });
    // Its own request to run a command in a chat is refused.
    await waitFor(() => judgeKey.out().includes('REPLY 4 [talkback: the hub refused this request'),
      { timeoutMs: 15000, what: 'the refusal of the judge key\'s run request' });

    // Real calls go through the real workers, several times, so a stranger
    // counted as a sandbox manager would have had its turn.
    const c = await connect(tb, { conv: victim, user: 'user-hubauth' });
    try {
      for (let i = 0; i < 4; i++) {
        const out = await runOk(c, 'id -u; echo secret-of-victim');
        assert.match(out, /secret-of-victim/);
        assert.ok(!out.includes(FORGED), out);
      }
      const r = await call(c, 'run_code', { language: 'python', code: 'print(6*7)\n', expected: '42\n' },
        { timeout: 180000 });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /^PASS/m);
      assert.ok(!r.text.includes(FORGED), r.text);

      // Without the real sandbox manager, a call finds no worker: the
      // strangers still saying HELLO as sandbox do not count.
      await tb.stopSandbox();
      const none = await run(c, 'echo after-stop', { callTimeout: 60000 });
      assert.equal(none.isError, true, none.text);
      assert.ok(!none.text.includes(FORGED), none.text);
      assert.match(none.text, /sandbox manager is not running/);
      tb.startSandbox();
      await tb.waitReady();
    } finally {
      await c.close();
    }
  } finally {
    const outs = [await stop(nokey), await stop(unknown), await stop(judgeKey)];
    for (const o of outs) {
      assert.match(o, /STARTED/);
      assert.ok(!/^REQUEST /m.test(o), `a stranger received a request:\n${o}`);
    }
  }
  // No stranger joined, and the intruder's chat got no sandbox.
  assert.ok(!/worker hubpeer-\d+ \(sandbox\) joined/.test(gatewayLog()), 'a stranger joined as sandbox');
  assert.deepEqual(await containersOf(intruderConv), []);
}));

test('a judge with a key not yet allowed says so, and joins once it is', withLogs(tb, async () => {
  const late = spawnCollect(BIN.judge, [], {
    TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${hubPort}`,
    TALKBACK_HUB_KEYS: keys,
    TALKBACK_HUB_CERT: path.join(otherKeys, 'judge.key_secret'),
  });
  const allowed = path.join(keys, 'allowed', 'late-judge.key');
  try {
    await waitFor(() => late.out().includes("refused this worker's key"),
      { timeoutMs: 15000, what: 'the judge to say its key was refused' });
    assert.ok(!gatewayLog().includes(`worker judge-${late.child.pid} (judge) joined`));
    fs.copyFileSync(path.join(otherKeys, 'allowed', 'judge.key'), allowed);
    await waitFor(() => gatewayLog().includes(`worker judge-${late.child.pid} (judge) joined`),
      { timeoutMs: 20000, what: 'the judge to join once its key is allowed' });
  } finally {
    await stop(late);
    fs.rmSync(allowed, { force: true });
  }
}));

test('the gateway refuses a tcp:// hub without keys', async () => {
  const port = await freePort();
  const empty = path.join(work, 'empty');
  fs.mkdirSync(empty, { mode: 0o700 });
  const g = spawnCollect(BIN.gateway, [], {
    TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${port}`,
    TALKBACK_HUB_KEYS: empty,
    TALKBACK_LISTEN: `127.0.0.1:${await freePort()}`,
  });
  const r = await Promise.race([g.exited, sleep(10000).then(() => ({ code: 'still running' }))]);
  await stop(g);
  assert.equal(r.code, 1, g.out());
  assert.match(g.out(), /needs keys/);
  assert.match(g.out(), /talkback-keys/);
  assert.match(g.out(), /hub_insecure/);
  // A worker without keys does not start either.
  const w = spawnCollect(BIN.judge, [], { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${port}`, TALKBACK_HUB_KEYS: empty });
  const wr = await Promise.race([w.exited, sleep(10000).then(() => ({ code: 'still running' }))]);
  await stop(w);
  assert.equal(wr.code, 1, w.out());
  assert.match(w.out(), /hub\.key/);
});

test('hub_insecure runs a keyless tcp:// hub, loudly', async () => {
  const port = await freePort();
  const loose = new Talkback({
    name: 'hubauth-insecure',
    env: { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${port}`, TALKBACK_HUB_INSECURE: '1',
      TALKBACK_HUB_KEYS: path.join(work, 'none') },
  });
  try {
    await loose.start();
    const log = fs.readFileSync(path.join(loose.dir, 'gateway.log'), 'utf8');
    assert.match(log, /HUB WITHOUT AUTHENTICATION/);
    const c = await connect(loose, { conv: loose.chat('insecure') });
    try {
      assert.match(await runOk(c, 'echo plain-hub'), /plain-hub/);
    } finally {
      await c.close();
    }
  } catch (e) {
    loose.failed = true;
    e.message += loose.logTail();
    throw e;
  } finally {
    await loose.cleanup();
  }
});

test('an ipc:// hub folder open to others is refused by the gateway and by a worker', async () => {
  const open = path.join(work, 'open');
  fs.mkdirSync(open);
  fs.chmodSync(open, 0o777);
  const env = { TALKBACK_HUB_ENDPOINT: `ipc://${open}/hub.ipc`, TALKBACK_LISTEN: `127.0.0.1:${await freePort()}` };
  for (const bin of [BIN.gateway, BIN.judge]) {
    const p = spawnCollect(bin, [], env);
    const r = await Promise.race([p.exited, sleep(10000).then(() => ({ code: 'still running' }))]);
    await stop(p);
    assert.equal(r.code, 1, `${bin}: ${p.out()}`);
    assert.match(p.out(), /is mode 0777: it must be 0700/);
  }
  assert.ok(!fs.existsSync(path.join(open, 'hub.ipc')), 'the gateway bound the hub anyway');
});
