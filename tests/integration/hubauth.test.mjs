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
//   - keys bound to a host: a sandbox key made for host2 that says HELLO for
//     this talkback's host (vm) is refused and gets none of a vm chat's
//     runs; a reaper key made for host2 cannot send a request naming vm,
//     and one naming no host is served on host2 only; the refused
//     handshake (a key not in the allow list), the refused HELLO and the
//     forged reply each leave a log line naming the key
//   - two sandbox managers for one host: the newer is refused with one log
//     line while the older is connected (no flapping, no "counted dead"),
//     and joins once the older stops
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
const HOST = 'vm';
const tb = new Talkback({
  name: 'hubauth',
  judges: 1,
  env: { TALKBACK_HUB_ENDPOINT: `tcp://127.0.0.1:${hubPort}`, TALKBACK_HUB_KEYS: keys, TALKBACK_HOST_NAME: HOST },
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
  assert.match(judge, /submit = "sandbox:exec,sandbox:put"/);
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

/** The public key (Z85) of a certificate file. */
function publicKey(file) {
  return fs.readFileSync(file, 'utf8').match(/public-key = "([^"]+)"/)[1];
}

/** Lines of the gateway's log written after `mark` (its length then) that match re. */
function linesSince(mark, re) {
  return gatewayLog().slice(mark).split('\n').filter((l) => re.test(l));
}

test('a host key naming another host is refused, gets no chat\'s runs, and every refusal is logged per key', withLogs(tb, async () => {
  const hub = `tcp://127.0.0.1:${hubPort}`;
  const hubKey = path.join(keys, 'hub.key');
  const made = execFileSync(KEYS_BIN, [keys, 'sandbox', 'host2'], { encoding: 'utf8' });
  assert.match(made, /host2 is for host host2 only/);
  assert.match(fs.readFileSync(path.join(keys, 'allowed', 'host2.key'), 'utf8'), /host = "host2"/);
  execFileSync(KEYS_BIN, [keys, 'reaper', 'reaper-host2']);
  assert.match(fs.readFileSync(path.join(keys, 'allowed', 'reaper-host2.key'), 'utf8'), /host = "host2"/);
  const conv = tb.chat('bound');
  const mark = gatewayLog().length;
  const liar = spawnCollect(HUBPEER, [hub, 'sandbox', '120', '--cert', path.join(keys, 'host2.key_secret'),
    '--hub-key', hubKey, '--host', HOST, '--forge', 'yes']);
  // The reaper keys say HELLO as judge (refused: a worker on host2 would
  // make the hub remember host2 and hold new chats for its manager).
  const reaperVm = spawnCollect(HUBPEER, [hub, 'judge', '120', '--cert', path.join(keys, 'reaper-host2.key_secret'),
    '--hub-key', hubKey, '--host', 'host2', '--submit', `sandbox:busy:${conv}:x`, '--submit-host', HOST]);
  const reaperAny = spawnCollect(HUBPEER, [hub, 'judge', '120', '--cert', path.join(keys, 'reaper-host2.key_secret'),
    '--hub-key', hubKey, '--host', 'host2', '--submit', `sandbox:busy:${conv}:x`]);
  // A key of its own (the one of the test above was logged < 10 s ago).
  const thirdKeys = path.join(work, 'third-keys');
  execFileSync(KEYS_BIN, [thirdKeys]);
  const stranger = spawnCollect(HUBPEER, [hub, 'sandbox', '120', '--cert', path.join(thirdKeys, 'sandbox.key_secret'),
    '--hub-key', hubKey, '--host', HOST]);
  try {
    await waitFor(() => linesSince(mark, new RegExp(`refused HELLO as sandbox for host ${HOST} from hubpeer-${liar.child.pid}: `
      + 'the key host2 is made for host host2 only')).length === 1,
    { timeoutMs: 15000, what: 'the hub to refuse the host2 key as vm\'s manager' });
    const c = await connect(tb, { conv, user: 'user-hubauth' });
    try {
      for (let i = 0; i < 10; i++) {
        const out = await runOk(c, `echo real-${i}`);
        assert.match(out, new RegExp(`real-${i}`));
        assert.ok(!out.includes(FORGED), out);
      }
    } finally {
      await c.close();
    }
    // The reaper key for host2 may not name vm; naming no host, it is
    // served on host2 only, where no manager is.
    await waitFor(() => reaperVm.out().includes('REPLY 4 [talkback: the hub refused this request: this worker\'s key is not for the host it names]'),
      { timeoutMs: 15000, what: 'the refusal of the host2 reaper key\'s request for vm' });
    await waitFor(() => /^REPLY 1 /m.test(reaperAny.out()),
      { timeoutMs: 20000, what: 'the host2 reaper key\'s request to end with no worker' });
    assert.match(linesSince(mark, /refused a request sandbox busy for host vm from the key reaper-host2/).join('\n'),
      /the key reaper-host2 is made for host host2 only/);
    // Each refusal names its key, and one noisy key hides no other.
    const strangerKey = publicKey(path.join(thirdKeys, 'allowed', 'sandbox.key'));
    await waitFor(() => linesSince(mark, new RegExp(`refused a handshake from 127\\.0\\.0\\.1 with the key ${strangerKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: it is not in the hub's allow list`)).length >= 1,
      { timeoutMs: 15000, what: 'the refused handshake of the stranger\'s key in the log' });
    await waitFor(() => linesSince(mark, /dropped a reply from the key host2, which is not a worker on this hub \(a forged reply\)/).length >= 1,
      { timeoutMs: 15000, what: 'the forged reply of the host2 key in the log' });
    // Rate-limited per key: the liar says HELLO 5 times a second, logged
    // once per hub_refusal_log_ms (10 s), the next line counting the rest.
    const liarLines = linesSince(mark, /refused HELLO as sandbox for host vm from hubpeer/);
    assert.equal(liarLines.filter((l) => !l.includes('more like it since the last one')).length, 1, liarLines.join('\n'));
    assert.ok(liarLines.length <= 4, liarLines.join('\n'));
  } finally {
    const outs = [await stop(liar), await stop(reaperVm), await stop(reaperAny), await stop(stranger)];
    for (const o of outs) assert.ok(!/^REQUEST /m.test(o), `a refused peer received a request:\n${o}`);
    for (const f of ['host2', 'reaper-host2']) {
      fs.rmSync(path.join(keys, 'allowed', `${f}.key`), { force: true });
      fs.rmSync(path.join(keys, `${f}.key_secret`), { force: true });
    }
  }
  assert.ok(!/worker hubpeer-\d+ \(sandbox\) joined/.test(gatewayLog()), 'a refused peer joined as sandbox');
  assert.deepEqual(linesSince(mark, /counted dead|is replaced by/), []);
}));

test('two sandbox managers for one host: the newer is refused with one line, no flapping, and joins once the older stops', withLogs(tb, async () => {
  const conv = tb.chat('twomanagers');
  const mark = gatewayLog().length;
  const older = tb.sandbox.child.pid;
  // The same host, so the same state_dir (claim records of spares live there).
  const newer = spawnCollect(BIN.sandbox, [], tb.env());
  const c = await connect(tb, { conv, user: 'user-hubauth' });
  let restarted = false;
  try {
    const refused = new RegExp(`refused HELLO as sandbox for host ${HOST} from sandbox-${newer.child.pid} \\(key sandbox\\): `
      + `host ${HOST} already has a connected sandbox manager, sandbox-${older}`);
    await waitFor(() => linesSince(mark, refused).length === 1,
      { timeoutMs: 30000, what: 'the hub to refuse the second manager of vm' });
    // Calls go on through the older manager while the newer keeps saying HELLO.
    for (let i = 0; i < 5; i++) {
      assert.match(await runOk(c, `echo still-${i}`), new RegExp(`still-${i}`));
      await sleep(1000);
    }
    const lines = linesSince(mark, refused);
    assert.equal(lines.filter((l) => !l.includes('more like it since the last one')).length, 1, lines.join('\n'));
    assert.ok(lines.length <= 2, lines.join('\n'));
    assert.deepEqual(linesSince(mark, /counted dead|is replaced by|\(sandbox\) joined/), []);
    // The older stops: the newer joins, and serves the chat.
    await tb.stopSandbox();
    restarted = true;
    await waitFor(() => linesSince(mark, new RegExp(`worker sandbox-${newer.child.pid} \\(sandbox\\) joined`)).length === 1,
      { timeoutMs: 20000, what: 'the newer manager to join once the older stopped' });
    assert.match(await runOk(c, 'echo via-newer'), /via-newer/);
  } finally {
    await c.close();
    await stop(newer);
    if (restarted) {
      tb.startSandbox();
      await tb.waitReady();
    }
  }
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
