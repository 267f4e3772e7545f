// agent.test.mjs -- the fast path: the in-sandbox agent (agent/agent.c)
// against the Docker exec path, side by side.
//
// Two talkback instances share the dockerd: one whose sandbox manager has
// the agent (TALKBACK_AGENT_PATH=build/talkback-agent) and one without it
// (TALKBACK_AGENT_PATH=/nonexistent: exec only).  Every case runs in both
// and the texts the model reads must be byte-identical: exit codes and
// signals, stdout/stderr order, the output cap's cut line, the timeout
// text and what a timeout kills, closed stdin, the environment, output of
// background jobs, cancellation, write_file (also onto a folder, which
// falls back to Docker's archive API), run_code in Python and C++.
// Then the agent's own robustness: its worker killed from outside, and by
// the command it runs; the manager restarted (re-attaches); a stopped
// sandbox resumed; a sandbox made the old way (no agent) used by the
// manager that has one.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, BUILD, withLogs, connect, call, run, docker, containersOf, waitFor, post, tid, rawPs,
} from './harness.mjs';

const AGENT = path.join(BUILD, 'talkback-agent');
const fast = new Talkback({ name: 'agent', sandboxEnv: { TALKBACK_AGENT_PATH: AGENT }, judges: 1 });
// The exec-only instance stands for a manager of before the agent: it made
// its sandboxes itself, with no warm pool (a claimed spare's record would be
// in its own state_dir, which the agent instance does not read).
const slow = new Talkback({
  name: 'exec', sandboxEnv: { TALKBACK_AGENT_PATH: '/nonexistent', TALKBACK_WARM_POOL: '0' }, judges: 1,
});
const USER = 'user-agent';
let cf; // client of the agent instance
let cs; // client of the exec instance
let convF;
let convS;

before(async () => {
  await Promise.all([fast.start(), slow.start()]);
  convF = fast.chat('same');
  convS = slow.chat('same');
  cf = await connect(fast, { conv: convF, user: USER });
  cs = await connect(slow, { conv: convS, user: USER });
  await Promise.all([run(cf, 'true'), run(cs, 'true')]);
});

after(async () => {
  await cf?.close().catch(() => {});
  await cs?.close().catch(() => {});
  await Promise.all([fast.cleanup(), slow.cleanup()]);
});

const both = (fn) => withLogs(fast, withLogs(slow, fn));

/** The same call on both paths: [agent answer, exec answer]. */
async function twice(name, args) {
  return Promise.all([call(cf, name, args, { timeout: 180000 }), call(cs, name, args, { timeout: 180000 })]);
}

async function same(command, timeout) {
  const args = { command };
  if (timeout !== undefined) args.timeout = timeout;
  const [a, b] = await twice('run', args);
  assert.equal(a.text, b.text, `texts differ for ${JSON.stringify(command)}`);
  assert.equal(a.isError, b.isError);
  return a;
}

test('the agent instance runs its sandbox on the agent, the other on sleep', both(async () => {
  const [idF] = await containersOf(convF);
  const [idS] = await containersOf(convS);
  const f = JSON.parse(await docker('inspect', idF.id))[0];
  const s = JSON.parse(await docker('inspect', idS.id))[0];
  assert.deepEqual(f.Config.Cmd, ['/usr/local/lib/talkback/talkback-agent']);
  assert.equal(f.HostConfig.LogConfig.Type, 'none');
  assert.equal(f.Config.OpenStdin, true);
  assert.equal(f.Config.StdinOnce, false);
  assert.deepEqual(s.Config.Cmd, ['sleep', 'infinity']);
  assert.equal(s.HostConfig.LogConfig.Type, 'json-file');
  // The agent starts bash itself (its own timeout, its own 2>&1); Docker
  // exec starts it under timeout.
  const cmd = 'cat /proc/$PPID/comm';
  assert.equal((await run(cf, cmd)).text, `$ ${cmd}\ntalkback-agent\n`);
  assert.equal((await run(cs, cmd)).text, `$ ${cmd}\ntimeout\n`);
}));

test('exit codes and signals read the same', both(async () => {
  await same('echo out; exit 3');
  await same('false');
  await same('true');
  await same('exit 255');
  await same('kill -SEGV $$');
  await same('kill -9 $$');
  await same('kill -TERM $$; sleep 1');
  await same('no-such-command-here');
}));

test('stdout and stderr keep their order', both(async () => {
  await same('echo a; echo b >&2; echo c; printf d >&2; echo e');
  await same('for i in $(seq 1 300); do echo "o$i"; echo "e$i" >&2; done');
  await same('printf "no newline at the end"');
}));

test('the output cap cuts the same middle', both(async () => {
  const r = await same('seq 1 200000');
  assert.match(r.text, /bytes cut from the middle of the output/);
  await same('head -c 300000 /dev/zero | tr "\\0" "x"; echo; echo end >&2');
}));

test('a timeout reads the same and kills the same processes', both(async () => {
  const cmd = '(trap "" TERM; sleep 301) & setsid sh -c "sleep 302 & sleep 303" & echo started; sleep 60';
  const r = await same(cmd, 1);
  assert.match(r.text, /\[timed out after 1 s/);
  for (const [tb, conv] of [[fast, convF], [slow, convS]]) {
    await waitFor(async () => !/sleep 30[123]/.test(await rawPs(tb, conv, USER)),
      { timeoutMs: 10000, intervalMs: 300, what: `no sleep 301-303 left in ${tb.name}` });
  }
}));

test('stdin is closed and the environment is the same', both(async () => {
  await same('cat; echo "cat=$?"; read x; echo "read=$?"; [ -t 0 ] && echo tty || echo notty; ls -l /proc/self/fd/0 | sed "s/.*-> //"');
  await same('env | sed "s/^TALKBACK_RUN=.*/TALKBACK_RUN=x/; s/^TALKBACK_ANSWER_AT=.*/TALKBACK_ANSWER_AT=x/"');
  await same('pwd; umask; ulimit -n; id; echo "$PPID" | grep -c . ; trap -p; echo "$-"');
  await same('cat /proc/self/status | grep -E "^(SigIgn|SigBlk|Cap(Eff|Bnd))"');
}));

test('output written after the command ended is kept for a moment, like Docker does', both(async () => {
  await same('(sleep 0.5; echo late) & echo now');
  const [a, b] = await twice('run', { command: 'sleep 20 & echo gone' });
  assert.equal(a.text, b.text);
}));

test('cancellation reads the same and kills the command', both(async () => {
  const texts = [];
  for (const [tb, conv] of [[fast, convF], [slow, convS]]) {
    const headers = { 'X-Conversation-Id': conv, 'X-User-Id': USER };
    const id = tid();
    const pending = post(tb, {
      jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'run', arguments: { command: 'echo begun; sleep 779', timeout: 500 } },
    }, { headers, accept: 'application/json' });
    await waitFor(async () => (await rawPs(tb, conv, USER)).includes('sleep 779'),
      { timeoutMs: 20000, intervalMs: 200, what: 'sleep 779 to be running' });
    await post(tb, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }, { headers });
    const r = await pending;
    texts.push(r.body);
    await waitFor(async () => !(await rawPs(tb, conv, USER)).includes('sleep 779'),
      { timeoutMs: 10000, intervalMs: 300, what: 'sleep 779 gone' });
  }
  // The hub answers a cancelled call itself, the same way for both.
  assert.equal(texts[0].replace(/"id":"[^"]*"/, ''), texts[1].replace(/"id":"[^"]*"/, ''));
}));

test('write_file reads the same and writes the same file', both(async () => {
  const content = 'line 1\n\ttab\r\nünïcödé ✓\n\u0001\u001f end without newline';
  const [a, b] = await twice('write_file', { path: 'deep/er/file.txt', content });
  assert.equal(a.text, b.text);
  assert.equal(a.isError, false, a.text);
  await same('stat -c "%a %s %U:%G %F" deep deep/er deep/er/file.txt; sha256sum deep/er/file.txt; ls -a deep/er');
  // Over an existing file, and a folder in the way (the agent hands that
  // case to Docker's archive API, which replaces the folder).
  await same('mkdir -p /work/adir/sub && echo x > /work/adir/sub/f && echo old > /work/over.txt');
  for (const p of ['over.txt', 'adir', '/work/abs.sh']) {
    const [x, y] = await twice('write_file', { path: p, content: `#!/bin/sh\necho ${p}\n` });
    assert.equal(x.text, y.text);
  }
  await same('cat over.txt adir abs.sh; stat -c "%a %F" over.txt adir abs.sh; ls -a /work | grep -c talkback-write');
  const big = 'x'.repeat(3 * 1024 * 1024);
  const [p, q] = await twice('write_file', { path: 'big.txt', content: big });
  assert.equal(p.text, q.text);
  await same('wc -c big.txt');
  // A file under a path whose parent is a file: Docker's own error text.
  const [e1, e2] = await twice('write_file', { path: 'over.txt/inner', content: 'x' });
  assert.equal(e1.isError, e2.isError);
}));

test('run_code: Python and C++ PASS read the same', both(async () => {
  const py = { language: 'python', code: 'n = int(input())\nprint(sum(range(n + 1)))\n', input: '10\n', expected: '55\n' };
  // Alike but for the run's time line (its figures differ from run to run).
  const noTime = (t) => t.replace(/^Run: [^\n]*\n/m, '');
  const [a, b] = await twice('run_code', py);
  assert.match(a.text, /^Run: /m);
  assert.equal(noTime(a.text), noTime(b.text));
  assert.match(a.text, /PASS/);
  const cpp = {
    language: 'cpp',
    code: '#include <bits/stdc++.h>\nint main(){long n;std::cin>>n;std::cout<<n*(n+1)/2<<"\\n";}\n',
    input: '10\n',
    expected: '55\n',
  };
  const [c, d] = await twice('run_code', cpp);
  assert.equal(noTime(c.text), noTime(d.text));
  assert.match(c.text, /PASS/);
}));

/** Kill the agent's worker from outside the chat (docker exec). */
async function killWorker(conv) {
  const [c] = await containersOf(conv);
  await docker('exec', c.id, 'bash', '-c',
    'for p in $(pgrep -x talkback-agent); do [ "$(ps -o ppid= -p $p | tr -d " ")" != 1 ] && kill -9 $p; done; true');
}

test('the agent worker killed from outside: the next calls answer normally', both(async () => {
  for (let i = 0; i < 3; i++) {
    await killWorker(convF);
    const r = await run(cf, 'echo still here');
    assert.equal(r.text, '$ echo still here\nstill here\n');
  }
  // and the fast path comes back
  await assertFast(cf, 'after the worker was killed');
}));

test('a hung agent worker: the call still answers, and the worker is replaced', both(async () => {
  const [c] = await containersOf(convF);
  await docker('exec', c.id, 'bash', '-c',
    'for p in $(pgrep -x talkback-agent); do [ "$(ps -o ppid= -p $p | tr -d " ")" != 1 ] && kill -STOP $p; done; true');
  const cmd = 'echo once >> /work/hung-count; echo answered anyway';
  const r = await run(cf, cmd, { timeout: 60 });
  assert.equal(r.text, `$ ${cmd}\nanswered anyway\n`);
  assert.ok(r.ms < 30000, `took ${r.ms} ms`);
  await run(cf, 'true');
  // The stopped worker was killed and its supervisor started a new one,
  // which did not run the request the hung one never read.
  const states = await docker('exec', c.id, 'bash', '-c', 'for p in $(pgrep -x talkback-agent); do ps -o stat= -p $p; done');
  assert.doesNotMatch(states, /T/, `agent processes: ${states}`);
  await assertFast(cf, 'after a hung worker');
  assert.equal((await run(cf, 'wc -l < /work/hung-count')).text, '$ wc -l < /work/hung-count\n1\n');
}));

test('a command that kills the agent gets an answer, not a hang', withLogs(fast, async () => {
  const r = await run(cf, 'echo before; for p in $(pgrep -x talkback-agent); do [ "$(ps -o ppid= -p $p | tr -d " ")" != 1 ] && kill -9 $p; done; sleep 2; echo after',
    { timeout: 30 });
  assert.ok(r.text.startsWith('$ echo before;'), r.text);
  assert.ok(r.ms < 20000, `took ${r.ms} ms`);
  const again = await run(cf, 'echo ok');
  assert.equal(again.text, '$ echo ok\nok\n');
}));

test('something in the sandbox writing to the agent stdout breaks only the link', withLogs(fast, async () => {
  const r = await run(cf, 'printf "garbage TBA\\001 more" > /proc/1/fd/1; echo wrote');
  assert.ok(r.text.startsWith('$ printf'), r.text);
  const again = await run(cf, 'echo fine');
  assert.equal(again.text, '$ echo fine\nfine\n');
}));

/** p50 of n run("true") calls, in ms. */
async function p50(client, n = 9) {
  const ms = [];
  for (let i = 0; i < n; i++) ms.push((await run(client, 'true')).ms);
  ms.sort((x, y) => x - y);
  return ms[n >> 1];
}

/** The agent path must beat the exec path clearly, measured just now
 *  (absolute figures are for talkback-bench: this machine may be busy). */
async function assertFast(client, what) {
  const a = await p50(client);
  const e = await p50(cs);
  assert.ok(a * 2 < e, `${what}: run("true") p50 ${a} ms on the agent vs ${e} ms through exec`);
}

test('a restarted manager attaches again and stays fast', both(async () => {
  await fast.restartSandbox({ TALKBACK_AGENT_PATH: AGENT });
  await run(cf, 'true');
  await assertFast(cf, 'after a manager restart');
  const log = fs.readFileSync(path.join(fast.dir, 'sandbox.log'), 'utf8');
  const starts = log.split('==== ');
  assert.match(starts[starts.length - 1], /agent link to [0-9a-f]{12} up/);
}));

test('a stopped sandbox resumes on the agent', both(async () => {
  const conv = fast.chat('resume');
  const c = await connect(fast, { conv, user: USER });
  try {
    await run(c, 'echo hi > /work/kept');
    const [ct] = await containersOf(conv);
    await docker('stop', '-t', '1', ct.id);
    const r = await run(c, 'cat /work/kept');
    assert.match(r.text, /hi\n$/);
    await assertFast(c, 'after a resume');
  } finally {
    await c.close();
  }
}));

test('a sandbox made without the agent keeps working through exec', both(async () => {
  // Made by the exec-only instance, then used by the agent instance.
  const conv = slow.chat('old');
  const a = await connect(slow, { conv, user: USER });
  const b = await connect(fast, { conv, user: USER });
  try {
    const r1 = await run(a, 'echo made; echo x >&2; exit 4');
    const r2 = await run(b, 'echo made; echo x >&2; exit 4');
    assert.equal(r1.text, r2.text);
    const [ct] = await containersOf(conv);
    const info = JSON.parse(await docker('inspect', ct.id))[0];
    assert.deepEqual(info.Config.Cmd, ['sleep', 'infinity']);
  } finally {
    await a.close();
    await b.close();
  }
}));
