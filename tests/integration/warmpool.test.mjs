// warmpool.test.mjs -- the warm pool of spare sandboxes, against a real dockerd:
//   a new chat's sandbox is a claimed spare, and it is clean: an empty
//   /work, no process but its init and agent, nothing of a chat reset before
//   (the spare is renamed to the chat's name; its chat is in the claim
//   record in state_dir, not in a label)
//   racing first calls of one new chat make one sandbox
//   an empty pool falls back to making the sandbox on the first call
//   a new image behind the `image` name, or another template (config),
//   retires the old spares: they are removed, never handed out
//   the reaper never stops, sizes or evicts a spare as a chat, and does stop
//   a claimed one like any chat
// Every instance removes its spares when it ends (Talkback.cleanup).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, withLogs, connect, run, runOk, containersOf, containerIdFromInside, docker, waitFor,
  randomTag, sparesOf, removeSpares, setLastCall,
} from './harness.mjs';

const execFileP = promisify(execFile);
const REAPER = path.join(BUILD, 'talkback-reaper');
const IMAGE = process.env.TALKBACK_TEST_IMAGE || 'talkback-sandbox:latest';

const tb = new Talkback({ name: 'warmpool' });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

/** Until the instance has n running spares; their ids. */
async function readySpares(t, n) {
  let s = [];
  await waitFor(async () => {
    s = (await sparesOf(t)).filter((c) => c.state === 'running');
    return s.length >= n;
  }, { timeoutMs: 60000, what: `${n} running spares` });
  return s.map((c) => c.id);
}

function claimRecord(t, id) {
  const f = path.join(t.stateDir, `${id}.claim`);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null;
}

test('a new chat claims a spare: renamed to its name, recorded in state_dir, clean', withLogs(tb, async () => {
  // A chat that leaves files and a process behind, then is reset.
  const old = tb.chat('dirty');
  const co = await connect(tb, { conv: old, user: 'user-w' });
  await runOk(co, 'echo secret > /work/left.txt; setsid nohup sleep 4343 >/dev/null 2>&1 & echo ok');
  const oldId = await containerIdFromInside(co);
  const reset = await co.callTool({ name: 'reset', arguments: {} });
  assert.match(reset.content[0].text, /deleted with all its files/);
  await co.close();

  const spares = await readySpares(tb, 2);
  const conv = tb.chat('clean');
  const c = await connect(tb, { conv, user: 'user-w' });
  try {
    const id = await containerIdFromInside(c);
    assert.ok(spares.includes(id), `the chat got one of the spares ${spares} (got ${id})`);
    assert.notEqual(id, oldId);
    assert.equal(await runOk(c, 'ls -A /work; echo end'), 'end\n', '/work of a claimed spare is empty');
    // No process but init and the agent (and this command's own).
    const ps = await runOk(c, 'ps -eo pid=,comm=');
    const others = ps.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/)[1])
      .filter((comm) => !['docker-init', 'talkback-agent', 'ps', 'bash', 'sh'].includes(comm));
    assert.deepEqual(others, [], `processes in a claimed spare:\n${ps}`);
    assert.doesNotMatch(ps, /sleep/);
    assert.match(await runOk(c, 'ls /work/left.txt 2>&1; true'), /No such file/);

    // Its name is the chat's; its chat is in the claim record, not a label.
    const name = (await docker('inspect', '--format', '{{.Name}}', id)).trim();
    assert.match(name, new RegExp(`^/talkback-${conv}-[0-9a-f]{16}$`));
    const labels = JSON.parse(await docker('inspect', '--format', '{{json .Config.Labels}}', id));
    assert.equal(labels['talkback.conversation'], undefined);
    assert.match(labels['talkback.spare'], /^[0-9a-f]{16}$/);
    assert.equal(claimRecord(tb, id), `${conv}\nuser-w\n`);
    assert.deepEqual((await containersOf(conv)).map((x) => x.id), [id]);

    // The chat belongs to its user, as a made one does.
    const other = await connect(tb, { conv, user: 'user-x' });
    const r = await run(other, 'true');
    assert.equal(r.isError, true);
    assert.match(r.text, /belongs to another user/);
    await other.close();

    // The pool fills again, and the spares are new ones.
    const again = await readySpares(tb, 2);
    assert.ok(!again.includes(id));
  } finally {
    await c.close();
  }
}));

test('racing first calls of one new chat make one sandbox', withLogs(tb, async () => {
  await readySpares(tb, 2);
  const conv = tb.chat('race');
  const clients = await Promise.all(Array.from({ length: 6 }, () => connect(tb, { conv })));
  try {
    const ids = await Promise.all(clients.map((c) => containerIdFromInside(c)));
    assert.equal(new Set(ids).size, 1, `one container for all calls: ${ids}`);
    const found = await containersOf(conv);
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.equal(found[0].id, ids[0]);
    // A spare that lost the race went back to the pool untouched.
    for (const s of await sparesOf(tb)) assert.equal(claimRecord(tb, s.id), null);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}));

test('an empty pool falls back to making the sandbox on the first call', withLogs(tb, async () => {
  const t1 = new Talkback({ name: 'warmpool-one', sandboxEnv: { TALKBACK_WARM_POOL: '1' } });
  await t1.start();
  try {
    const [spare] = await readySpares(t1, 1);
    const convs = [t1.chat('a'), t1.chat('b'), t1.chat('c')];
    const clients = await Promise.all(convs.map((conv) => connect(t1, { conv })));
    const ids = await Promise.all(clients.map((c) => containerIdFromInside(c)));
    assert.equal(new Set(ids).size, 3);
    assert.equal(ids.filter((id) => id === spare).length, 1, 'one chat got the spare');
    const log = fs.readFileSync(path.join(t1.dir, 'sandbox.log'), 'utf8');
    assert.equal((log.match(/created sandbox talkback-/g) || []).length, 2, 'two were made on their call');
    for (const [i, c] of clients.entries()) {
      assert.equal(await runOk(c, 'ls -A /work; echo end'), 'end\n');
      assert.equal((await containersOf(convs[i])).length, 1);
      await c.close();
    }
  } finally {
    await t1.cleanup();
  }
  assert.equal((await sparesOf(t1)).length, 0, 'a stopped manager removes its spares');
}));

test('with warm_pool 0 there are no spares', withLogs(tb, async () => {
  const t0 = new Talkback({ name: 'warmpool-off', sandboxEnv: { TALKBACK_WARM_POOL: '0' } });
  await t0.start();
  try {
    const c = await connect(t0, { conv: t0.chat('x') });
    await runOk(c, 'true');
    await c.close();
    assert.equal((await sparesOf(t0)).length, 0);
  } finally {
    await t0.cleanup();
  }
}));

test('a new image behind `image`, or another template, retires the old spares', withLogs(tb, async () => {
  const tag = `talkback-warm-${randomTag()}:img`;
  await docker('tag', IMAGE, tag);
  const t2 = new Talkback({
    name: 'warmpool-image',
    env: { TALKBACK_IMAGE: tag },
    sandboxEnv: { TALKBACK_WARM_POOL: '1', TALKBACK_WARM_POOL_CHECK: '1s' },
  });
  let newImage = null;
  try {
    await t2.start();
    const [old] = await readySpares(t2, 1);
    // The tag now names another image (one more label on top).
    const { stdout } = await execFileP('sh', ['-c',
      `printf 'FROM %s\\nLABEL talkback.test.warm=%s\\n' '${IMAGE}' '${tag}' | docker build -q -t '${tag}' -`]);
    newImage = stdout.trim();
    const conv = t2.chat('newimg');
    const c = await connect(t2, { conv });
    const id = await containerIdFromInside(c);
    await c.close();
    assert.notEqual(id, old, 'a spare of the old image is not handed out');
    assert.equal((await docker('inspect', '--format', '{{.Image}}', id)).trim(), newImage);
    await waitFor(async () => !(await sparesOf(t2)).some((s) => s.id === old),
      { timeoutMs: 30000, what: 'the old spare to be removed' });
    const [fresh] = await readySpares(t2, 1);
    assert.equal((await docker('inspect', '--format', '{{.Image}}', fresh)).trim(), newImage);

    // A manager killed leaves its spare; started with another template
    // (memory), it removes it and makes a new one.
    const before = (await sparesOf(t2)).find((s) => s.id === fresh);
    await t2.killSandbox();
    assert.ok((await sparesOf(t2)).some((s) => s.id === fresh), 'a killed manager leaves its spare');
    t2.startSandbox({ TALKBACK_MEMORY: '640m' });
    await t2.waitReady();
    await waitFor(async () => {
      const s = (await sparesOf(t2)).filter((x) => x.state === 'running');
      return s.length === 1 && s[0].id !== fresh && s[0].hash !== before.hash;
    }, { timeoutMs: 60000, what: 'the spare of the old template replaced' });
    const [made] = await readySpares(t2, 1);
    assert.equal((await docker('inspect', '--format', '{{.HostConfig.Memory}}', made)).trim(),
      String(640 * 1024 * 1024));
  } finally {
    await t2.cleanup();
    await removeSpares(t2);
    await docker('rmi', tag).catch(() => {});
    if (newImage) await docker('rmi', newImage).catch(() => {});
  }
}));

test('the reaper never stops or evicts a spare; a claimed one is a chat like any', withLogs(tb, async () => {
  const spares = await readySpares(tb, 2);
  const conv = tb.chat('reaped');
  const c = await connect(tb, { conv });
  const id = await containerIdFromInside(c);
  await c.close();
  await setLastCall(tb, conv, new Date(Date.now() - 3 * 3600 * 1000));
  const left = spares.filter((s) => s !== id);

  // Over every chat on this Docker, all idle and over every keep limit:
  // a dry run names no spare.
  const dry = await execFileP(REAPER, ['--dry-run', '--reaper_prefix', '', '--reaper_clock_offset', '400d',
    '--keep_max_count', '0', '--keep_max_age', '1s', '--disk_cap', '1'], { env: tb.env({}), timeout: 120000 });
  for (const s of left) assert.ok(!dry.stdout.includes(s.slice(0, 12)), dry.stdout);
  assert.doesNotMatch(dry.stdout, /talkback-spare-/);

  // A real sweep over this file's chats: the claimed one is stopped, then
  // evicted; the spares run on.
  const env = tb.env({});
  const out = await execFileP(REAPER, ['--once', '--reaper_prefix', tb.prefix + 'reaped-'], { env, timeout: 120000 });
  assert.match(out.stdout, /1 stopped/);
  assert.equal((await docker('inspect', '-f', '{{.State.Status}}', id)).trim(), 'exited');
  const ev = await execFileP(REAPER, ['--once', '--reaper_prefix', tb.prefix + 'reaped-', '--keep_max_count', '0'],
    { env, timeout: 120000 });
  assert.match(ev.stdout, /1 removed/);
  assert.equal((await containersOf(conv)).length, 0);
  assert.equal(claimRecord(tb, id), null, 'the claim record goes with its sandbox');
  const now = (await sparesOf(tb)).filter((s) => s.state === 'running').map((s) => s.id);
  for (const s of left) assert.ok(now.includes(s), `spare ${s} still runs`);
}));
