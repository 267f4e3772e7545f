// background.test.mjs -- programs a command leaves running in the
// background are watched (issue 24, items 4 and 5), through MCP against
// real sandboxes:
//   one that exits at once: said dead, with its status and last lines
//   a server on a port another holds: said failed, and who holds the port
//   "Listening now" names only what this command started
//   one that ends between calls: said once, at the top of the next result
//   one a later command stops: said in that command's result, after its output
//   a resume after `docker stop` names the server that was running
// and the quiet cases: nothing left, a background job that is no server,
// one that ended well within the window, a resume with nothing recorded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, call, run, runOk, docker, containersOf, sleep } from './harness.mjs';
import { hintsOf as notes } from './hints-assert.mjs';

const tb = new Talkback({ name: 'background' });
const clients = [];

before(async () => {
  await tb.start();
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await tb.cleanup();
});

async function chat(label) {
  const c = await connect(tb, { conv: tb.chat(label), user: 'user-bg' });
  clients.push(c);
  return c;
}

// A server started the way a model writes it: cd, then the program in the
// background with its log.  (The subshell holds the call's output until the
// program ends, which gives a slow start on a busy machine the output's
// drain, up to 2 s, to listen or fail in, besides the 1.5 s watch.)
const HTTP = (port) => `python3 -m http.server ${port}`;
const SERVE = (port, log) => `cd /work && ${HTTP(port)} > ${log} 2>&1 &`;

test('a background program that exits at once is said dead, with its status and last lines', withLogs(tb, async () => {
  const c = await chat('crash');
  const w = await call(c, 'write_file', { path: 'bg/crash.py', content: 'import sys\nprint("starting up", flush=True)\nprint("ValueError: no config", file=sys.stderr)\nsys.exit(3)\n' });
  assert.equal(w.isError, false, w.text);
  const r = await run(c, 'cd /work/bg && python3 crash.py > crash.log 2>&1 &');
  assert.equal(r.isError, false, r.text);
  // Named after the program, or after the command's own words when no look saw it run (a
  // loaded machine).
  assert.match(r.text, /^\$ cd \/work\/bg && python3 crash\.py > crash\.log 2>&1 &\n\[`(cd \/work\/bg && )?python3 crash\.py( > crash\.log 2>&1 &)?` \(pid \d+\), started in the background, exited at once with status 3: it is not running\. Its last lines, in \/work\/bg\/crash\.log:\nstarting up\nValueError: no config\nFix what they say, then start it again\.\]\n$/);
  // Killed by a signal at once, output in the call's own.
  const k = await run(c, 'sh -c \'echo about to die; sleep 0.3; kill -9 $$\' &');
  assert.match(k.text, /\[`[^`\n]*kill -9 \$\$[^`\n]*` \(pid \d+\), started in the background, was killed at once by signal 9 \(KILL\): it is not running\. Its output is above\.\]\n$/, k.text);
  assert.match(k.text, /\nabout to die\n/);
}));

test('a server on a port another holds: said failed, and which process holds the port', withLogs(tb, async () => {
  const c = await chat('port');
  const first = await run(c, SERVE(8124, 's1.log'));
  const h = notes(first.text);
  assert.equal(h.length, 1, first.text);
  const m = h[0].match(/^\[Listening now, in the background: [^ ]*:8124 \(python3, pid (\d+)\)\. It keeps running after this call/);
  assert.ok(m, first.text);
  const holder = m[1];
  // The second one fails fast (perl starts in milliseconds, python's http.server takes a
  // while on a loaded machine), so the 1.5 s watch sees its end.
  const second = await run(c, `cd /work && perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalPort => 8124, Listen => 5, ReuseAddr => 1) or die "port 8124: $!\\n"; sleep 300' > s2.log 2>&1 &`);
  // Named after perl, or after the command's own words when perl ended before a look saw it.
  assert.match(second.text, new RegExp(`\\[\`[^\`]*perl -MIO::Socket::INET -e [^\`]*\` \\(pid \\d+\\), started in the background, failed: its port was taken \\(address already in use\\), so it exited with status \\d+ and is not running\\. Port 8124 is held by python3 \\(pid ${holder}\\), started earlier: that server still runs, so use it, or stop it first \\(kill ${holder}\\) and start this one again\\.\\]\\n$`), second.text);
  assert.doesNotMatch(second.text, /Listening now/);
  // The first one still answers.
  assert.match(await runOk(c, 'curl -s -o /dev/null -w "%{http_code}" localhost:8124/'), /^200/);
}));

test('"Listening now" names only what this command started; a job that is no server is quiet', withLogs(tb, async () => {
  const c = await chat('mine');
  const a = await run(c, SERVE(8131, 'a.log'));
  assert.match(a.text, /Listening now, in the background: [^ ]*:8131 \(python3/);
  // A background job that is no server: nothing said (not the earlier server either).
  const q = await run(c, 'sleep 30 > /dev/null 2>&1 & echo started');
  assert.equal(q.text, '$ sleep 30 > /dev/null 2>&1 & echo started\nstarted\n');
  const b = await run(c, SERVE(8132, 'b.log'));
  const h = notes(b.text);
  assert.equal(h.length, 1, b.text);
  assert.match(h[0], /:8132 \(python3, pid \d+\)\. It keeps running/);
  assert.doesNotMatch(h[0], /8131/);
}));

test('a background program that ends between calls is said once, in the next result', withLogs(tb, async () => {
  const c = await chat('later');
  const r = await run(c, "sh -c 'sleep 2; echo giving up; exit 4' > /work/late.log 2>&1 &");
  assert.equal(notes(r.text).length, 0, r.text);
  await sleep(3500);
  const next = await run(c, 'echo next');
  assert.match(next.text, /^\[Since the last call, `sleep 2; echo giving up; exit 4` \(pid \d+\), which ran in the background, exited with status 4: it is not running now\. Its last lines, in \/work\/late\.log:\ngiving up\nFix what they say, then start it again\.\]\n\$ echo next\nnext\n$/, next.text);
  // Once.
  assert.equal((await run(c, 'echo again')).text, '$ echo again\nagain\n');
}));

test('a background server the next command stops is said stopped in that result, not "since the last call"', withLogs(tb, async () => {
  const c = await chat('stopped');
  const r = await run(c, `${HTTP(8131)} > /work/stop.log 2>&1 &`);
  assert.equal(r.isError, false, r.text);
  // Its pid (the result names it too once it listens, which on a loaded
  // machine may come after the watch).
  const pid = (await runOk(c, "for i in $(seq 50); do pgrep -f '^python3 -m http.server 8131' && break; sleep 0.1; done")).trim();
  assert.match(pid, /^\d+$/);
  const k = await run(c, `kill ${pid}; sleep 0.5; echo stopped`);
  assert.match(k.text, new RegExp(`^\\$ kill ${pid}; sleep 0\\.5; echo stopped\\nstopped\\n\\[\`python3 -m http\\.server 8131[^\`\\n]*\` \\(pid ${pid}\\), which ran in the background, was stopped by signal 15 \\(TERM\\) while this command ran: it is not running now\\.[^\\]]*\\]\\n$`), k.text);
  assert.doesNotMatch(k.text, /Since the last call/);
  // Said once: the next result is bare.
  assert.equal((await run(c, 'echo next')).text, '$ echo next\nnext\n');
}));

test('quiet: nothing left behind, a job that ended well within the window', withLogs(tb, async () => {
  const c = await chat('quiet');
  assert.equal((await run(c, 'echo hi')).text, '$ echo hi\nhi\n');
  const t0 = Date.now();
  assert.equal((await run(c, 'true')).text, '$ true\n');
  assert.ok(Date.now() - t0 < 1000, 'nothing left: no watch window');
  const w = await run(c, '(sleep 0.3; echo done > /work/d.txt) > /dev/null 2>&1 & echo off');
  assert.equal(w.text, '$ (sleep 0.3; echo done > /work/d.txt) > /dev/null 2>&1 & echo off\noff\n');
  assert.equal(await runOk(c, 'cat /work/d.txt'), 'done\n');
}));

test('a resume after docker stop names the server that was running; without one, the usual words', withLogs(tb, async () => {
  const conv = tb.chat('resume');
  const c = await connect(tb, { conv, user: 'user-bg' });
  clients.push(c);
  const s = await run(c, SERVE(8141, 'srv.log'));
  assert.equal(s.isError, false, s.text);
  // It serves (a slow start's ports reach the record with this call, if not before).
  assert.equal(await runOk(c, 'for i in $(seq 50); do curl -s -o /dev/null localhost:8141/ && break; sleep 0.2; done; echo up'), 'up\n');
  const [box] = await containersOf(conv);
  await docker('stop', '-t', '1', box.id);
  const r = await run(c, 'echo back');
  assert.match(r.text, /^\[Resumed this chat's sandbox, stopped \d+ seconds? ago \(not by talkback: most likely a restart of Docker or of the host\): its files and installs are as they were, but nothing it ran is running now\. Running before the stop, in the background: `python3 -m http\.server 8141` \(listening on [^ )]*:8141\)\. Start them again if they are still needed \(CMD > server\.log 2>&1 &\)\.\]\n\$ echo back\nback\n$/, r.text);
  // Said once; and a stop with nothing left running says the usual words.
  assert.equal((await run(c, 'echo again')).text, '$ echo again\nagain\n');
  await docker('stop', '-t', '1', box.id);
  const q = await run(c, 'echo quiet');
  assert.match(q.text, /nothing it ran is running now\. Start servers and background jobs again\.\]\n\$ echo quiet\nquiet\n$/, q.text);
}));
