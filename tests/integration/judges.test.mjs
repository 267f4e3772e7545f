// judges.test.mjs -- run_code with two judge workers on one hub, and a
// judge killed with kill -9 in the middle of a call:
//   - killed while the model's program runs (it appends a line to a
//     file): the call is not sent to the other judge, the result says the
//     program may or may not have run and is no PASS, the file never shows
//     a second line, and nothing hangs
//   - killed while the program compiles (it has not started): the call is
//     retried on the other judge and PASSes, the program run once
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

test('a judge killed with kill -9 while the program runs: not run again, and the result says it may or may not have run', withLogs(tb, async () => {
  const conv = tb.chat('killed');
  const c = await connect(tb, { conv, user: USER });
  try {
    await runOk(c, 'rm -f /work/runs.txt'); // the sandbox exists before the timing matters
    // Appends a line, then works 8 s: a second run would show a second line.
    const code = 'import sys, time\nMARK = "slow-sum"\nopen("/work/runs.txt", "a").write("ran\\n")\n'
      + 'time.sleep(8)\nprint(sum(map(int, sys.stdin.read().split())))\n';
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

    let timer;
    const r = await Promise.race([
      pending,
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error('run_code still open 90 s after the kill')), 90000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith('[talkback: the judge stopped while your program was running, so its result is '
      + 'lost: the program may or may not have run to the end, and it was not run again'), r.text);
    assert.match(r.text, /call run_code again\.\]$/);
    assert.ok(!/PASS/.test(r.text), r.text);
    assert.match(gatewayLog(), /worker judge-\d+ \(judge\) .*counted dead/);
    assert.match(gatewayLog(), /request \d+ is not sent again: its program had started/);
    assert.doesNotMatch(gatewayLog(), /retrying request \d+ on another judge/);

    // Never a second line, also once the first run's 8 s are over (it was
    // stopped when its judge died).
    await new Promise((res) => setTimeout(res, 10000));
    assert.equal(await runOk(c, 'cat /work/runs.txt'), 'ran\n');
    assert.doesNotMatch(await rawPs(tb, conv, USER), /python3 main\.py/);

    // The sandbox and the remaining judge serve the chat as before.
    const again = await call(c, 'run_code', { language: 'python', code: 'print(int(input()) * 2)\n', input: '21\n', expected: '42\n' },
      { timeout: 120000 });
    assert.equal(again.isError, false, again.text);
    assert.ok(again.text.endsWith(`output:\n42\n${PASS}`), again.text);
  } finally {
    await c.close();
  }
}));

test('a judge killed with kill -9 before the program starts (while it compiles): the call runs on the other judge, once', withLogs(tb, async () => {
  const conv = tb.chat('compiling');
  const c = await connect(tb, { conv, user: USER });
  try {
    await runOk(c, 'rm -f /work/runs.txt');
    // Two constants the compiler works out for some seconds; the program
    // itself appends one line and prints 5.
    const code = '#include <cstdio>\nconstexpr long slow(long k) {\n  long s = 0;\n'
      + '  for (long i = 0; i < 10000; i++)\n    for (long j = 0; j < 100; j++)\n      s += (i ^ j ^ k) & 7;\n'
      + '  return s;\n}\nconstexpr long A = slow(1), B = slow(2);\nint main() {\n'
      + '  std::FILE *f = std::fopen("/work/runs.txt", "a");\n  std::fputs("ran\\n", f);\n  std::fclose(f);\n'
      + '  std::printf("%d\\n", A > 0 && B > 0 ? 5 : 0);\n}\n';
    const holder = tb.judgePid(0) ? 0 : 1;
    const other = 1 - holder;
    await tb.stopJudge(other); // only the holder takes the call
    const pending = call(c, 'run_code', { language: 'cpp', code, expected: '5\n' }, { timeout: 240000 });
    pending.catch(() => {});
    await waitFor(async () => (await rawPs(tb, conv, USER)).includes('cc1plus'),
      { timeoutMs: 60000, intervalMs: 200, what: 'the compiler to run in the sandbox' });
    await tb.startJudge(other);
    await tb.killJudge(holder);
    assert.equal(await runOk(c, 'cat /work/runs.txt 2>/dev/null | wc -l'), '0\n', 'the program ran before the kill');
    const r = await pending;
    assert.equal(r.isError, false, r.text);
    assert.ok(r.text.endsWith(`output:\n5\n${PASS}`), r.text);
    assert.match(gatewayLog(), /retrying request \d+ on another judge/);
    assert.equal(await runOk(c, 'cat /work/runs.txt'), 'ran\n');
  } finally {
    await c.close();
  }
}));

test('no judge running: run_code says so and nothing hangs; a judge started again serves the next call', withLogs(tb, async () => {
  const conv = tb.chat('nojudge');
  const c = await connect(tb, { conv, user: USER });
  try {
    for (const i of [0, 1]) if (tb.judgePid(i)) await tb.killJudge(i);
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
