// hints2.test.mjs -- results that talk back, round 2: the habits a small
// model brings from a real machine (hints/habits.c), through MCP
// against real sandboxes:
//   clients that fail without a word (curl exit 7/22/28)
//   what a container cannot do (systemctl, service, journalctl, docker,
//   reboot, modprobe, mount), never answered with "install it"
//   programs that want a terminal (top, htop, vim, nano)
//   a shell that does not last (cd, export, activate alone)
//   servers: one run in the foreground until its timeout, one started in
//   the background and still running
//   arguments under a wrong name (cmd, stdin): refused, nothing ran; or
//   ignored, and the result says so
// Each situation also has its success, which must get no hint.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, call, run, runOk } from './harness.mjs';
import * as ha from './hints-assert.mjs';

/** As hints-assert.mjs's, the timeout line not counted as a hint. */
const hintsOf = (text) => ha.hintsOf(text, true);
const oneHint = (r, prefix) => ha.oneHint(r, prefix, true);
const noHint = (r) => ha.noHint(r, true);
const { noInstall } = ha;

const tb = new Talkback({ name: 'hints2' });
const clients = [];

before(async () => {
  await tb.start();
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await tb.cleanup();
});

/** A new chat (its own sandbox). */
async function chat(label) {
  const c = await connect(tb, { conv: tb.chat(label), user: 'user-hints2' });
  clients.push(c);
  return c;
}

// A server that answers GET / with "hello", 404 otherwise, and says where
// it listens; and one that accepts connections but never answers.
const SERVER = (port) => `node -e "require('http').createServer((q, s) => { s.statusCode = q.url === '/' ? 200 : 404; `
  + `s.end(q.url === '/' ? 'hello' : 'no'); }).listen(${port}, () => console.log('listening on port ${port}'))"`;
const MUTE = (port) => `python3 -c "import socket, time; s = socket.socket(); `
  + `s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', ${port})); s.listen(); time.sleep(60)"`;

// ---- clients that fail without a word ------------------------------------------------

test('curl -s to a port nothing listens on: exit 7 explained, with what listens', withLogs(tb, async () => {
  const c = await chat('curl7');
  const r = await run(c, 'curl -s http://localhost:3000/api');
  assert.match(r.text, /\[exit code 7\]/);
  const h = oneHint(r, '[curl could not connect (exit 7, it printed nothing), and nothing listens on port 3000 in this sandbox');
  assert.match(h, /Listening now: nothing\./);
  assert.match(h, /ss -ltnp/);
}));

test('curl -sf on a 404 (exit 22), curl -m on a server that never answers (exit 28); success is quiet', withLogs(tb, async () => {
  const c = await chat('curl22');
  await runOk(c, `${SERVER(8131)} > server.log 2>&1 &`);
  await runOk(c, `${MUTE(8132)} > mute.log 2>&1 &`);
  await runOk(c, 'for i in $(seq 50); do ss -ltn | grep -q 8132 && ss -ltn | grep -q 8131 && break; sleep 0.2; done');
  const ok = await run(c, 'curl -sf http://localhost:8131/');
  assert.equal(ok.text, '$ curl -sf http://localhost:8131/\nhello\n');
  const e22 = await run(c, 'curl -sf http://localhost:8131/missing');
  assert.match(e22.text, /\[exit code 22\]/);
  oneHint(e22, '[curl -f got an HTTP error status (400 or above) and printed nothing (exit 22)');
  const e28 = await run(c, 'curl -s -m 1 http://127.0.0.1:8132/');
  assert.match(e28.text, /\[exit code 28\]/);
  const h = oneHint(e28, '[curl gave up waiting (exit 28, timed out)');
  assert.match(h, /127\.0\.0\.1:8132 \(python3, pid \d+\)/);
}));

// ---- what a container cannot do ------------------------------------------------------

test('systemctl, journalctl, docker, podman, reboot, modprobe, mount: why not, what does; never "install it"', withLogs(tb, async () => {
  const c = await chat('container');
  const s = await run(c, 'systemctl restart postgresql');
  const h = oneHint(s, '[systemctl cannot work here: this sandbox is a container with no systemd');
  noInstall(s);
  assert.match(h, /postgresql has no init script here/);
  const sudo = await run(c, 'sudo systemctl daemon-reload');
  oneHint(sudo, '[systemctl cannot work here');
  noInstall(sudo);
  for (const [cmd, prefix] of [
    ['journalctl -u nginx -n 20', '[There is no journal here'],
    ['docker compose up -d', '[You are inside a container already (this sandbox), so docker cannot run containers here'],
    ['podman run --rm alpine true', '[You are inside a container already (this sandbox), so podman'],
    ['reboot', '[This sandbox cannot be rebooted or shut down from inside'],
    ['modprobe overlay', '[modprobe needs rights over the kernel'],
    ['mount -t tmpfs none /mnt', '[mount needs rights over the kernel'],
  ]) {
    const r = await run(c, cmd);
    oneHint(r, prefix);
    noInstall(r);
  }
  // Success: mount with no arguments lists the mounts, and is quiet.
  noHint(await run(c, 'mount | head -n 1'));
}));

test('a daemon with an init script: systemctl points at service, which works', withLogs(tb, async () => {
  const c = await chat('initd');
  const w = await call(c, 'write_file', {
    path: '/etc/init.d/tbdemo',
    content: '#!/bin/sh\ncase "$1" in start) (sleep 300 &) ; echo "Starting tbdemo";; *) echo "Usage: $0 start";; esac\n',
  });
  assert.equal(w.isError, false, w.text);
  await runOk(c, 'chmod 755 /etc/init.d/tbdemo');
  const s = await run(c, 'systemctl start tbdemo');
  const h = oneHint(s, '[systemctl cannot work here');
  assert.match(h, /tbdemo has an init script: service tbdemo start/);
  noInstall(s);
  const ok = await run(c, 'service tbdemo start');
  assert.match(ok.text, /Starting tbdemo/);
  noHint(ok);
  const u = await run(c, 'service tbdemo42 start');
  oneHint(u, '[There is no /etc/init.d/tbdemo42, so service cannot start it');
}));

// ---- programs that want a terminal ---------------------------------------------------

test('top, htop, vim, nano, watch, tmux, tail -f, git and apt asking: the batch form or write_file, never "install it"', withLogs(tb, async () => {
  const c = await chat('tty');
  const top = await run(c, 'top');
  oneHint(top, '[top draws a live screen on a terminal, and there is none here');
  noInstall(top);
  assert.match(top.text, /top -b -n 1/);
  const htop = await run(c, 'htop');
  oneHint(htop, '[htop draws a live screen on a terminal');
  noInstall(htop);
  for (const ed of ['vim', 'nano']) {
    const r = await run(c, `${ed} main.py`);
    const h = oneHint(r, `[Nobody types here (no terminal, stdin closed), so a screen editor like ${ed} cannot be used`);
    assert.match(h, /write_file/);
    noInstall(r);
  }
  const tmux = await run(c, 'tmux new -d -s app "sleep 5"');
  oneHint(tmux, '[tmux keeps programs running for a terminal');
  noInstall(tmux);
  // watch and tail -f run until the timeout here: that is what they are told.
  const watch = await run(c, 'watch -n 1 date', { timeout: 2 });
  assert.match(watch.text, /\[timed out after 2 s/);
  oneHint(watch, '[watch repeats a command for ever on a terminal screen');
  const tail = await run(c, 'echo line > app.log; tail -f app.log', { timeout: 2 });
  oneHint(tail, '[tail -f never ends by itself (it follows for ever)');
  noHint(await run(c, 'tail -n 1 app.log'));
  // git asking for a user name (a local server that wants one).
  await runOk(c, `node -e "require('http').createServer((q, s) => { s.writeHead(401, { 'WWW-Authenticate': 'Basic realm=x' }); s.end(); }).listen(8161)" > auth.log 2>&1 &`);
  await runOk(c, 'for i in $(seq 50); do ss -ltn | grep -q :8161 && break; sleep 0.2; done');
  const git = await run(c, 'git clone http://127.0.0.1:8161/repo.git');
  oneHint(git, "[Nobody types here, so git could not ask for a user name or password for http://127.0.0.1:8161, and did nothing.");
  // apt without -y asks, nobody answers: nothing was removed.
  const apt = await run(c, 'apt-get remove less');
  oneHint(apt, '[Nobody types here, so apt could not ask whether to continue, and did nothing. Add -y');
  assert.match(await runOk(c, 'command -v less'), /less/);
  // The batch form works and gets no terminal hint (the sandbox's limits
  // line of free/top is a fact, not this hint).
  const b = await run(c, 'top -b -n 1 | head -n 3');
  assert.equal(b.isError, false, b.text);
  assert.doesNotMatch(b.text, /live screen/);
}));

// ---- a shell that does not last ------------------------------------------------------

test('cd / export / activate alone: gone at the next call, chain with &&', withLogs(tb, async () => {
  const c = await chat('shell');
  await runOk(c, 'mkdir -p app && python3 -m venv --without-pip venv');
  for (const cmd of ['cd app', 'export GREETING=hi', '. venv/bin/activate', 'cd app; export X=1']) {
    const r = await run(c, cmd);
    const h = oneHint(r, '[That only changed this call\'s shell, and that shell is gone now');
    assert.match(h, /cd app && npm test/);
  }
  // It is true: the next call is back in /work with none of it.
  const next = await runOk(c, 'pwd; echo "[$GREETING]"; echo "${VIRTUAL_ENV:-none}"');
  assert.equal(next, '/work\n[]\nnone\n');
  // Chained, it works and is quiet.
  noHint(await run(c, 'cd app && pwd'));
  noHint(await run(c, '. venv/bin/activate && python -c "import sys; print(sys.prefix)"'));
}));

// ---- servers -------------------------------------------------------------------------

test('a server run in the foreground: killed at the timeout, which port it listened on, how to background it', withLogs(tb, async () => {
  const c = await chat('fg');
  const r = await run(c, SERVER(8141), { timeout: 3 });
  assert.match(r.text, /\[timed out after 3 s/);
  const h = oneHint(r, '[That was a server: it listened on port 8141, and a server never ends by itself');
  assert.ok(h.includes(`${SERVER(8141)} > server.log 2>&1 &`), h);
  assert.match(h, /curl -s localhost:8141\//);
  // python's http.server prints nothing before the kill: its command says the port.
  const p = await run(c, 'python3 -m http.server 8142', { timeout: 3 });
  oneHint(p, '[That was a server (port 8142)');
  // A slow program that is no server: the timeout line alone.
  noHint(await run(c, 'echo working; sleep 10', { timeout: 2 }));
}));

test('a server started in the background: running, its PID and port, do not start it again', withLogs(tb, async () => {
  const c = await chat('bg');
  const r = await run(c, `${SERVER(8151)} > server.log 2>&1 &`);
  assert.equal(r.isError, false, r.text);
  const h = oneHint(r, '[Listening now, in the background: ');
  const m = h.match(/:8151 \(node, pid (\d+)\)/);
  assert.ok(m, h);
  assert.match(h, /do not start it again/);
  assert.match(h, /not the user's browser/);
  // It is true: the server answers in a later call, under that PID.
  const out = await runOk(c, `curl -s localhost:8151/; echo; cat /proc/${m[1]}/comm`);
  assert.equal(out, 'hello\nnode\n');
  // A background job that is no server gets nothing.
  noHint(await run(c, 'sleep 30 > /dev/null 2>&1 & echo started'));
}));

// ---- arguments under a wrong name ----------------------------------------------------

test('cmd without command: refused, nothing ran; an unknown extra argument: ran, and said', withLogs(tb, async () => {
  const c = await chat('args');
  const r = await call(c, 'run', { cmd: 'touch /work/should-not-exist' });
  assert.equal(r.text, '[talkback: run has no argument `cmd`: it is called `command`. Nothing ran: call run again with `command`.]');
  const s = await call(c, 'run', { command: 'cat', stdin: 'hi' });
  assert.match(s.text, /^\[talkback: run has no argument `stdin`\. stdin is closed: pipe the input in `command`/);
  assert.equal(await runOk(c, 'ls /work/should-not-exist 2>&1 || echo absent'),
    "ls: cannot access '/work/should-not-exist': No such file or directory\nabsent\n");
  const x = await call(c, 'run', { command: 'echo ran', explanation: 'say ran' });
  assert.equal(x.text, '[talkback: argument `explanation` was ignored: run takes only `command`, `timeout`.]\n$ echo ran\nran\n');
  const w = await call(c, 'write_file', { path: 'a.txt', content: 'x', filename: 'b.txt' });
  assert.match(w.text, /^\[talkback: argument `filename` was ignored: write_file takes `path` instead\.\]\n/);
}));
