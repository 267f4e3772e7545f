// caps.test.mjs -- the caps on running sandboxes, against a real dockerd:
//   max_running_per_user: a user's next sandbox is not made, the call says
//     which cap and what to do; another user is not affected
//   max_running: past it no sandbox is made or resumed, for anyone, and the
//     call says so; a reset frees a place at once
//   six first calls of one user at once, with a cap of two: two sandboxes
// The instance has its own sandbox network, so the caps count only its
// own sandboxes (they count running sandboxes on the sandbox network).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, run, runOk, containersOf, docker, randomTag, call } from './harness.mjs';

const net = `talkback-it-caps-${randomTag()}`;
const tb = new Talkback({
  name: 'caps',
  env: { TALKBACK_NETWORK: net, TALKBACK_MAX_RUNNING: '3', TALKBACK_MAX_RUNNING_PER_USER: '2' },
});

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
  await docker('network', 'rm', net).catch(() => {});
});

const PER_USER = '[talkback: this user already has 2 sandboxes running, the most one user may have (setting ' +
  '`max_running_per_user`), so this chat\'s sandbox was not started and nothing ran. Tell the user: a chat\'s ' +
  'sandbox stops after 60 minutes without calls, and `reset` in a chat they no longer need frees one at once; ' +
  'then try again.]';
const TOTAL = '[talkback: the sandbox host already runs 3 sandboxes, its limit (setting `max_running`), so this ' +
  'chat\'s sandbox was not started and nothing ran. Try again in a few minutes, when idle sandboxes have ' +
  'stopped; if it keeps failing, tell the user the sandbox host is full.]';

async function state(conv) {
  const ids = await containersOf(conv);
  if (ids.length === 0) return 'none';
  return (await docker('inspect', '-f', '{{.State.Status}}', ids[0].id)).trim();
}

test('the caps refuse with their text; a reset frees a place; a stopped sandbox is not resumed past the cap',
  withLogs(tb, async () => {
    const a = [tb.chat('a1'), tb.chat('a2'), tb.chat('a3')];
    const ca = await Promise.all(a.map((conv) => connect(tb, { conv, user: 'alice' })));
    const b = [tb.chat('b1'), tb.chat('b2')];
    const cb = await Promise.all(b.map((conv) => connect(tb, { conv, user: 'bob' })));
    try {
      await runOk(ca[0], 'echo a1');
      await runOk(ca[1], 'echo a2');
      // Alice's third: the per-user cap.  Nothing is made for it.
      let r = await run(ca[2], 'echo a3');
      assert.equal(r.isError, true);
      assert.equal(r.text, PER_USER);
      assert.equal(await state(a[2]), 'none');
      // write_file meets the same cap.
      r = await call(ca[2], 'write_file', { path: 'x.txt', content: 'x' });
      assert.equal(r.text, PER_USER);

      // Bob is not alice: his first sandbox is the third in all.
      await runOk(cb[0], 'echo b1');
      // His second: over the total cap.
      r = await run(cb[1], 'echo b2');
      assert.equal(r.isError, true);
      assert.equal(r.text, TOTAL);
      assert.equal(await state(b[1]), 'none');

      // A reset frees a place at once.
      assert.match((await call(ca[0], 'reset')).text, /^\[Reset: this chat's sandbox was deleted/);
      assert.equal(await runOk(ca[2], 'echo a3'), 'a3\n');

      // A stopped sandbox is not started again while the host is full.
      await docker('stop', '-t', '1', (await containersOf(b[0]))[0].id);
      await runOk(cb[1], 'echo b2');           // takes b1's place
      r = await run(cb[0], 'echo b1 again');
      assert.equal(r.text, TOTAL);
      assert.equal(await state(b[0]), 'exited');
      // Calls to running sandboxes go on as ever.
      assert.equal(await runOk(ca[1], 'echo still'), 'still\n');
    } finally {
      await Promise.all([...ca, ...cb].map((c) => c.close()));
    }
  }));

test('six first calls of one user at once cannot pass a per-user cap of two', withLogs(tb, async () => {
  const race = new Talkback({ name: 'caps-race', env: {
    TALKBACK_NETWORK: net, TALKBACK_MAX_RUNNING: '0', TALKBACK_MAX_RUNNING_PER_USER: '2',
  } });
  await race.start();
  try {
    const convs = Array.from({ length: 6 }, (_, i) => race.chat(`r${i}`));
    const clients = await Promise.all(convs.map((conv) => connect(race, { conv, user: 'dave' })));
    const results = await Promise.all(clients.map((c) => run(c, 'echo in')));
    await Promise.all(clients.map((c) => c.close()));
    const ok = results.filter((r) => !r.isError);
    const refused = results.filter((r) => r.isError);
    assert.equal(ok.length, 2, results.map((r) => r.text).join('\n'));
    for (const r of ok) assert.equal(r.text, '$ echo in\nin\n');
    for (const r of refused) assert.equal(r.text, PER_USER);
    let made = 0;
    for (const conv of convs) made += (await containersOf(conv)).length;
    assert.equal(made, 2);
  } finally {
    await race.cleanup();
  }
}));
