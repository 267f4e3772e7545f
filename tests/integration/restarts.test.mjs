// restarts.test.mjs -- talkback across process deaths and restarts:
//   kill -9 of the gateway, then a restart: the chat finds its files again
//   one SDK client, connected before, keeps working across a gateway
//   kill -9 and restart (the server is stateless)
//   kill -9 of the sandbox manager during a call: the call ends with
//   isError within 10 s; after a restart the chat's files are there
//   a restarted sandbox manager still knows a chat's owner (from Docker)
//   no sandbox manager: a call fails within worker_wait_ms with
//   "[talkback: the sandbox manager is not running"; calls work again
//   once it is back, and one that appears during the wait takes the call

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Talkback, withLogs, connect, call, run, runOk, psArgs, containersOf, waitFor,
} from './harness.mjs';

const WORKER_WAIT_MS = 4000;
const tb = new Talkback({ name: 'restarts', env: { TALKBACK_WORKER_WAIT_MS: String(WORKER_WAIT_MS) } });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

/** Until /healthz says no sandbox manager is connected. */
async function waitWorkerGone() {
  await tb.waitHealth(503, 15000);
}

test('gateway kill -9 and restart: the same chat still finds its files', withLogs(tb, async () => {
  const conv = tb.chat('gw-kill');
  const c1 = await connect(tb, { conv, user: 'user-r' });
  await call(c1, 'write_file', { path: 'survives.txt', content: 'still here\n' });
  const [before1] = await containersOf(conv);
  await c1.close();

  const how = await tb.killGateway();
  assert.equal(how.signal, 'SIGKILL');
  assert.equal(await tb.health(), 0, 'nothing answers while the gateway is down');
  await tb.startGateway();
  await tb.waitReady();

  const c2 = await connect(tb, { conv, user: 'user-r' });
  try {
    assert.equal(await runOk(c2, 'cat survives.txt'), 'still here\n');
    const after1 = await containersOf(conv);
    assert.deepEqual(after1.map((c) => c.id), [before1.id], 'the same container');
  } finally {
    await c2.close();
  }
}));

test('one SDK client connected before keeps working across a gateway kill -9 and restart', withLogs(tb, async () => {
  const conv = tb.chat('gw-client');
  const c = await connect(tb, { conv, user: 'user-r' });
  try {
    assert.equal(await runOk(c, 'echo before > f; cat f'), 'before\n');
    await tb.killGateway();
    await tb.startGateway();
    await tb.waitReady();
    // The same Client object, no reconnect.
    assert.equal(await runOk(c, 'echo after >> f; cat f'), 'before\nafter\n');
    const { tools } = await c.listTools();
    assert.ok(tools.some((t) => t.name === 'run'));
  } finally {
    await c.close();
  }
}));

test('sandbox manager kill -9 mid-call: the call ends with isError within 10 s; files are kept', withLogs(tb, async () => {
  const conv = tb.chat('sb-kill');
  const c = await connect(tb, { conv, user: 'user-r' });
  const watcher = await connect(tb, { conv, user: 'user-r' });
  try {
    await call(c, 'write_file', { path: 'kept.txt', content: 'kept\n' });
    const [before1] = await containersOf(conv);
    const pending = run(c, 'sleep 60', { timeout: 120 });
    pending.catch(() => {});
    await waitFor(async () => (await psArgs(watcher)).includes('sleep 60'),
      { timeoutMs: 15000, intervalMs: 200, what: 'sleep 60 to be running' });

    const t0 = Date.now();
    await tb.killSandbox();
    const r = await pending;
    const ms = Date.now() - t0;
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith('[talkback:') && r.text.includes('sandbox manager'), r.text);
    assert.ok(ms < 10000, `the call ended ${ms} ms after the kill`);

    tb.startSandbox();
    await tb.waitReady();
    assert.equal(await runOk(c, 'cat kept.txt'), 'kept\n');
    assert.deepEqual((await containersOf(conv)).map((x) => x.id), [before1.id], 'the same container');
  } finally {
    await c.close();
    await watcher.close();
  }
}));

test('a restarted sandbox manager still refuses another user of an existing chat', withLogs(tb, async () => {
  const conv = tb.chat('owner-restart');
  const alice = await connect(tb, { conv, user: 'alice' });
  const bob = await connect(tb, { conv, user: 'bob' });
  try {
    await runOk(alice, 'echo mine > owner.txt');
    await tb.restartSandbox();
    const r = await run(bob, 'cat owner.txt');
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.includes('belongs to another user'), r.text);
    assert.equal(await runOk(alice, 'cat owner.txt'), 'mine\n');
  } finally {
    await alice.close();
    await bob.close();
  }
}));

test('sandbox manager down: a call fails within worker_wait_ms with a clear error, then works after a restart', withLogs(tb, async () => {
  const conv = tb.chat('no-worker');
  const c = await connect(tb, { conv, user: 'user-r' });
  try {
    await runOk(c, 'echo ready > w.txt');
    await tb.stopSandbox();
    await waitWorkerGone();

    const r = await run(c, 'cat w.txt');
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith('[talkback: the sandbox manager is not running'), r.text);
    assert.ok(r.ms >= WORKER_WAIT_MS - 500, `it gave up after ${r.ms} ms, before worker_wait_ms`);
    assert.ok(r.ms <= WORKER_WAIT_MS + 3000, `it took ${r.ms} ms (worker_wait_ms ${WORKER_WAIT_MS})`);

    const w = await call(c, 'write_file', { path: 'never.txt', content: 'x' });
    assert.equal(w.isError, true, w.text);
    assert.ok(w.text.startsWith('[talkback: the sandbox manager is not running'), w.text);

    tb.startSandbox();
    await tb.waitReady();
    assert.equal(await runOk(c, 'cat w.txt; test ! -e never.txt && echo no-never'), 'ready\nno-never\n');
  } finally {
    await c.close();
  }
}));

test('a sandbox manager that starts during the wait takes the waiting call', withLogs(tb, async () => {
  const conv = tb.chat('late-worker');
  const c = await connect(tb, { conv, user: 'user-r' });
  try {
    await tb.stopSandbox();
    await waitWorkerGone();
    const pending = run(c, 'echo late');
    await new Promise((r) => setTimeout(r, 500));
    tb.startSandbox();
    const r = await pending;
    assert.equal(r.isError, false, r.text);
    assert.equal(r.text, '$ echo late\nlate\n');
    await tb.waitReady();
  } finally {
    await c.close();
  }
}));
