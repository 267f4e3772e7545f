// jobs.test.mjs -- a `run` still running when its call must answer goes on
// as job N (issue 24, items 1-3), through MCP against real sandboxes, with
// a short client_timeout (20 s, so a call answers at about 17 s):
//   a long command answers before the ceiling as a job, and its work
//   completes (a file it writes appears later)
//   `talkback job N` shows its new output and exit code, and then the end
//   is not said again; `talkback jobs` lists; an unknown N says what to run
//   the end of a job nobody asked about is said once, at the top of the
//   chat's next result
//   a `timeout` above the ceiling ends the job at that timeout
//   the model's short `timeout` and a cancel still kill (no job)
//   the quiet case: no notice when no job ended
// and, with client_timeout = 40 s, a `timeout` of 30 s is accepted and a
// 25 s command simply finishes within its call.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, run, runOk, post, tid, rawPs, waitFor, sleep } from './harness.mjs';

const tb = new Talkback({ name: 'jobs', env: { TALKBACK_CLIENT_TIMEOUT: '20s' } });
const clients = [];

before(async () => {
  await tb.start();
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await tb.cleanup();
});

// `talkback job N` until the job ended (a loaded machine's slow set-up can
// leave a job more to do than one call's wait): every text, and the last.
async function follow(c, n) {
  const texts = [];
  for (let i = 0; i < 4; i++) {
    const j = await run(c, `talkback job ${n}`, { callTimeout: 60000 });
    texts.push(j.text);
    if (!/\] is still running|is still running, for/.test(j.text)) return { texts, last: j };
    assert.match(j.text, new RegExp(`\\[job ${n} \\(\`[^\n]*\`\\) is still running, for [0-9a-z ]+ so far\\. Its whole output is in /run/talkback/jobs/${n}/out\\. Run \`talkback job ${n}\` again to wait for more\\.\\]\\n$`));
  }
  assert.fail(`job ${n} did not end: ${texts.join('\n')}`);
}

async function chat(label, t = tb) {
  const conv = t.chat(label);
  const c = await connect(t, { conv, user: 'user-jobs' });
  clients.push(c);
  return { c, conv };
}

// The line a result gains when its command goes on as a job: its number.
function jobOf(text) {
  const m = text.match(/\n\[Still running after \d+ s, so this call answers now: the command goes on in the background as job (\d+), and is stopped at its timeout of \d+ s like any command\. Its whole output goes to \/run\/talkback\/jobs\/(\d+)\/out\. Check on it with `talkback job (\d+)` /);
  assert.ok(m, text);
  assert.equal(m[1], m[2]);
  assert.equal(m[1], m[3]);
  return Number(m[1]);
}

test('a long command answers before the ceiling as a job; `talkback job N` shows its end once', withLogs(tb, async () => {
  const { c } = await chat('long');
  await runOk(c, 'echo warm'); // the sandbox is set up: the command gets the call's share
  const cmd = 'echo begun; sleep 21; echo done > /work/j1.txt; echo finished';
  const r = await run(c, cmd, { timeout: 120, callTimeout: 60000 });
  assert.ok(r.ms < 20000, `answered after ${r.ms} ms`);
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^\$ echo begun; sleep 21; [^\n]*\nbegun\n\[Still running after \d+ s/);
  const n = jobOf(r.text);
  assert.doesNotMatch(r.text, /\[exit code|\[timed out|\[cancelled/);
  assert.equal(await runOk(c, 'test -e /work/j1.txt && echo yes || echo not yet'), 'not yet\n');

  // It waits for the job (within its own call) and shows the output not shown yet.
  const { texts, last: j } = await follow(c, n);
  assert.equal(j.isError, false, j.text);
  assert.equal(texts.join('').match(/\nfinished\n/g).length, 1, texts.join(''));
  assert.match(j.text, new RegExp(`^\\$ talkback job ${n}\\n(finished\\n)?\\[job ${n} \\(\`echo begun; sleep 21; echo done > /work/j1\\.txt; echo finished\`\\) finished with exit code 0 after 2\\d s\\. Its whole output is in /run/talkback/jobs/${n}/out\\.\\]\\n$`));
  assert.doesNotMatch(texts.join(''), /\nbegun\n/);
  // Its work completed; its whole output is kept.
  assert.equal(await runOk(c, 'cat /work/j1.txt'), 'done\n');
  // Told by `talkback job N`: not said again (the quiet case after it).
  assert.equal(await runOk(c, `cat /run/talkback/jobs/${n}/out`), 'begun\nfinished\n');
  const again = await run(c, 'echo quiet');
  assert.equal(again.text, '$ echo quiet\nquiet\n');

  // A timeout above the ceiling: a job, stopped at its own timeout with all it started.
  const t = await run(c, 'sleep 101 & sleep 102; echo never', { timeout: 24, callTimeout: 60000 });
  const k = jobOf(t.text);
  assert.ok(k > n, t.text);
  assert.match(t.text, /stopped at its timeout of 24 s/);
  const { last: e } = await follow(c, k);
  assert.match(e.text, new RegExp(`\\[job ${k} \\(\`sleep 101 & sleep 102; echo never\`\\) timed out after 2\\d s: it and everything it started were killed at its timeout\\.`), e.text);
  assert.doesNotMatch(e.text, /\nnever\n|Killed with SIGKILL/);
  assert.match(e.text, /\]\n\[exit code 1\]\n$/);
  assert.doesNotMatch(await runOk(c, 'ps -eo args'), /sleep 10[12]/);

  // `talkback jobs` lists both; an unknown number says what to run.
  const list = await runOk(c, 'talkback jobs');
  assert.match(list, /^JOB  STATE +STARTED \(UTC\) +COMMAND\n/);
  assert.match(list, new RegExp(`\\n${n} +exit code 0 +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +echo begun; sleep 21;`));
  assert.match(list, new RegExp(`\\n${k} +timed out \\(137\\) +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +sleep 101 & sleep 102`));
  const none = await run(c, 'talkback job 99');
  assert.match(none.text, /\[talkback: there is no job 99 in this sandbox\. Run `talkback jobs` to list the jobs there are\.\]\n\[exit code 2\]\n$/);
}));

test('the end of a job is said once, at the top of the next result', withLogs(tb, async () => {
  const { c } = await chat('notice');
  const quiet = await run(c, 'echo first');
  assert.equal(quiet.text, '$ echo first\nfirst\n');
  const r = await run(c, "sleep 19; echo 'a `tick` and\tmore'; exit 3", { timeout: 60, callTimeout: 60000 });
  const n = jobOf(r.text);
  await sleep(4000); // it ends meanwhile
  const next = await run(c, 'echo next');
  assert.match(next.text, new RegExp(`^\\[Job ${n} \\(\`sleep 19; echo 'a 'tick' and more'; exit 3\`\\), which went on after its call, finished with exit code 3 after 19 s\\. Its whole output is in /run/talkback/jobs/${n}/out \\(\`talkback job ${n}\` shows what was not shown yet\\)\\.\\]\\n\\$ echo next\\nnext\\n$`));
  const after = await run(c, 'echo after');
  assert.equal(after.text, '$ echo after\nafter\n');
  // What was not shown yet is still there for `talkback job N`.
  const j = await run(c, `talkback job ${n}`);
  assert.match(j.text, /^\$ talkback job \d+\na `tick` and\tmore\n\[job \d+ [^\n]*\]\n\[exit code 3\]\n$/);
  assert.equal(j.isError, true); // the job's own exit code
}));

test('the model\'s short timeout and a cancel still kill: no job', withLogs(tb, async () => {
  const { c, conv } = await chat('kill');
  const r = await run(c, 'echo x; sleep 30', { timeout: 3 });
  assert.match(r.text, /\n\[timed out after 3 s: the command and everything it started were killed\./);
  assert.doesNotMatch(r.text, /job/);
  // Cancelled the way a client that sends notifications/cancelled does.
  const headers = { 'X-Conversation-Id': conv, 'X-User-Id': 'user-jobs' };
  const id = tid();
  const pending = post(tb, {
    jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: 'run', arguments: { command: 'echo begun; sleep 778', timeout: 600 } },
  }, { headers, accept: 'application/json' });
  await waitFor(async () => (await rawPs(tb, conv, 'user-jobs')).includes('sleep 778'),
    { timeoutMs: 15000, intervalMs: 200, what: 'sleep 778 to be running' });
  await post(tb, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }, { headers });
  await pending;
  await waitFor(async () => !(await rawPs(tb, conv, 'user-jobs')).includes('sleep 778'),
    { timeoutMs: 10000, intervalMs: 300, what: 'sleep 778 gone' });
  assert.match(await runOk(c, 'talkback jobs'), /^\[talkback: no job has run in this sandbox yet\.\]\n$/);
}));

test('with client_timeout = 40 s, run takes a timeout of 30 s and a 25 s command just finishes', async () => {
  const tb40 = new Talkback({ name: 'jobs40', env: { TALKBACK_CLIENT_TIMEOUT: '40s' } });
  await tb40.start();
  try {
    const { c } = await chat('forty', tb40);
    const r = await run(c, 'sleep 25; echo ok', { timeout: 30, callTimeout: 60000 });
    assert.equal(r.text, '$ sleep 25; echo ok\nok\n');
    const big = await run(c, 'echo fine', { timeout: 1800 });
    assert.equal(big.text, '$ echo fine\nfine\n');
    const over = await run(c, 'echo no', { timeout: 1801 });
    assert.match(over.text, /must be between 1 and 1800 seconds \(default 38\)\. Call run again with a timeout in that range/);
  } finally {
    await tb40.cleanup();
  }
});
