// caps.test.mjs -- the caps on running sandboxes, against a real dockerd:
//   max_running_per_user: at the cap a new chat stops (kept) the user's
//     least recently used idle sandbox and runs; the stopped chat is told
//     why on its next call; another user is not affected
//   max_running: the same over everyone's sandboxes
//   every one busy (a call in flight): the call is refused with the cap's
//     text, nothing is made or started; a reset frees a place at once
//   racing first calls: three of a user with none, under a cap of three,
//     all run; six at once, all busy, under a cap of two: two run; four
//     new chats racing to make room from two idle ones: two run, no more
// Each instance has its own sandbox network, so the caps count only its
// own sandboxes (they count running sandboxes on the sandbox network).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Talkback, withLogs, connect, run, runOk, containersOf, docker, randomTag, call, waitFor, sleep,
} from './harness.mjs';

const net = `talkback-it-caps-${randomTag()}`;
const nets = [net];
const tb = new Talkback({
  name: 'caps',
  env: { TALKBACK_NETWORK: net, TALKBACK_MAX_RUNNING: '3', TALKBACK_MAX_RUNNING_PER_USER: '2' },
});

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
  for (const n of nets) await docker('network', 'rm', n).catch(() => {});
});

/** A Talkback of its own on a network of its own. */
function instance(name, env) {
  const n = `talkback-it-caps-${randomTag()}`;
  nets.push(n);
  return new Talkback({ name, env: { TALKBACK_NETWORK: n, ...env } });
}

const perUser = (n) => `[talkback: this user already has ${n} sandboxes running, the most one user may have (setting ` +
  '`max_running_per_user`), so this chat\'s sandbox was not started and nothing ran. Tell the user: a chat\'s ' +
  'sandbox stops after 60 minutes without calls, and `reset` in a chat they no longer need frees one at once; ' +
  'then try again.]';
const total = (n) => `[talkback: the sandbox host already runs ${n} sandboxes, its limit (setting \`max_running\`), so this ` +
  'chat\'s sandbox was not started and nothing ran. Try again in a few minutes, when idle sandboxes have ' +
  'stopped; if it keeps failing, tell the user the sandbox host is full.]';
const ROOM_USER = (n) => new RegExp('^\\[Resumed this chat\'s sandbox, stopped (\\d+ seconds?|1 minute) ago \\(to make room ' +
  `for another chat of this user: one user may have ${n} running at once, setting \`max_running_per_user\`, and this ` +
  'one was the least recently used\\): its files and installs are as they were, but nothing it ran is running ' +
  'now\\. Start servers and background jobs again\\.\\]\\n\\$ ');
const ROOM_ALL = (n) => new RegExp('^\\[Resumed this chat\'s sandbox, stopped (\\d+ seconds?|1 minute) ago \\(to make room ' +
  `for another chat: the sandbox host runs at most ${n} at once, setting \`max_running\`, and this one was the ` +
  'least recently used\\): its files and installs are as they were, but nothing it ran is running now\\. Start ' +
  'servers and background jobs again\\.\\]\\n\\$ ');

async function state(conv) {
  const ids = await containersOf(conv);
  if (ids.length === 0) return 'none';
  return (await docker('inspect', '-f', '{{.State.Status}}', ids[0].id)).trim();
}

const waitState = (conv, want) => waitFor(async () => (await state(conv)) === want,
  { what: `${conv} ${want}`, timeoutMs: 60000, intervalMs: 200 });

test('at a cap a new chat stops the least recently used idle sandbox and runs; that chat is told why',
  withLogs(tb, async () => {
    const a = [tb.chat('a1'), tb.chat('a2'), tb.chat('a3')];
    const ca = await Promise.all(a.map((conv) => connect(tb, { conv, user: 'alice' })));
    const b = [tb.chat('b1'), tb.chat('b2')];
    const cb = await Promise.all(b.map((conv) => connect(tb, { conv, user: 'bob' })));
    try {
      // (Last-call records count whole seconds: a second apart, the
      // order of use is certain.)
      await runOk(ca[0], 'echo one > /work/f; echo a1');
      await sleep(1100);
      await runOk(ca[1], 'echo a2');
      await sleep(1100);
      // Alice's third: her cap is 2, so a1 (the least recently used) is
      // stopped, kept, and a3 runs.
      assert.equal(await runOk(ca[2], 'echo a3'), 'a3\n');
      await sleep(1100);
      await waitState(a[0], 'exited');
      assert.equal(await state(a[1]), 'running');
      // a1's next call: resumed, its files kept, told why; a2 makes room.
      let r = await run(ca[0], 'cat /work/f');
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, ROOM_USER(2));
      assert.match(r.text, /\none\n$/);
      await waitState(a[1], 'exited');
      // Told once.
      assert.equal((await run(ca[0], 'true')).text, '$ true\n');
      await sleep(1100);

      // Bob is not alice: his first sandbox is the third in all.
      await runOk(cb[0], 'echo b1');
      await sleep(1100);
      assert.equal(await state(a[2]), 'running');
      // His second: the host's cap of 3 -- the least recently used of
      // anyone's (alice's a3) is stopped.
      await runOk(cb[1], 'echo b2');
      await waitState(a[2], 'exited');
      r = await run(ca[2], 'echo back');
      assert.match(r.text, ROOM_ALL(3));
      // Never more than 3 running.
      let running = 0;
      for (const conv of [...a, ...b]) running += (await state(conv)) === 'running' ? 1 : 0;
      assert.ok(running <= 3, `${running} running`);
    } finally {
      await Promise.all([...ca, ...cb].map((c) => c.close()));
    }
  }));

test('every sandbox busy: refused with the cap\'s text, nothing made; a reset frees a place', async () => {
  const t = instance('caps-busy', { TALKBACK_MAX_RUNNING: '3', TALKBACK_MAX_RUNNING_PER_USER: '2' });
  await t.start();
  await withLogs(t, async () => {
    const c = [t.chat('c1'), t.chat('c2'), t.chat('c3')];
    const cc = await Promise.all(c.map((conv) => connect(t, { conv, user: 'carol' })));
    const d = [t.chat('d1'), t.chat('d2')];
    const cd = await Promise.all(d.map((conv) => connect(t, { conv, user: 'dan' })));
    try {
      await runOk(cc[0], 'true');
      await runOk(cc[1], 'true');
      // Long enough to outlast the rest of this test on a loaded machine.
      const slow = [run(cc[0], 'sleep 40; echo done'), run(cc[1], 'sleep 40; echo done')];
      await new Promise((res) => setTimeout(res, 1500));
      let r = await run(cc[2], 'echo c3');
      assert.equal(r.isError, true);
      assert.equal(r.text, perUser(2));
      assert.equal(await state(c[2]), 'none');
      r = await call(cc[2], 'write_file', { path: 'x.txt', content: 'x' });
      assert.equal(r.text, perUser(2));

      // Dan's first is the third in all; his second meets the host's cap
      // with all three busy.
      await runOk(cd[0], 'true');
      const slowD = run(cd[0], 'sleep 30; echo done');
      await new Promise((res) => setTimeout(res, 1000));
      r = await run(cd[1], 'echo d2');
      assert.equal(r.text, total(3));
      assert.equal(await state(d[1]), 'none');
      for (const s of [...slow, slowD]) assert.equal((await s).isError, false);
      assert.equal(await state(c[0]), 'running');
      assert.equal(await state(c[1]), 'running');

      // A reset frees a place at once (nothing stopped for it).
      assert.match((await call(cc[0], 'reset')).text, /^\[Reset: this chat's sandbox was deleted/);
      assert.equal(await runOk(cc[2], 'echo c3'), 'c3\n');
      assert.equal(await state(c[1]), 'running');
    } finally {
      await Promise.all([...cc, ...cd].map((x) => x.close()));
    }
  })();
  await t.cleanup();
});

test('three first calls of a user with none, at once, under a cap of three: all three run', async () => {
  const t = instance('caps-three', { TALKBACK_MAX_RUNNING: '0', TALKBACK_MAX_RUNNING_PER_USER: '3' });
  await t.start();
  try {
    // Twice: the first round claims the warm pool's spares, the second
    // makes some of its sandboxes while the pool refills.
    for (const user of ['erin', 'frank']) {
      const convs = Array.from({ length: 3 }, (_, i) => t.chat(`${user}${i}`));
      const clients = await Promise.all(convs.map((conv) => connect(t, { conv, user })));
      const results = await Promise.all(clients.map((c) => run(c, 'echo in')));
      await Promise.all(clients.map((c) => c.close()));
      for (const r of results) assert.equal(r.text, '$ echo in\nin\n', results.map((x) => x.text).join('\n'));
      for (const conv of convs) assert.equal(await state(conv), 'running');
    }
  } catch (e) {
    t.failed = true;
    throw e;
  } finally {
    await t.cleanup();
  }
});

test('six first calls of one user at once, all busy, cannot pass a per-user cap of two', async () => {
  const t = instance('caps-race', { TALKBACK_MAX_RUNNING: '0', TALKBACK_MAX_RUNNING_PER_USER: '2' });
  await t.start();
  try {
    const convs = Array.from({ length: 6 }, (_, i) => t.chat(`r${i}`));
    const clients = await Promise.all(convs.map((conv) => connect(t, { conv, user: 'dave' })));
    const results = await Promise.all(clients.map((c) => run(c, 'sleep 15; echo in')));
    await Promise.all(clients.map((c) => c.close()));
    const ok = results.filter((r) => !r.isError);
    const refused = results.filter((r) => r.isError);
    assert.equal(ok.length, 2, results.map((r) => r.text).join('\n'));
    for (const r of ok) assert.equal(r.text, '$ sleep 15; echo in\nin\n');
    for (const r of refused) assert.equal(r.text, perUser(2));
    let made = 0;
    for (const conv of convs) made += (await containersOf(conv)).length;
    assert.equal(made, 2);
  } catch (e) {
    t.failed = true;
    throw e;
  } finally {
    await t.cleanup();
  }
});

test('four new chats racing to make room from two idle sandboxes: two run, two refused, never three', async () => {
  const t = instance('caps-room', { TALKBACK_MAX_RUNNING: '0', TALKBACK_MAX_RUNNING_PER_USER: '2' });
  await t.start();
  try {
    const idle = [t.chat('idle0'), t.chat('idle1')];
    for (const conv of idle) {
      const c = await connect(t, { conv, user: 'gina' });
      await runOk(c, 'true');
      await c.close();
    }
    const convs = Array.from({ length: 4 }, (_, i) => t.chat(`new${i}`));
    const clients = await Promise.all(convs.map((conv) => connect(t, { conv, user: 'gina' })));
    const calls = clients.map((c) => run(c, 'sleep 15; echo in'));
    // While they run: never more than two of hers running.
    let most = 0;
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      let n = 0;
      for (const conv of [...idle, ...convs]) n += (await state(conv)) === 'running' ? 1 : 0;
      most = Math.max(most, n);
      await new Promise((res) => setTimeout(res, 100));
    }
    const results = await Promise.all(calls);
    await Promise.all(clients.map((c) => c.close()));
    const ok = results.filter((r) => !r.isError);
    assert.equal(ok.length, 2, results.map((r) => r.text).join('\n'));
    for (const r of results.filter((x) => x.isError)) assert.equal(r.text, perUser(2));
    for (const conv of idle) assert.equal(await state(conv), 'exited');
    assert.ok(most <= 2, `${most} of her sandboxes ran at once`);
  } catch (e) {
    t.failed = true;
    throw e;
  } finally {
    await t.cleanup();
  }
});
