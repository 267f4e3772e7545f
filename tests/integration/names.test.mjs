// names.test.mjs -- what the sandbox manager names and keeps on disk:
//   - two conversation ids whose container names were one under the old
//     hash (FNV-1a 64; the ids differ only in ':' and '_', which a Docker
//     name folds together) get two sandboxes now, each its own files
//   - a kept sandbox made under the old name is found under it: its files
//     are there, no second container is made, and reset removes it
//   - state_dir is made 0700 and its records 0600; a folder and records
//     left open to others are tightened when the manager starts

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, withLogs, connect, call, runOk, containersOf, docker } from './harness.mjs';

// Two ids with one container name under FNV-1a 64 (found once with a
// distinguished-point search over the 2^64 ways to spell them).
const COLLIDE_A = 'c____:::::::_:___:_::_:_:::__::___::_:___:_:__::_____:__:::_::__:';
const COLLIDE_B = 'c__:______:___:_____:_:__::_:___:::::__:__:_::___::_::::_:::::_:_';

// No warm pool: a claimed spare carries no conversation label, and the
// harness would read an id with ':' back from its name as '_'.
const tb = new Talkback({ name: 'names', env: { TALKBACK_WARM_POOL: '0' } });
const OLD_RECORD = 'aaaaaaaaaaaa.last-call';

/** The container name of an id under the old scheme (common/convid.c,
 *  convid_container_name_v1). */
function oldName(id) {
  let h = 1469598103934665603n;
  for (const b of Buffer.from(id)) h = ((h ^ BigInt(b)) * 1099511628211n) & 0xffffffffffffffffn;
  return `talkback-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}-${h.toString(16).padStart(16, '0')}`;
}

async function removeChat(conv) {
  const ids = (await containersOf(conv)).map((c) => c.id);
  if (ids.length) await docker('rm', '-f', '-v', ...ids).catch(() => {});
}

before(async () => {
  // A state_dir an older talkback left open to others.
  fs.mkdirSync(tb.stateDir, { mode: 0o755 });
  fs.chmodSync(tb.stateDir, 0o755);
  fs.writeFileSync(path.join(tb.stateDir, OLD_RECORD), '');
  fs.chmodSync(path.join(tb.stateDir, OLD_RECORD), 0o644);
  for (const conv of [COLLIDE_A, COLLIDE_B]) await removeChat(conv);
  await tb.start();
});

after(async () => {
  for (const conv of [COLLIDE_A, COLLIDE_B]) await removeChat(conv);
  await tb.cleanup();
});

test('two ids that shared a container name under the old hash get a sandbox each', withLogs(tb, async () => {
  assert.notEqual(COLLIDE_A, COLLIDE_B);
  assert.equal(oldName(COLLIDE_A), oldName(COLLIDE_B), 'the ids collide under the old hash');
  const a = await connect(tb, { conv: COLLIDE_A, user: 'user-names' });
  const b = await connect(tb, { conv: COLLIDE_B, user: 'user-names' });
  try {
    await call(a, 'write_file', { path: 'who.txt', content: 'A\n' });
    await call(b, 'write_file', { path: 'who.txt', content: 'B\n' });
    assert.equal(await runOk(a, 'cat who.txt'), 'A\n');
    assert.equal(await runOk(b, 'cat who.txt'), 'B\n');
    const [ca] = await containersOf(COLLIDE_A);
    const [cb] = await containersOf(COLLIDE_B);
    assert.ok(ca && cb && ca.id !== cb.id, 'two containers');
    const names = (await docker('inspect', '--format', '{{.Name}}', ca.id, cb.id)).trim().split('\n');
    assert.notEqual(names[0], names[1]);
    for (const n of names) assert.match(n, /^\/talkback-c[_]{64}-[0-9a-f]{16}$/);
  } finally {
    await a.close();
    await b.close();
  }
}));

test('a kept sandbox under the old name keeps its files, gets no twin, and resets', withLogs(tb, async () => {
  const conv = tb.chat('oldname');
  const c = await connect(tb, { conv, user: 'user-names' });
  try {
    await call(c, 'write_file', { path: 'kept.txt', content: 'from before\n' });
    const [before1] = await containersOf(conv);
    // As a sandbox made before names were SHA-256 would be named.
    await docker('rename', before1.id, oldName(conv));
    await tb.restartSandbox(); // it remembered the container by id
    assert.equal(await runOk(c, 'cat kept.txt'), 'from before\n');
    const after1 = await containersOf(conv);
    assert.deepEqual(after1.map((x) => x.id), [before1.id], 'the same container, no second one');
    const r = await call(c, 'reset', {});
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(await containersOf(conv), []);
  } finally {
    await c.close();
  }
}));

test('state_dir is 0700 and its records 0600, also those made before', withLogs(tb, async () => {
  assert.equal(fs.statSync(tb.stateDir).mode & 0o777, 0o700);
  assert.equal(fs.statSync(path.join(tb.stateDir, OLD_RECORD)).mode & 0o777, 0o600);
  const conv = tb.chat('records');
  const c = await connect(tb, { conv, user: 'user-names' });
  try {
    await runOk(c, 'true');
  } finally {
    await c.close();
  }
  const [ct] = await containersOf(conv);
  const files = fs.readdirSync(tb.stateDir).filter((f) => f.startsWith(ct.id));
  assert.ok(files.length > 0, 'no record of the new sandbox');
  for (const f of files) assert.equal(fs.statSync(path.join(tb.stateDir, f)).mode & 0o777, 0o600, f);
  assert.match(fs.readFileSync(path.join(tb.dir, 'sandbox.log'), 'utf8'), /state_dir .* was mode 0755: made 0700/);
}));
