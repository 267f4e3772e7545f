// tools.test.mjs -- talkback's sandbox tools, called through the MCP SDK
// client the way LibreChat calls them:
//   run         "$ command" header, output, exit codes, stdout/stderr order,
//               closed stdin, /work as working directory, timeouts that kill
//               the whole process tree (also a child ignoring SIGTERM), and
//               the output cap (head and tail kept, the middle counted)
//   write_file  byte-exact content, parent folders, absolute paths, 5 MiB
//   reset       the container and its files are gone, a new one follows
//   files written by one call are there for the next ones
//   cancelling a running command (SDK AbortSignal, and a raw
//   notifications/cancelled) kills it inside the sandbox

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';

import {
  Talkback, withLogs, connect, call, run, runOk, psArgs, containersOf, waitFor, post, tid,
  rawRun, rawPs,
} from './harness.mjs';

const tb = new Talkback({ name: 'tools' });
let main; // one chat most tests share
let mainConv;

before(async () => {
  await tb.start();
  mainConv = tb.chat('main');
  main = await connect(tb, { conv: mainConv, user: 'user-tools' });
});

after(async () => {
  await main?.close().catch(() => {});
  await tb.cleanup();
});

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const TIMED_OUT = (n) => `[timed out after ${n} s: the command and everything it started were killed`;
const CUT_RE = /\n\[\.\.\. (\d+) bytes cut from the middle of the output \.\.\.\]\n/;

test('run: a command that succeeds gives "$ command", its output, and no exit line', withLogs(tb, async () => {
  const r = await run(main, 'echo hello; printf "two\\nlines\\n"');
  assert.equal(r.isError, false);
  assert.equal(r.text, '$ echo hello; printf "two\\nlines\\n"\nhello\ntwo\nlines\n');
}));

test('run: a non-zero exit code ends the text with "[exit code N]" and sets isError', withLogs(tb, async () => {
  const r3 = await run(main, 'echo out; exit 3');
  assert.equal(r3.isError, true, r3.text);
  assert.ok(r3.text.startsWith('$ echo out; exit 3\nout\n'), r3.text);
  assert.match(r3.text, /\n\[exit code 3\]\n?$/);

  const r1 = await run(main, 'false');
  assert.equal(r1.isError, true, r1.text);
  assert.match(r1.text, /^\$ false\n\[exit code 1\]\n?$/);

  const r0 = await run(main, 'true; exit 0');
  assert.equal(r0.isError, false, r0.text);
  assert.equal(r0.text, '$ true; exit 0\n');
  assert.doesNotMatch(r0.text, /exit code/);
}));

test('run: stdout and stderr come out interleaved in the order they were written', withLogs(tb, async () => {
  // Five tries: the order must hold every time, not just usually.
  for (let i = 0; i < 5; i++) {
    const r = await run(main, 'echo a; echo b >&2; echo c');
    assert.equal(r.isError, false, r.text);
    assert.equal(r.text, '$ echo a; echo b >&2; echo c\na\nb\nc\n', `try ${i + 1}`);
  }
}));

test('run: stdin is closed (cat ends at once) and the working directory is /work', withLogs(tb, async () => {
  const r = await run(main, 'cat; pwd', { timeout: 30 });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.text, '$ cat; pwd\n/work\n');
  assert.ok(r.ms < 10000, `cat took ${r.ms} ms: stdin looks open`);
}));

test('write_file: content arrives byte-exact (quotes, backslashes, unicode, CR, tabs, no final newline)', withLogs(tb, async () => {
  const content = 'He said "hi" and \'bye\'\\n is not a newline, \\\\ two backslashes\n'
    + '$HOME `tick` %s %%\ttab\r\nCRLF line\n'
    + 'ünïcödé 日本語 😀 \u2028 \uFEFF\n\n\nno newline at the end';
  const bytes = Buffer.byteLength(content, 'utf8');
  const w = await call(main, 'write_file', { path: 'exact/quotes.txt', content });
  assert.equal(w.isError, false, w.text);
  assert.equal(w.text, `Wrote ${bytes} bytes to /work/exact/quotes.txt.`);

  const b64 = (await runOk(main, 'base64 -w0 exact/quotes.txt')).trim();
  assert.equal(Buffer.from(b64, 'base64').toString('utf8'), content);
  const sum = (await runOk(main, 'sha256sum /work/exact/quotes.txt')).split(' ')[0];
  assert.equal(sum, sha256(Buffer.from(content, 'utf8')));
}));

test('write_file: parent folders are created, absolute paths are kept', withLogs(tb, async () => {
  const rel = await call(main, 'write_file', { path: 'a/b/c/d.txt', content: 'deep\n' });
  assert.equal(rel.text, 'Wrote 5 bytes to /work/a/b/c/d.txt.');
  assert.equal(rel.isError, false);

  const abs = await call(main, 'write_file', { path: '/tmp/abs/deeper/x.txt', content: 'abs' });
  assert.equal(abs.text, 'Wrote 3 bytes to /tmp/abs/deeper/x.txt.');
  assert.equal(abs.isError, false);

  const empty = await call(main, 'write_file', { path: 'empty.txt', content: '' });
  assert.equal(empty.text, 'Wrote 0 bytes to /work/empty.txt.');

  assert.equal(await runOk(main, 'cat /work/a/b/c/d.txt /tmp/abs/deeper/x.txt; echo; stat -c %s empty.txt'),
    'deep\nabs\n0\n');
}));

test('write_file: 5 MiB of content is written whole', withLogs(tb, async () => {
  // Printable, not repetitive enough to hide a dropped or doubled block.
  const rnd = crypto.randomBytes(5 * 1024 * 1024 * 3 / 4).toString('base64');
  assert.equal(rnd.length, 5 * 1024 * 1024);
  const w = await call(main, 'write_file', { path: 'big/five.txt', content: rnd }, { timeout: 120000 });
  assert.equal(w.isError, false, w.text);
  assert.equal(w.text, `Wrote ${5 * 1024 * 1024} bytes to /work/big/five.txt.`);
  const out = await runOk(main, 'stat -c %s big/five.txt; sha256sum < big/five.txt');
  const [size, sum] = out.split('\n');
  assert.equal(size, String(5 * 1024 * 1024));
  assert.equal(sum.split(' ')[0], sha256(Buffer.from(rnd)));
}));

test('files persist between calls and between connections of the same chat', withLogs(tb, async () => {
  await runOk(main, 'echo kept-by-run > persist-run.txt && mkdir -p /opt/tool && echo v1 > /opt/tool/version');
  const w = await call(main, 'write_file', { path: 'persist-write.txt', content: 'kept-by-write\n' });
  assert.equal(w.isError, false, w.text);

  // A new connection, as LibreChat opens one per chat run.
  const again = await connect(tb, { conv: mainConv, user: 'user-tools' });
  try {
    assert.equal(await runOk(again, 'cat persist-run.txt persist-write.txt /opt/tool/version'),
      'kept-by-run\nkept-by-write\nv1\n');
  } finally {
    await again.close();
  }
  assert.equal((await containersOf(mainConv)).length, 1);
}));

test('reset: deletes the container and its files; the next call gets a clean new one', withLogs(tb, async () => {
  const conv = tb.chat('reset');
  const c = await connect(tb, { conv, user: 'user-tools' });
  try {
    const first = await call(c, 'reset', {});
    assert.equal(first.text, "[Reset: this chat had no sandbox. The next call starts a clean one.]");
    assert.equal(first.isError, false);

    await call(c, 'write_file', { path: 'doomed.txt', content: 'x' });
    const before = await containersOf(conv);
    assert.equal(before.length, 1);

    const r = await call(c, 'reset', {});
    assert.equal(r.isError, false, r.text);
    assert.equal(r.text,
      "[Reset: this chat's sandbox was deleted with all its files and installs. The next call starts a clean one.]");
    assert.deepEqual(await containersOf(conv), [], 'the container is gone right after reset');

    const again = await call(c, 'reset', {});
    assert.equal(again.text, "[Reset: this chat had no sandbox. The next call starts a clean one.]");

    const ls = await run(c, 'ls -A /work; test -e /work/doomed.txt');
    assert.equal(ls.text, '$ ls -A /work; test -e /work/doomed.txt\n[exit code 1]\n');
    const after = await containersOf(conv);
    assert.equal(after.length, 1);
    assert.notEqual(after[0].id, before[0].id, 'a new container, not the old one');
  } finally {
    await c.close();
  }
}));

test('run: a timeout kills the command and every process it started', withLogs(tb, async () => {
  const c = await connect(tb, { conv: tb.chat('timeout-tree'), user: 'user-tools' });
  try {
    const r = await run(c, 'sleep 1000 & sleep 1000 & wait', { timeout: 3 });
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith('$ sleep 1000 & sleep 1000 & wait\n'), r.text);
    assert.ok(r.text.split('\n').some((l) => l.startsWith(TIMED_OUT(3))), r.text);
    assert.ok(r.ms >= 2900 && r.ms < 15000, `the call took ${r.ms} ms`);
    const ps = await psArgs(c);
    assert.ok(!ps.includes('sleep 1000'), `still running:\n${ps}`);
  } finally {
    await c.close();
  }
}));

test('run: a timeout also kills a child that ignores SIGTERM', withLogs(tb, async () => {
  const c = await connect(tb, { conv: tb.chat('timeout-term'), user: 'user-tools' });
  try {
    const cmd = `bash -c 'trap "" TERM; sleep 1000' & wait`;
    const r = await run(c, cmd, { timeout: 3 });
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.startsWith(`$ ${cmd}\n`), r.text);
    assert.ok(r.text.split('\n').some((l) => l.startsWith(TIMED_OUT(3))), r.text);
    assert.ok(r.ms < 15000, `the call took ${r.ms} ms`);
    const ps = await psArgs(c);
    assert.ok(!ps.includes('sleep 1000') && !ps.includes('trap'), `still running:\n${ps}`);
  } finally {
    await c.close();
  }
}));

test('run: output over the cap keeps head and tail and counts the cut bytes', withLogs(tb, async () => {
  const cmd = "head -c 1000000 /dev/zero | tr '\\0' a";
  const r = await run(main, cmd);
  assert.equal(r.isError, false, r.text.slice(0, 300));
  assert.ok(r.text.length < 70 * 1024, `the text is ${r.text.length} characters`);
  assert.ok(r.text.startsWith(`$ ${cmd}\na`), r.text.slice(0, 100));
  const m = r.text.match(CUT_RE);
  assert.ok(m, 'a "[... N bytes cut from the middle of the output ...]" line');
  const body = r.text.slice(`$ ${cmd}\n`.length).replace(CUT_RE, '');
  const kept = (body.match(/a/g) || []).length;
  assert.equal(kept + Number(m[1]), 1000000, `kept ${kept} + cut ${m[1]}`);
  assert.match(body, /^a+\n?$/, 'only the command output around the cut line');
}));

test('run: a long seq keeps its first and last lines around the cut line', withLogs(tb, async () => {
  const r = await run(main, 'seq 1 200000');
  assert.equal(r.isError, false, r.text.slice(0, 300));
  assert.ok(r.text.startsWith('$ seq 1 200000\n1\n2\n3\n'), r.text.slice(0, 100));
  assert.ok(r.text.endsWith('\n199999\n200000\n'), r.text.slice(-100));
  assert.ok(r.text.length < 70 * 1024, `the text is ${r.text.length} characters`);
  const m = r.text.match(CUT_RE);
  assert.ok(m, 'a cut line');
  let total = 0;
  for (let i = 1; i <= 200000; i++) total += String(i).length + 1;
  const kept = Buffer.byteLength(r.text) - Buffer.byteLength('$ seq 1 200000\n') - Buffer.byteLength(m[0]);
  assert.equal(kept + Number(m[1]), total, 'kept + cut bytes = the whole output');
}));

test('cancelling a call with an AbortSignal kills its command in the sandbox', withLogs(tb, async () => {
  const conv = tb.chat('cancel-sdk');
  const user = 'user-tools';
  const c = await connect(tb, { conv, user });
  // The watcher uses raw requests with string ids, so the cancel (keyed by
  // chat and request id) can only mean the SDK client's call.
  const ps = () => rawPs(tb, conv, user);
  try {
    await runOk(c, 'true'); // the container exists before the timing matters
    const ac = new AbortController();
    const pending = run(c, 'sleep 777', { timeout: 500, signal: ac.signal });
    pending.catch(() => {});
    await waitFor(async () => (await ps()).includes('sleep 777'),
      { timeoutMs: 20000, intervalMs: 300, what: 'sleep 777 to be running' });
    ac.abort('no longer needed');
    await assert.rejects(pending, 'the aborted callTool rejects');
    await waitFor(async () => !(await ps()).includes('sleep 777'),
      { timeoutMs: 10000, intervalMs: 300, what: 'sleep 777 to be gone after the cancel' });
  } finally {
    await c.close();
  }
}));

test('a raw notifications/cancelled for an open call kills its command', withLogs(tb, async () => {
  const conv = tb.chat('cancel-raw');
  const user = 'user-tools';
  const ps = () => rawPs(tb, conv, user);
  await rawRun(tb, conv, user, 'true');
  const id = tid();
  const headers = { 'X-Conversation-Id': conv, 'X-User-Id': user };
  const ac = new AbortController();
  const pending = post(tb, {
    jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: 'run', arguments: { command: 'sleep 778', timeout: 500 } },
  }, { headers, accept: 'application/json', signal: ac.signal });
  pending.catch(() => {});
  try {
    await waitFor(async () => (await ps()).includes('sleep 778'),
      { timeoutMs: 20000, intervalMs: 300, what: 'sleep 778 to be running' });

    const n = await post(tb, {
      jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' },
    }, { headers });
    assert.equal(n.status, 202);
    assert.equal(n.body, '');
    await waitFor(async () => !(await ps()).includes('sleep 778'),
      { timeoutMs: 10000, intervalMs: 300, what: 'sleep 778 to be gone after notifications/cancelled' });
    // The open request must not hang once its command is gone.
    const settled = await Promise.race([
      pending.then(() => 'answered', () => 'failed'),
      new Promise((r) => setTimeout(() => r('still open'), 10000)),
    ]);
    assert.notEqual(settled, 'still open', 'the cancelled HTTP request ended');
  } finally {
    ac.abort();
  }
}));
