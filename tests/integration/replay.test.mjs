// replay.test.mjs -- recording and replay:
//   with TALKBACK_RECORD set, the gateway appends every queued request and
//   its reply; talkback-replay, run on the same hub endpoint while the
//   gateway is stopped, re-sends them to the connected sandbox manager:
//   a deterministic recording (write_file, run cat, run with exit 3, and
//   reset last so replay starts from the same clean state) replays with
//   exit 0 and "0 differ"; a recording of `date +%s%N` replays with exit 1
//   and the differing request shown

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, withLogs, connect, call, run, runOk, containersOf, BIN } from './harness.mjs';

const tb = new Talkback({ name: 'replay' });
const rec1 = path.join(tb.dir, 'first.rec');
const rec2 = path.join(tb.dir, 'tampered.rec');

before(async () => {
  tb.gatewayEnv = { TALKBACK_RECORD: rec1 };
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

/** talkback-replay FILE on this instance's hub: {code, stdout, stderr}. */
function replay(file) {
  return new Promise((resolve) => {
    execFile(BIN.replay, [file], { env: tb.env({}), timeout: 120000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

test('a recording of write_file, run and reset replays with every reply the same (exit 0, "0 differ")', withLogs(tb, async () => {
  const conv = tb.chat('rec');
  const c = await connect(tb, { conv, user: 'user-rec' });
  try {
    const w = await call(c, 'write_file', { path: 'src/hello.txt', content: 'hello "replay"\n' });
    assert.equal(w.text, 'Wrote 15 bytes to /work/src/hello.txt.');
    assert.equal(await runOk(c, 'cat src/hello.txt'), 'hello "replay"\n');
    const e = await run(c, 'echo failing; exit 3');
    assert.equal(e.isError, true);
    const r = await call(c, 'reset', {});
    assert.ok(r.text.startsWith("[Reset: this chat's sandbox was deleted"), r.text);
  } finally {
    await c.close();
  }
  await tb.stopGateway(); // replay binds the hub endpoint itself
  assert.ok(fs.statSync(rec1).size > 0, 'the recording has content');

  const out = await replay(rec1);
  assert.equal(out.code, 0, `talkback-replay exited ${out.code}\n${out.stdout}\n${out.stderr}`);
  assert.match(out.stdout, /replayed 4 requests: 4 same, 0 differ/);
  assert.doesNotMatch(out.stdout, /DIFFERS/);
  assert.deepEqual(await containersOf(conv), [], 'the replayed reset removed the sandbox again');
}));

test('a recording whose command prints the time replays with a difference (exit 1)', withLogs(tb, async () => {
  await tb.startGateway({ TALKBACK_RECORD: rec2 });
  await tb.waitReady();
  const conv = tb.chat('tamper');
  const c = await connect(tb, { conv, user: 'user-rec' });
  try {
    await runOk(c, 'date +%s%N');
    const r = await call(c, 'reset', {});
    assert.equal(r.isError, false, r.text);
  } finally {
    await c.close();
  }
  await tb.stopGateway();

  const out = await replay(rec2);
  assert.equal(out.code, 1, `talkback-replay exited ${out.code}\n${out.stdout}\n${out.stderr}`);
  assert.match(out.stdout, /replayed 2 requests: 1 same, 1 differ/);
  assert.match(out.stdout, /DIFFERS: request 1: sandbox run/);

  await tb.startGateway();
  await tb.waitReady();
}));
