// judges.test.mjs -- run_code with two judge workers on one hub, and a
// judge killed with kill -9 in the middle of a call:
//   - the call held by the killed judge is retried on the other judge and
//     still ends with the PASS text, within its deadline, never hanging
//   - the chat's sandbox works afterwards (run and run_code)
//   - with no judge left, run_code says the judge is not running; a judge
//     started again serves the next call

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Talkback, withLogs, connect, call, runOk, rawPs, waitFor } from './harness.mjs';

const tb = new Talkback({ name: 'judges', judges: 2 });
const USER = 'user-judges';
const PASS = 'PASS: the output matches the expected output.\n';

before(async () => {
  // Judge 0 only: judge 1 is started once judge 0 holds the call.
  await tb.start({ judges: 1 });
});

after(async () => {
  await tb.cleanup();
});

const gatewayLog = () => fs.readFileSync(path.join(tb.dir, 'gateway.log'), 'utf8');

test('a judge killed with kill -9 mid-call: the call is retried on the other judge and PASSes', withLogs(tb, async () => {
  const conv = tb.chat('killed');
  const c = await connect(tb, { conv, user: USER });
  try {
    await runOk(c, 'true'); // the sandbox exists before the timing matters
    const code = 'import sys, time\nMARK = "slow-sum"\ntime.sleep(8)\n'
      + 'print(sum(map(int, sys.stdin.read().split())))\n';
    const pending = call(c, 'run_code', { language: 'python', code, input: '2 3\n', expected: '5\n', timeout: 30 },
      { timeout: 240000 });
    pending.catch(() => {});

    // Judge 0 is the only judge, so it holds the call once the program runs.
    await waitFor(async () => (await rawPs(tb, conv, USER)).includes('python3 main.py'),
      { timeoutMs: 60000, intervalMs: 300, what: 'python3 main.py to run in the sandbox' });
    const seenAt = Date.now();
    await tb.startJudge(1);
    const killedAt = Date.now();
    await tb.killJudge(0);
    assert.ok(killedAt - seenAt < 6000, `judge 0 was killed ${killedAt - seenAt} ms after the program was seen `
      + 'running: it may be done already');

    // Never hanging: the call's own deadline is 30 s + compile allowance + grace; here it must end well before.
    let timer;
    const r = await Promise.race([
      pending,
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error('run_code still open 90 s after the kill')), 90000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.equal(r.isError, false, r.text);
    // The run's time line comes before its run line (judge2.test.mjs tests it).
    assert.ok(r.text.replace(/^Run: [^\n]*\n/m, '')
      .startsWith(`Saved /work/main.py (${code.length} bytes).\n$ python3 main.py < main.in\n`), r.text);
    assert.ok(r.text.endsWith(`output:\n5\n${PASS}`), r.text);
    assert.ok(!r.text.includes("Don't answer yet"), r.text);
    // The retry ran the whole program again: at least its 8 s after the kill.
    assert.ok(Date.now() - killedAt >= 7500, `answered ${Date.now() - killedAt} ms after the kill`);
    assert.match(gatewayLog(), /worker judge-\d+ \(judge\) .*counted dead/);
    assert.match(gatewayLog(), /retrying request \d+ on another judge/);

    // The sandbox and the remaining judge serve the chat as before.
    assert.equal(await runOk(c, 'cat /work/main.py'), code);
    const again = await call(c, 'run_code', { language: 'python', code: 'print(int(input()) * 2)\n', input: '21\n', expected: '42\n' },
      { timeout: 120000 });
    assert.equal(again.isError, false, again.text);
    assert.ok(again.text.endsWith(`output:\n42\n${PASS}`), again.text);
  } finally {
    await c.close();
  }
}));

test('no judge running: run_code says so and nothing hangs; a judge started again serves the next call', withLogs(tb, async () => {
  const conv = tb.chat('nojudge');
  const c = await connect(tb, { conv, user: USER });
  try {
    await tb.killJudge(1);
    assert.equal(tb.judgePid(0), null);
    assert.equal(tb.judgePid(1), null);
    const r = await call(c, 'run_code', { language: 'python', code: 'print(1)\n', expected: '1\n' }, { timeout: 60000 });
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith("[talkback: the judge is not running, so nothing ran. "), r.text);
    assert.ok(r.ms < 30000, `the answer took ${r.ms} ms`);

    await tb.startJudge(0);
    const ok = await call(c, 'run_code', { language: 'python', code: 'print(1)\n', expected: '1\n' }, { timeout: 120000 });
    assert.equal(ok.isError, false, ok.text);
    assert.ok(ok.text.endsWith(`output:\n1\n${PASS}`), ok.text);
  } finally {
    await c.close();
  }
}));
