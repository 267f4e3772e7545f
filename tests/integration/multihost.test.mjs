// multihost.test.mjs -- one gateway, two real Docker hosts on this machine:
// host `alpha` is the machine's dockerd, host `beta` a second dockerd in a
// network namespace of its own (tests/tools/dockerd2, started here unless
// it already runs, and then stopped here again).  The hub listens on
// tcp://127.0.0.1 with keys; each host has its own sandbox manager and
// reaper (multihost-harness.mjs), and one judge serves both.
//   - beta's namespace has only lo and Docker's bridges, no route out, and
//     the egress rule in its own tables: a beta sandbox is refused at once
//     by its own bridge address
//   - placement: new chats spread over both hosts, one sandbox each; racing
//     first calls of one new chat make one sandbox
//   - run and run_code reach the host that holds the chat (the judge's
//     program lands in that chat's container, on that host)
//   - a chat sticks to its host across gateway restarts (the hub finds it
//     again from Docker's own record), files and container unchanged
//   - one host's manager killed: its chats get the clear text, nothing is
//     made elsewhere, the other host's chats are unaffected and new chats
//     go there; when the manager returns, its chats work again with their
//     files
//   - talkbackctl: `hosts` lists both, `drain beta` sends new chats to
//     alpha only while beta's chats keep working, the flag survives a
//     manager restart, `undrain` lets beta take new chats again; with
//     every host drained a new chat gets a clear text and no sandbox;
//     `sandboxes --host`, `stop` and `rm` reach the chat's own host

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { withLogs, connect, call, rawRun, containerIdFromInside, waitFor } from './harness.mjs';
import { Cluster, startDockerd2, stopDockerd2, dockerAt, DOCKERD2_NS } from './multihost-harness.mjs';

const execFileP = promisify(execFile);

const d2 = await startDockerd2();
const cl = new Cluster({
  name: 'multihost',
  judges: 1,
  hosts: [{ name: 'alpha', maxRunning: 30 }, { name: 'beta', dockerHost: d2.host, maxRunning: 30 }],
});

const USER = 'user-mh';
const LOST = (h) => `[talkback: this chat's machine is on host ${h}, which is not reachable now.`;
/** Chats made by the placement test, with the host that holds each. */
const placed = [];

before(async () => {
  await cl.start();
});

after(async () => {
  await cl.cleanup();
  if (d2.startedHere) await stopDockerd2();
});

/** A new chat's first call; {conv, host}, the one host that holds it. */
async function place(label) {
  const conv = cl.chat(label);
  const r = await rawRun(cl, conv, USER, `echo ${conv} > /work/marker; cat /work/marker`);
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, new RegExp(conv));
  const where = await cl.whereIs(conv);
  assert.equal(where.length, 1, `${conv} has containers on ${JSON.stringify(where)}`);
  return { conv, host: where[0] };
}

/** `cat /work/marker` in conv's sandbox, as a fresh request (no session). */
async function marker(conv) {
  const r = await rawRun(cl, conv, USER, 'cat /work/marker');
  assert.equal(r.isError, false, `${conv}: ${r.text}`);
  return r.text.replace(/^\$ cat \/work\/marker\n/, '');
}

/** talkbackctl --json ARGS: the parsed answer (it must succeed). */
async function ctlJson(...args) {
  const r = await cl.ctl('--json', ...args);
  assert.equal(r.code, 0, `talkbackctl ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

/** Whether talkbackctl hosts says host h is draining. */
async function draining(h) {
  const row = (await ctlJson('hosts')).find((x) => x.host === h);
  assert.ok(row, `talkbackctl hosts does not list ${h}`);
  return row.draining === true;
}

/** Until host h's draining flag, as the hub has it, is want: the
 *  manager says it with its next HELLO. */
async function waitDraining(h, want) {
  await waitFor(async () => (await draining(h)) === want,
    { timeoutMs: 10000, what: `talkbackctl hosts to say ${h} is ${want ? '' : 'not '}draining` });
}

/** Until a run in conv gives a text that starts with `start`; that text. */
async function waitText(conv, start, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await rawRun(cl, conv, USER, 'cat /work/marker');
    if (last.text.startsWith(start)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`waited ${timeoutMs} ms for ${JSON.stringify(start)}; last: ${JSON.stringify(last)}`);
}

test('new chats spread over both hosts, one sandbox each', withLogs(cl, async () => {
  for (let i = 0; i < 8; i++) placed.push(await place('spread'));
  const n = { alpha: 0, beta: 0 };
  for (const p of placed) n[p.host]++;
  // Equal caps, both empty at first: neither host takes (nearly) all.
  assert.ok(n.alpha >= 2 && n.beta >= 2, `placement: ${JSON.stringify(n)}`);
  assert.deepEqual(await cl.countByHost(), n);
}));

test('host beta lives in a network namespace of its own, with the egress rule', withLogs(cl, async () => {
  const ip = async (...a) => (await execFileP('ip', ['-n', DOCKERD2_NS, ...a])).stdout;
  const links = (await ip('-o', 'link')).split('\n').filter(Boolean).map((l) => l.split(': ')[1].split('@')[0]);
  for (const l of links) assert.match(l, /^(lo|docker0|br-[0-9a-f]+|veth[0-9a-f]+)$/, `link ${l} in ${DOCKERD2_NS}`);
  assert.equal((await ip('route', 'show', 'default')).trim(), '', 'a route out of the namespace');
  const input = (await execFileP('nsenter', [`--net=/run/netns/${DOCKERD2_NS}`, 'iptables', '-S', 'INPUT'])).stdout;
  assert.match(input, /-j TALKBACK-EGRESS-IN/);
  // A beta sandbox knocking at its own bridge address (inside the
  // namespace) is rejected by the rule, not answered by a closed port.
  const p = placed.find((x) => x.host === 'beta');
  const gw = (await dockerAt(cl.host('beta').dockerHost, 'network', 'inspect', '-f',
    '{{range .IPAM.Config}}{{.Gateway}}{{end}}', cl.host('beta').network)).trim();
  assert.match(gw, /^10\.254\./);
  const r = await rawRun(cl, p.conv, USER, `timeout 5 bash -c 'exec 3<>/dev/tcp/${gw}/9' 2>&1; echo rc=$?`);
  assert.match(r.text, /No route to host/);
}));

test('racing first calls of one new chat make one sandbox, and every call runs', withLogs(cl, async () => {
  const conv = cl.chat('race');
  const rs = await Promise.all([0, 1, 2, 3].map(() => rawRun(cl, conv, USER, 'echo raced')));
  assert.equal((await cl.whereIs(conv)).length, 1, `${conv}: ${JSON.stringify(await cl.whereIs(conv))}`);
  for (const r of rs) {
    assert.equal(r.isError, false, r.text);
    assert.equal(r.text, '$ echo raced\nraced\n');
  }
}));

test('run and run_code reach the host that holds the chat', withLogs(cl, async () => {
  for (const host of ['alpha', 'beta']) {
    const p = placed.find((x) => x.host === host);
    const c = await connect(cl, { conv: p.conv, user: USER });
    try {
      // The container a command runs in is the one on the chat's host.
      const id = await containerIdFromInside(c);
      const ids = (await cl.chatsAt(cl.host(host))).filter((x) => x.conv === p.conv).map((x) => x.id);
      assert.deepEqual(ids, [id], `${p.conv} on ${host}`);
      // run_code goes through the judge, whose put/exec carry the chat.
      const r = await call(c, 'run_code', {
        language: 'python', code: "print(open('/work/marker').read(), end='')\n", expected: `${p.conv}\n`,
      }, { timeout: 180000 });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /^PASS/m);
      const files = await dockerAt(cl.host(host).dockerHost, 'exec', id, 'ls', '/work');
      assert.match(files, /\bmain\.py\b/, `the judge's program is not in ${p.conv}'s /work on ${host}`);
    } finally {
      await c.close();
    }
    assert.deepEqual(await cl.whereIs(p.conv), [host]);
  }
}));

test('a chat sticks to its host across gateway restarts', withLogs(cl, async () => {
  const before = await cl.countByHost();
  for (let round = 0; round < 2; round++) {
    await cl.restartGateway();
    for (const p of placed) {
      assert.equal(await marker(p.conv), `${p.conv}\n`, `round ${round}: ${p.conv} (${p.host})`);
      assert.deepEqual(await cl.whereIs(p.conv), [p.host]);
    }
  }
  assert.deepEqual(await cl.countByHost(), before, 'no sandbox made anew');
}));

test('one host gone: its chats get the clear text, the other host is unaffected, and they come back',
  withLogs(cl, async () => {
    const onBeta = placed.filter((p) => p.host === 'beta');
    const onAlpha = placed.filter((p) => p.host === 'alpha');
    await cl.killManager('beta');

    const r = await waitText(onBeta[0].conv, LOST('beta'));
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /files/);
    for (const p of onBeta) {
      const x = await rawRun(cl, p.conv, USER, 'cat /work/marker');
      assert.ok(x.text.startsWith(LOST('beta')), `${p.conv}: ${x.text}`);
      assert.deepEqual(await cl.whereIs(p.conv), ['beta'], 'no new sandbox elsewhere');
    }
    // alpha's chats go on; a new chat is placed on alpha.
    for (const p of onAlpha) assert.equal(await marker(p.conv), `${p.conv}\n`);
    for (let i = 0; i < 3; i++) assert.equal((await place('while-beta-down')).host, 'alpha');

    await cl.startManager('beta');
    for (const p of onBeta) {
      assert.equal(await marker(p.conv), `${p.conv}\n`, `${p.conv} after beta came back`);
      assert.deepEqual(await cl.whereIs(p.conv), ['beta']);
    }
  }));

test('talkbackctl: hosts, drain and undrain', withLogs(cl, async () => {
  const hosts = await ctlJson('hosts');
  for (const h of ['alpha', 'beta']) {
    const row = hosts.find((x) => x.host === h);
    assert.ok(row, `${h} is not in ${JSON.stringify(hosts)}`);
    assert.equal(row.draining, false);
    assert.match(row.workers, /sandbox:1/);
    assert.match(row.workers, /reaper:1/);
  }

  const d = await cl.ctl('drain', 'beta');
  assert.equal(d.code, 0, d.stderr + d.stdout);
  await waitDraining('beta', true);
  for (let i = 0; i < 4; i++) assert.equal((await place('drained')).host, 'alpha');
  // beta's own chats keep working while it drains.
  const onBeta = placed.filter((p) => p.host === 'beta');
  for (const p of onBeta) assert.equal(await marker(p.conv), `${p.conv}\n`);

  // The flag lives in beta's state_dir: a manager restart keeps it.
  await cl.stopManager('beta');
  await cl.startManager('beta');
  assert.equal(await draining('beta'), true);
  // The restarted manager replaces its earlier run at once: a new chat
  // right away goes to alpha, not to "beta did not say in time".
  assert.equal((await place('drained-after-restart')).host, 'alpha');

  const u = await cl.ctl('undrain', 'beta');
  assert.equal(u.code, 0, u.stderr + u.stdout);
  await waitDraining('beta', false);
  // alpha now holds more chats than beta: the next new chat goes to beta.
  assert.equal((await place('undrained')).host, 'beta');
}));

test('every host drained: a new chat gets a clear text and no sandbox', withLogs(cl, async () => {
  for (const h of ['alpha', 'beta']) assert.equal((await cl.ctl('drain', h)).code, 0);
  try {
    for (const h of ['alpha', 'beta']) await waitDraining(h, true);
    const conv = cl.chat('all-drained');
    const r = await rawRun(cl, conv, USER, 'echo nope');
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /^\[talkback: every sandbox host is draining/);
    assert.match(r.text, /talkbackctl undrain/);
    assert.deepEqual(await cl.whereIs(conv), []);
    // Known chats still run.
    assert.equal(await marker(placed[0].conv), `${placed[0].conv}\n`);
  } finally {
    for (const h of ['alpha', 'beta']) await cl.ctl('undrain', h);
  }
  for (const h of ['alpha', 'beta']) await waitDraining(h, false);
}));

test('talkbackctl sandboxes, stop and rm reach the chat\'s own host', withLogs(cl, async () => {
  const p = placed.find((x) => x.host === 'beta');
  const list = await ctlJson('sandboxes', '--host', 'beta');
  const row = list.find((x) => x.conversation === p.conv);
  assert.ok(row, `${p.conv} is not listed on beta: ${JSON.stringify(list)}`);
  assert.deepEqual([row.user, row.host, row.state], [USER, 'beta', 'running']);
  assert.ok(list.every((x) => x.host === 'beta'), JSON.stringify(list));
  assert.ok(!(await ctlJson('sandboxes', '--host', 'alpha')).some((x) => x.conversation === p.conv));
  // Without --host: every host's chats.
  const all = await ctlJson('sandboxes');
  for (const q of placed) {
    const at = all.find((x) => x.conversation === q.conv);
    assert.equal(at?.host, q.host, `${q.conv}: ${JSON.stringify(at)}`);
  }

  const s = await cl.ctl('stop', p.conv);
  assert.equal(s.code, 0, s.stderr + s.stdout);
  const [mine] = (await cl.chatsAt(cl.host('beta'))).filter((x) => x.conv === p.conv);
  const state = await dockerAt(cl.host('beta').dockerHost, 'inspect', '-f', '{{.State.Status}}', mine.id);
  assert.equal(state.trim(), 'exited');
  // The next call starts it again, on beta, with its files.
  const back = await rawRun(cl, p.conv, USER, 'cat /work/marker');
  assert.equal(back.isError, false, back.text);
  assert.ok(back.text.endsWith(`$ cat /work/marker\n${p.conv}\n`), back.text);
  assert.deepEqual(await cl.whereIs(p.conv), ['beta']);
  // ... and is told who stopped it (the reason lives in beta's state_dir).
  assert.match(back.text, /^\[Resumed this chat's sandbox, stopped .* ago \(by the operator\)/);

  const rm = await cl.ctl('rm', p.conv);
  assert.equal(rm.code, 0, rm.stderr + rm.stdout);
  assert.deepEqual(await cl.whereIs(p.conv), []);
  placed.splice(placed.indexOf(p), 1);
}));

test('a gateway restarted while a host is down makes no new sandbox elsewhere for its chats',
  withLogs(cl, async () => {
    const p = placed.find((x) => x.host === 'beta');
    await cl.killManager('beta');
    await cl.restartGateway();
    // The hub's cache is gone and beta's manager cannot say it holds the
    // chat; beta's reaper still tells the hub that host beta exists.
    const r = await rawRun(cl, p.conv, USER, 'cat /work/marker');
    const where = await cl.whereIs(p.conv);
    // The call is refused, not placed on alpha.
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /^\[talkback: this chat's machine may be on host beta, which is not reachable now\./);
    assert.match(r.text, /talkbackctl forget beta/);
    assert.deepEqual(where, ['beta']);
    // A brand-new chat is refused too: the hub cannot tell it from one of beta's.
    const fresh = cl.chat('while-beta-unknown');
    const n = await rawRun(cl, fresh, USER, 'true');
    assert.equal(n.isError, true, n.text);
    assert.deepEqual(await cl.whereIs(fresh), []);
    await cl.startManager('beta');
    assert.equal(await marker(p.conv), `${p.conv}\n`);
    assert.deepEqual(await cl.whereIs(p.conv), ['beta']);
  }));
