// chats.test.mjs -- one kept container per chat, keyed by X-Conversation-Id:
//   two chats are isolated (files, containers), and each container is named
//   from its conversation id and carries the talkback.conversation label
//   unusable ids (missing, empty, new/null/undefined, an unreplaced
//   LibreChat placeholder, bad characters, too long) are refused with the
//   fix-your-librechat.yaml text, nothing runs and no container appears,
//   while initialize, ping and tools/list still work without the header
//   a chat belongs to the user of its first call: another X-User-Id is refused
//   10 simultaneous first calls of one new chat make exactly one container
//   20 chats in parallel each run in their own container, and a long
//   command in one chat does not delay another chat

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Talkback, withLogs, connect, call, run, runOk, containersOf, containersWithPrefix,
  talkbackContainers, containerIdFromInside, docker, psArgs, waitFor,
} from './harness.mjs';

const tb = new Talkback({ name: 'chats' });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

const REFUSED = [
  'talkback refused this call',
  'X-Conversation-Id',
  'X-Conversation-Id: "{{LIBRECHAT_BODY_CONVERSATIONID}}"',
  'Nothing ran.',
];

test('two chats are isolated: own files, own containers named from their ids', withLogs(tb, async () => {
  const a = tb.chat('iso-a');
  const b = tb.chat('iso-b');
  const ca = await connect(tb, { conv: a, user: 'user-1' });
  const cb = await connect(tb, { conv: b, user: 'user-1' });
  try {
    const w = await call(ca, 'write_file', { path: 'secret.txt', content: 'only in A\n' });
    assert.equal(w.isError, false, w.text);
    assert.equal(await runOk(ca, 'cat secret.txt'), 'only in A\n');

    const rb = await run(cb, 'ls -A /work; test -e /work/secret.txt');
    assert.equal(rb.text, '$ ls -A /work; test -e /work/secret.txt\n[exit code 1]\n',
      'chat B must not see chat A\'s file');

    const [da] = await containersOf(a);
    const [db] = await containersOf(b);
    assert.ok(da && db, 'each chat has a container labelled with its id');
    assert.equal((await containersOf(a)).length, 1);
    assert.equal((await containersOf(b)).length, 1);
    assert.notEqual(da.id, db.id);

    // Each chat's commands run in the container labelled with that chat's id.
    assert.equal(await containerIdFromInside(ca), da.id);
    assert.equal(await containerIdFromInside(cb), db.id);

    for (const [conv, c] of [[a, da], [b, db]]) {
      const name = (await docker('inspect', '--format', '{{.Name}}', c.id)).trim();
      assert.match(name, new RegExp(`^/talkback-${conv}-[0-9a-f]{16}$`), `container name of ${conv}`);
    }
  } finally {
    await ca.close();
    await cb.close();
  }
}));

test('unusable conversation ids are refused; initialize, ping and tools/list still work', withLogs(tb, async (t) => {
  const bad = `${tb.prefix}refused-`;
  const cases = [
    ['no header', undefined],
    ['an empty header', ''],
    ['"new"', 'new'],
    ['"undefined"', 'undefined'],
    ['"null"', 'null'],
    ['the unreplaced LibreChat placeholder', '{{LIBRECHAT_BODY_CONVERSATIONID}}'],
    ['another {{placeholder}}', `${bad}{{conversationId}}`],
    ['a space', `${bad}with space`],
    ['a slash', `${bad}a/b`],
    ['a double quote', `${bad}q"q`],
    ['129 characters', `${bad}${'x'.repeat(129 - bad.length)}`],
  ];
  const marker = `/tmp/${tb.prefix}must-not-exist`;
  for (const [what, conv] of cases) {
    await t.test(`refused: ${what}`, async () => {
      const c = await connect(tb, { conv, user: 'user-1' });
      try {
        await c.ping();
        const tools = await c.listTools();
        assert.ok(tools.tools.length >= 3);
        for (const [name, args] of [
          ['run', { command: `touch ${marker}` }],
          ['write_file', { path: marker, content: 'x' }],
          ['reset', {}],
        ]) {
          const r = await call(c, name, args);
          assert.equal(r.isError, true, `${name}: ${r.text}`);
          for (const piece of REFUSED) assert.ok(r.text.includes(piece), `${name}: missing ${JSON.stringify(piece)} in\n${r.text}`);
        }
      } finally {
        await c.close();
      }
    });
  }
  const reserved = new Set(['', 'new', 'undefined', 'null', '{{LIBRECHAT_BODY_CONVERSATIONID}}']);
  const made = (await talkbackContainers()).filter((c) => reserved.has(c.conv) || c.conv.startsWith(bad));
  assert.deepEqual(made, [], 'no container was made for a refused id');
}));

test('a chat belongs to the user of its first call; another X-User-Id is refused', withLogs(tb, async () => {
  const conv = tb.chat('owner');
  const alice = await connect(tb, { conv, user: 'alice' });
  const bob = await connect(tb, { conv, user: 'bob' });
  try {
    await call(alice, 'write_file', { path: 'mine.txt', content: 'alice\n' });

    for (const [name, args] of [
      ['run', { command: 'cat mine.txt' }],
      ['write_file', { path: 'mine.txt', content: 'bob was here\n' }],
      ['reset', {}],
    ]) {
      const r = await call(bob, name, args);
      assert.equal(r.isError, true, `${name}: ${r.text}`);
      assert.ok(r.text.includes('belongs to another user'), `${name}: ${r.text}`);
      assert.ok(!r.text.includes('alice'), `${name} leaked the file: ${r.text}`);
    }
    assert.equal((await containersOf(conv)).length, 1, 'bob\'s reset removed nothing');
    assert.equal(await runOk(alice, 'cat mine.txt'), 'alice\n', 'bob\'s write changed nothing');
  } finally {
    await alice.close();
    await bob.close();
  }
}));

test('10 simultaneous first calls of one new chat make exactly one container', withLogs(tb, async () => {
  const conv = tb.chat('burst');
  const clients = await Promise.all(Array.from({ length: 10 }, () => connect(tb, { conv, user: 'user-1' })));
  try {
    assert.deepEqual(await containersOf(conv), [], 'no container before the first call');
    const results = await Promise.all(clients.map((c, i) => run(c, `echo call-${i}; cat /etc/hostname >/dev/null`)));
    results.forEach((r, i) => {
      assert.equal(r.isError, false, `call ${i}: ${r.text}`);
      assert.equal(r.text, `$ echo call-${i}; cat /etc/hostname >/dev/null\ncall-${i}\n`);
    });
    const made = await containersOf(conv);
    assert.equal(made.length, 1, `containers: ${JSON.stringify(made)}`);
    const ids = new Set();
    for (const c of clients.slice(0, 3)) ids.add(await containerIdFromInside(c));
    assert.deepEqual([...ids], [made[0].id]);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}));

test('20 chats in parallel each get their own output from their own container', withLogs(tb, async () => {
  const convs = Array.from({ length: 20 }, (_, i) => tb.chat(`par${i}`));
  const clients = await Promise.all(convs.map((conv) => connect(tb, { conv, user: 'user-1' })));
  try {
    const cmd = (conv) => `echo ${conv}; grep -o 'containers/[0-9a-f]\\{64\\}' /proc/self/mountinfo | head -n 1 | cut -d/ -f2`;
    const results = await Promise.all(clients.map((c, i) => run(c, cmd(convs[i]), { timeout: 120 })));
    const byConv = new Map((await containersWithPrefix(`${tb.prefix}par`)).map((c) => [c.conv, c.id]));
    assert.equal(byConv.size, 20, 'one container per chat');
    results.forEach((r, i) => {
      assert.equal(r.isError, false, `${convs[i]}: ${r.text}`);
      assert.equal(r.text, `$ ${cmd(convs[i])}\n${convs[i]}\n${byConv.get(convs[i])}\n`);
    });
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}));

test('a sleep 20 in one chat does not delay a call in another chat', withLogs(tb, async () => {
  const x = tb.chat('slow-x');
  const y = tb.chat('fast-y');
  const cx = await connect(tb, { conv: x, user: 'user-1' });
  const cxWatch = await connect(tb, { conv: x, user: 'user-1' });
  const cy = await connect(tb, { conv: y, user: 'user-1' });
  try {
    await Promise.all([runOk(cx, 'true'), runOk(cy, 'true')]);
    let slowDone = false;
    const slow = run(cx, 'sleep 20', { timeout: 60 }).finally(() => { slowDone = true; });
    await waitFor(async () => (await psArgs(cxWatch)).includes('sleep 20'),
      { timeoutMs: 10000, intervalMs: 200, what: 'sleep 20 to be running in chat X' });
    const fast = await run(cy, 'echo y');
    assert.equal(fast.text, '$ echo y\ny\n');
    assert.ok(fast.ms < 5000, `chat Y waited ${fast.ms} ms`);
    assert.equal(slowDone, false, 'chat Y answered while chat X was still sleeping');
    const s = await slow;
    assert.equal(s.isError, false, s.text);
    assert.equal(s.text, '$ sleep 20\n');
    assert.ok(s.ms >= 19000, `sleep 20 came back after ${s.ms} ms`);
  } finally {
    await cx.close();
    await cxWatch.close();
    await cy.close();
  }
}));
