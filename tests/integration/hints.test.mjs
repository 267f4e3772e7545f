// hints.test.mjs -- results that talk back (hints/hints.c), through MCP
// against real sandboxes:
//   one test per situation of the hint table: the line a real command's
//   result gets, and no line on the matching success
//   the retry memory: a repeated identical failure says so, a write_file
//   clears it
//   ShellCheck on a script with the pipeline-subshell bug, written and run
//   the image's habits: sudo, python, pip, npm, node, compilers, shellcheck
//   free/nproc/df: the configured limits, not the host's (a second
//   instance with small limits of its own, also used for the OOM kill)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Talkback, withLogs, connect, call, run, runOk, docker, containersOf, memoryPhrase as memory,
} from './harness.mjs';
import { hintsOf, oneHint, noHint } from './hints-assert.mjs';

const tb = new Talkback({ name: 'hints' });
// Limits unlike the defaults, so a hint quoting them proves it read them.
const SMALL = {
  TALKBACK_MEMORY: '96M',
  TALKBACK_MEMORY_SWAP: '192M',
  TALKBACK_NANO_CPUS: '500000000',
  TALKBACK_PIDS_LIMIT: '100',
  TALKBACK_DISK_CAP: '1G',
};
const small = new Talkback({ name: 'hints-small', env: SMALL });
const clients = [];

before(async () => {
  await Promise.all([tb.start(), small.start()]);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([tb.cleanup(), small.cleanup()]);
});

/** A new chat (its own sandbox) on instance t. */
async function chat(label, t = tb) {
  const c = await connect(t, { conv: t.chat(label), user: 'user-hints' });
  clients.push(c);
  return c;
}

async function write(client, path, content) {
  const w = await call(client, 'write_file', { path, content });
  assert.equal(w.isError, false, w.text);
  return w;
}

/** Fail clearly when the image lacks a tool this test needs. */
async function needs(client, ...tools) {
  const out = await runOk(client, tools.map((t) => `command -v ${t} >/dev/null || echo "missing: ${t}"`).join('; '));
  assert.equal(out, '', `talkback-sandbox:latest lacks what this test needs (rebuild the image):\n${out}`);
}

// ---- the table, row by row ------------------------------------------------------

test('go build without go.mod: build the file itself (go build -o NAME FILE.go) or go mod init', withLogs(tb, async () => {
  const c = await chat('go');
  await needs(c, 'go');
  await write(c, 'main.go', 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(6 * 7) }\n');
  const r = await run(c, 'go build');
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /go\.mod file not found/);
  oneHint(r, '[There is no go.mod here, so go compiled nothing. Build the file itself: go build -o main main.go '
    + '(or go run FILE.go), or make a module first: go mod init NAME.]');

  const ok = await run(c, 'go build -o main main.go && ./main');
  assert.equal(ok.isError, false, ok.text);
  assert.equal(ok.text, '$ go build -o main main.go && ./main\n42\n');
}));

test('compile or run of a missing or empty file: it does not exist / is empty, write it first', withLogs(tb, async () => {
  const c = await chat('nofile');
  await needs(c, 'kotlinc', 'gcc', 'python3');
  const k = await run(c, 'kotlinc TwoSum.kt -include-runtime -d TwoSum.jar', { timeout: 120 });
  assert.equal(k.isError, true, k.text);
  oneHint(k, '[TwoSum.kt does not exist (no file /work/TwoSum.kt), so there was nothing to compile or run. '
    + 'Write it first (write_file), then run this command again.]');

  const p = await run(c, 'python3 x.py');
  oneHint(p, '[x.py does not exist (no file /work/x.py), so there was nothing to compile or run.');

  // Written elsewhere: the hint says where it is.
  await write(c, '/tmp/a.c', 'int main(void) { return 0; }\n');
  const g = await run(c, 'gcc a.c -o a');
  oneHint(g, '[a.c does not exist (no file /work/a.c); there is one at /tmp/a.c, so there was nothing to compile');

  await write(c, 'empty.py', '');
  const e = await run(c, 'python3 empty.py');
  assert.equal(e.isError, false, e.text);
  oneHint(e, '[empty.py is empty (0 bytes), so there was nothing to compile or run. Write it first (write_file)');

  await write(c, 'empty.c', '');
  const ec = await run(c, 'gcc empty.c -o empty');
  assert.match(ec.text, /undefined reference to `main'/);
  oneHint(ec, '[empty.c is empty (0 bytes), so there was nothing to compile or run.');

  // The matching successes.
  await write(c, 'hello.py', 'print("hello")\n');
  noHint(await run(c, 'python3 hello.py'));
  await write(c, 'a.c', '#include <stdio.h>\nint main(void) { puts("c ok"); return 0; }\n');
  const gok = await run(c, 'gcc a.c -o a && ./a');
  assert.equal(gok.text, '$ gcc a.c -o a && ./a\nc ok\n');
  // A program that reads a missing data file is not a missing source file.
  await write(c, 'reads.py', 'open("input.txt").read()\n');
  const rd = await run(c, 'python3 reads.py');
  assert.equal(rd.isError, true);
  noHint(rd);
}));

test('apt-get install of a package Debian 13 lacks: what apt-cache search finds instead', withLogs(tb, async () => {
  const c = await chat('apt');
  // A new sandbox has no package lists: every install fails alike.
  const r0 = await run(c, 'apt-get install -y openjdk-17-jdk');
  assert.equal(r0.isError, true, r0.text);
  oneHint(r0, '[apt has no package lists yet (a new sandbox starts without them), so it knows no package at all: '
    + 'run apt-get update first, then install.]');

  const r = await run(c, 'apt-get update -qq && apt-get install -y openjdk-17-jdk', { timeout: 300 });
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /Unable to locate package openjdk-17-jdk/);
  const h = oneHint(r, '[Debian 13 has no package openjdk-17-jdk. apt-cache search finds these instead: ');
  assert.match(h, /\bopenjdk-21-jdk\b/);
  assert.ok(h.endsWith('. Install one of those.]'), h);
  const cands = h.slice(h.indexOf('instead: ') + 9, h.indexOf('. Install'));
  // The candidates are real: apt-cache knows each of them.
  const known = await runOk(c, `apt-cache show --no-all-versions ${cands} | grep -c '^Package:'`);
  assert.equal(Number(known.trim()), cands.split(' ').length, h);

  // Success: a package that exists.
  const ok = await run(c, 'apt-get install -y bash');
  assert.equal(ok.isError, false, ok.text);
  noHint(ok);
}));

test('./X.exe of a Mono build: run it with mono X.exe', withLogs(tb, async () => {
  const c = await chat('mono');
  await needs(c, 'mcs', 'mono');
  await write(c, 'BinarySearch.cs', 'using System;\nclass P { static void Main() { Console.WriteLine(Array.BinarySearch('
    + 'new[] { 1, 3, 5, 7 }, 5)); } }\n');
  const r = await run(c, 'mcs -out:BinarySearch.exe BinarySearch.cs && ./BinarySearch.exe', { timeout: 120 });
  assert.equal(r.isError, true, r.text);
  oneHint(r, '[./BinarySearch.exe is a .NET program, which Linux cannot run directly. Run it with Mono: '
    + 'mono ./BinarySearch.exe]');
  const ok = await run(c, 'mono ./BinarySearch.exe');
  assert.equal(ok.text, '$ mono ./BinarySearch.exe\n2\n');
}));

test('"Connection refused" to a local port: nothing listens there, and what does', withLogs(tb, async () => {
  const c = await chat('refused');
  const r = await run(c, 'curl -sS http://localhost:8080/');
  assert.equal(r.isError, true, r.text);
  oneHint(r, '[Nothing listens on port 8080 in this sandbox, so the connection was refused: the server is not '
    + 'running (or listens on another port). Listening now: nothing. Start the server first, in the background '
    + '(CMD > server.log 2>&1 &), then check with ss -ltnp.]');

  // With a server on another port, the hint names it.
  await runOk(c, 'nohup python3 -m http.server 8000 > /tmp/server.log 2>&1 & sleep 1.5');
  const r2 = await run(c, 'curl -sS http://127.0.0.1:8080/');
  const h2 = oneHint(r2, '[Nothing listens on port 8080 in this sandbox');
  assert.match(h2, /Listening now: 0\.0\.0\.0:8000 \(python3, pid \d+\)\./);
  // Python's own error names no address: the command does.
  const r3 = await run(c, 'python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 8081))"');
  assert.match(r3.text, /Connection refused/);
  oneHint(r3, '[Nothing listens on port 8081 in this sandbox');
  // With "localhost", Python tries ::1 first and reports that failure
  // ("Cannot assign requested address": no IPv6 here) instead.
  const r4 = await run(c, 'python3 -c "import socket; socket.create_connection((\'localhost\', 8081))"');
  assert.match(r4.text, /Cannot assign requested address/);
  oneHint(r4, '[Nothing listens on port 8081 in this sandbox');

  // Success: the server that runs.
  const ok = await run(c, 'curl -sS -o /dev/null -w "%{http_code}\\n" http://localhost:8000/');
  assert.equal(ok.text, '$ curl -sS -o /dev/null -w "%{http_code}\\n" http://localhost:8000/\n200\n');
}));

test('chmod / chown / chgrp: the mode, owner and group right after', withLogs(tb, async () => {
  const c = await chat('chmod');
  const r = await run(c, 'mkdir -p /srv/shared && chmod g+w /srv/shared');
  assert.equal(r.isError, false, r.text);
  oneHint(r, '[Now (mode owner:group path): drwxrwxr-x root:root /srv/shared]');

  await runOk(c, 'groupadd -f devs && touch /srv/a.txt /srv/b.txt');
  const g = await run(c, 'chgrp devs /srv/a.txt /srv/b.txt');
  oneHint(g, '[Now (mode owner:group path): -rw-r--r-- root:devs /srv/a.txt; -rw-r--r-- root:devs /srv/b.txt]');

  const o = await run(c, 'sudo chown -R nobody /srv/shared');
  oneHint(o, '[Now (mode owner:group path): drwxrwxr-x nobody:root /srv/shared]');

  // A chmod that failed shows nothing more than its error.
  const bad = await run(c, 'chmod g+w /srv/nope');
  assert.equal(bad.isError, true, bad.text);
  noHint(bad);
  noHint(await run(c, 'ls -ld /srv/shared'));
}));

test('free, nproc, df, /proc/meminfo: the sandbox\'s limits, not the host\'s', withLogs(small, async () => {
  const c = await chat('limits', small);
  const want = `[Those figures are the host's, not this sandbox's. This sandbox has ${memory(96, 96)}, `
    + '0.5 CPU, at most 100 processes and 1 GiB of disk.]';
  for (const cmd of ['free -m', 'nproc', 'df -h /work', 'grep MemTotal /proc/meminfo', 'grep -c ^processor /proc/cpuinfo']) {
    const r = await run(c, cmd);
    assert.equal(r.isError, false, r.text);
    assert.equal(oneHint(r, '[Those figures'), want, r.text);
  }
  // The limits quoted are the container's real ones.
  const cg = await runOk(c, 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes');
  assert.equal(cg.trim(), String(96 * 1024 * 1024));
  const pids = await runOk(c, 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max');
  assert.equal(pids.trim(), '100');
  // Not a command that merely names them.
  noHint(await run(c, 'echo free nproc df'));
}));

test('the same on the default instance: 256 MiB, 1 CPU, 512 processes, 2 GiB', withLogs(tb, async () => {
  const c = await chat('limits-default');
  const r = await run(c, 'free -h && nproc');
  oneHint(r, `[Those figures are the host's, not this sandbox's. This sandbox has ${memory(256, 768)}, `
    + '1 CPU, at most 512 processes and 2 GiB of disk.]');
}));

test('the limits said are the sandbox\'s own, read from its cgroup, even when changed behind talkback', withLogs(tb, async () => {
  const conv = tb.chat('limits-changed');
  const c = await connect(tb, { conv, user: 'user-hints' });
  clients.push(c);
  await runOk(c, 'true');
  const [ct] = await containersOf(conv);
  await docker('update', '--pids-limit', '77', '--cpus', '0.25', ct.id);
  const r = await run(c, 'nproc');
  oneHint(r, `[Those figures are the host's, not this sandbox's. This sandbox has ${memory(256, 768)}, `
    + '0.25 CPU, at most 77 processes and 2 GiB of disk.]');
}));

test('passwd, gpg wanting a terminal: nobody types here, pass it in the command', withLogs(tb, async () => {
  const c = await chat('tty');
  const r = await run(c, 'passwd');
  assert.equal(r.isError, true, r.text);
  oneHint(r, '[Nobody types here (no terminal, stdin closed), so passwd could not read a password: the password '
    + 'was NOT changed. Set it in the command: echo \'USER:PASSWORD\' | chpasswd]');
  noHint(await run(c, "echo 'root:s3cret' | chpasswd"));

  await runOk(c, 'apt-get update -qq && apt-get install -y -qq gnupg > /dev/null 2>&1', { timeout: 300 });
  await write(c, 'note.txt', 'secret\n');
  const g = await run(c, 'gpg -c note.txt');
  assert.equal(g.isError, true, g.text);
  oneHint(g, '[Nobody types here (no terminal), so gpg could not ask for a passphrase and did nothing. Pass it in '
    + 'the command: gpg --batch --pinentry-mode loopback --passphrase');
  const gok = await run(c, "gpg --batch --pinentry-mode loopback --passphrase 'pw' -c note.txt && ls note.txt.gpg");
  assert.equal(gok.isError, false, gok.text);
  noHint(gok);
}));

test('exit 137: out of memory at the sandbox\'s limit (the limit said)', withLogs(small, async () => {
  const c = await chat('oom', small);
  const r = await run(c, 'python3 -c "x = b\'x\' * (400 * 1024 * 1024)"', { timeout: 120 });
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /\[exit code 137\]/);
  oneHint(r, `[Killed for lack of memory: this sandbox has ${memory(96, 96)}, and the program `
    + 'needed more. Make it use less memory; running it again as is ends the same way.]');
  // Not the last command: bash's "Killed" line, and the exit status of what follows.
  const p = await run(c, 'python3 -c "x = b\'x\' * (400 * 1024 * 1024)"; echo "status $?"', { timeout: 120 });
  assert.match(p.text, /Killed/);
  assert.match(p.text, /^status 137$/m);
  oneHint(p, '[Killed for lack of memory: this sandbox has 96 MiB');
  // Success: a program that fits.
  const ok = await run(c, 'python3 -c "x = b\'x\' * (10 * 1024 * 1024); print(len(x))"');
  assert.equal(ok.text, '$ python3 -c "x = b\'x\' * (10 * 1024 * 1024); print(len(x))"\n10485760\n');

  // A SIGKILL that was not the memory limit (a fresh sandbox, no OOM kill
  // yet): said so (issue 25), never "lack of memory".
  const c2 = await chat('kill9', small);
  const k = await run(c2, 'sleep 30 & kill -9 $!; wait $!');
  assert.match(k.text, /\[exit code 137\]/);
  oneHint(k, '[Killed with SIGKILL (exit 137), and not for lack of memory (this sandbox counts no '
    + 'out-of-memory kill): something sent it kill -9');
}));

test('command not found: which Debian package has it', withLogs(tb, async () => {
  const c = await chat('cnf');
  const r = await run(c, "ssh-keygen -t ed25519 -N '' -f key");
  assert.equal(r.isError, true, r.text);
  oneHint(r, '[ssh-keygen is not installed in this sandbox. Install it: apt-get update && apt-get install -y '
    + 'openssh-client]');
  // Through sudo (the image's sudo runs the command with env).
  const s = await run(c, 'sudo ifconfig');
  oneHint(s, '[ifconfig is not installed in this sandbox. Install it: apt-get update && apt-get install -y net-tools]');
  const d = await run(c, 'dotnet run');
  oneHint(d, '[There is no dotnet here: C# builds with Mono: mcs -out:NAME.exe FILE.cs, then mono NAME.exe.]');
  const u = await run(c, 'frobnicate --all');
  oneHint(u, '[frobnicate is not installed in this sandbox. Find its package with apt-get update && apt-cache '
    + 'search frobnicate, then apt-get install -y PACKAGE.]');
  // Following the hint works.
  const inst = await run(c, 'apt-get update -qq && apt-get install -y -qq openssh-client > /dev/null 2>&1', { timeout: 300 });
  assert.equal(inst.isError, false, inst.text);
  const ok = await run(c, "ssh-keygen -q -t ed25519 -N '' -f key && ls key.pub");
  assert.equal(ok.text, "$ ssh-keygen -q -t ed25519 -N '' -f key && ls key.pub\nkey.pub\n");
}));

// A wheel made inside the sandbox, so pip needs no package index (the
// sandbox's network may not reach one where these tests run).
const MAKE_WHEEL = `import base64, hashlib, os, sys, zipfile
name, ver = sys.argv[1], "1.0"
files = {
    name + "/__init__.py": "VALUE = 42\\n",
    f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {ver}\\n",
    f"{name}-{ver}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: talkback-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
os.makedirs("wheels", exist_ok=True)
record = []
with zipfile.ZipFile(f"wheels/{name}-{ver}-py3-none-any.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{name}-{ver}.dist-info/RECORD,,")
    z.writestr(f"{name}-{ver}.dist-info/RECORD", "\\n".join(record) + "\\n")
`;

test('ModuleNotFoundError / Cannot find module: pip install X / npm install X', withLogs(tb, async () => {
  const c = await chat('modules');
  await needs(c, 'node', 'npm', 'pip');
  const p = await run(c, 'python3 -c "import tbdemo; print(tbdemo.VALUE)"');
  assert.equal(p.isError, true, p.text);
  oneHint(p, '[No Python module named tbdemo is installed. If it is a library, install it: pip install tbdemo; if it '
    + 'is a file of yours, write tbdemo.py first.]');
  const sk = await run(c, 'python3 -c "import sklearn"');
  oneHint(sk, '[No Python module named sklearn is installed. If it is a library, install it: pip install scikit-learn;');
  // A file of the model's own, imported from another folder: no pip advice.
  await write(c, 'helpers.py', 'X = 1\n');
  const own = await run(c, 'cd /tmp && python3 -c "import helpers"');
  assert.match(own.text, /No module named 'helpers'/);
  noHint(own);

  const n = await run(c, 'node -e "require(\'left-pad\')"');
  assert.equal(n.isError, true, n.text);
  oneHint(n, '[The Node module left-pad is not installed: npm install left-pad (in the folder of the script), then '
    + 'run it again.]');

  // Following the hints works, and the successes say nothing more.
  await write(c, 'make_wheel.py', MAKE_WHEEL);
  await runOk(c, 'python3 make_wheel.py tbdemo');
  const pi = await run(c, 'pip install -q --no-index --find-links wheels tbdemo', { timeout: 300 });
  assert.equal(pi.isError, false, pi.text);
  noHint(pi);
  const pok = await run(c, 'python3 -c "import tbdemo; print(tbdemo.VALUE)"');
  assert.equal(pok.text, '$ python3 -c "import tbdemo; print(tbdemo.VALUE)"\n42\n');
  // From a package made here (the registry may be out of reach where these run).
  await write(c, 'pkgs/left-pad/package.json', '{"name": "left-pad", "version": "1.0.0", "main": "index.js"}\n');
  await write(c, 'pkgs/left-pad/index.js', 'module.exports = (s, n, c) => String(s).padStart(n, c);\n');
  await runOk(c, 'cd pkgs/left-pad && npm pack --silent');
  const ni = await run(c, 'npm install --silent ./pkgs/left-pad/left-pad-1.0.0.tgz', { timeout: 300 });
  assert.equal(ni.isError, false, ni.text);
  const nok = await run(c, 'node -e "console.log(require(\'left-pad\')(\'7\', 3, \'0\'))"');
  assert.equal(nok.text, '$ node -e "console.log(require(\'left-pad\')(\'7\', 3, \'0\'))"\n007\n');
}));

test('Permission denied running ./script: chmod +x, or run it with its interpreter', withLogs(tb, async () => {
  const c = await chat('perm');
  await write(c, 'hello.sh', '#!/bin/bash\necho "hi from $0"\n');
  const r = await run(c, './hello.sh');
  assert.equal(r.isError, true, r.text);
  oneHint(r, '[./hello.sh is not executable. Make it so with chmod +x ./hello.sh, or run it with its interpreter: '
    + 'bash ./hello.sh]');
  await write(c, 'tool.py', '#!/usr/bin/env python3\nprint("py ok")\n');
  oneHint(await run(c, './tool.py'), '[./tool.py is not executable. Make it so with chmod +x ./tool.py, or run it '
    + 'with its interpreter: python3 ./tool.py]');
  // Success: run with its interpreter.
  const ok = await run(c, 'bash ./hello.sh');
  assert.equal(ok.text, '$ bash ./hello.sh\nhi from ./hello.sh\n');
  // CR LF line endings are named as such.
  await write(c, 'crlf.sh', '#!/bin/bash\r\necho hi\r\n');
  const cr = await run(c, 'chmod +x crlf.sh && ./crlf.sh');
  assert.ok(hintsOf(cr.text).some((l) => l.startsWith('[./crlf.sh has Windows line endings (CR LF)')), cr.text);
}));

// ---- more than one row ------------------------------------------------------------

test('no hint on ordinary successes', withLogs(tb, async () => {
  const c = await chat('quiet');
  for (const cmd of ['echo hi', 'ls -la /', 'python3 -c "print(sum(range(10)))"', 'cat /etc/os-release',
    'mkdir -p d && cd d && touch f && ls', 'uname -a', 'true']) {
    const r = await run(c, cmd);
    assert.equal(r.isError, false, r.text);
    noHint(r);
  }
  const w = await call(c, 'write_file', { path: 'notes.txt', content: 'plain text\n' });
  assert.equal(w.text, 'Wrote 11 bytes to /work/notes.txt.');
}));

test('retry memory: the same failure again says so; a write_file clears it', withLogs(tb, async () => {
  const c = await chat('retry');
  const RETRY = "[Same command, same failure as last time: running it again won't change it. "
    + 'Change the code or the command first.]';
  await write(c, 'coin_change.py', 'def f(:\n    pass\n');
  const r1 = await run(c, 'python3 coin_change.py');
  assert.equal(r1.isError, true, r1.text);
  assert.ok(!r1.text.includes(RETRY), r1.text);
  const r2 = await run(c, 'python3 coin_change.py');
  assert.ok(r2.text.endsWith(`${RETRY}\n`), r2.text);
  // Other commands in between do not hide it.
  await runOk(c, 'cat coin_change.py');
  const r3 = await run(c, 'python3 coin_change.py');
  assert.ok(r3.text.endsWith(`${RETRY}\n`), r3.text);

  // A fix with write_file: re-running is not a pointless retry, even if the
  // fix did not work.
  await write(c, 'coin_change.py', 'def f(:\n    return 1\n');
  const r4 = await run(c, 'python3 coin_change.py');
  assert.equal(r4.isError, true, r4.text);
  assert.ok(!r4.text.includes(RETRY), r4.text);
  const r5 = await run(c, 'python3 coin_change.py');
  assert.ok(r5.text.includes(RETRY), r5.text);

  // A different failure of the same command is not "the same failure".
  await runOk(c, "printf 'import sys\\nsys.exit(3)\\n' > coin_change.py");
  const r6 = await run(c, 'python3 coin_change.py');
  assert.match(r6.text, /\[exit code 3\]/);
  assert.ok(!r6.text.includes(RETRY), r6.text);

  // The memory is the chat's own.
  const other = await chat('retry-other');
  await write(other, 'coin_change.py', 'def f(:\n    pass\n');
  const o1 = await run(other, 'python3 coin_change.py');
  assert.ok(!o1.text.includes(RETRY), o1.text);

  // Success: nothing.
  await write(c, 'coin_change.py', 'print(3)\n');
  const ok = await run(c, 'python3 coin_change.py');
  assert.equal(ok.text, '$ python3 coin_change.py\n3\n');
  const ok2 = await run(c, 'python3 coin_change.py');
  assert.equal(ok2.text, '$ python3 coin_change.py\n3\n');
}));

const DUPS = `#!/bin/bash
# Report groups of files with the same content.
groups=0
md5sum /work/data/* | sort | uniq -w32 -D | cut -c1-32 | uniq | while read -r sum; do
  groups=$((groups + 1))
  echo "group $groups: $sum"
done
echo "$groups groups of duplicates"
`;

test('ShellCheck: a script with the pipeline-subshell bug, when written and when run', withLogs(tb, async () => {
  const c = await chat('shellcheck');
  await needs(c, 'shellcheck');
  const w = await write(c, 'dups.sh', DUPS);
  const lines = w.text.split('\n');
  assert.equal(lines[0], `Wrote ${DUPS.length} bytes to /work/dups.sh.`);
  assert.equal(lines[1], '[ShellCheck on /work/dups.sh:');
  assert.ok(lines.includes('line 5: note: Modification of groups is local (to subshell caused by pipeline). [SC2030]'), w.text);
  assert.ok(lines.includes('line 8: note: groups was modified in a subshell. That change might be lost. [SC2031]'), w.text);
  assert.ok(w.text.endsWith('Use while read ...; done < <(cmd) instead.)]'), w.text);
  // Only errors, warnings and the subshell notes: no style notes.
  assert.ok(lines.slice(2).every((l) => /^line \d+: (error|warning|note): .*\[SC\d+\]$/.test(l)
    && (!l.includes(': note: ') || /\[SC203[01]\]$/.test(l)) || l.startsWith('(Each part')), w.text);

  // Run: the bug shows (0 groups), and the report comes with it.
  await runOk(c, 'mkdir -p data && for i in 1 2 3; do echo same > data/$i; done; echo other > data/4');
  const r = await run(c, 'bash dups.sh');
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^0 groups of duplicates$/m);
  assert.match(r.text, /^\[ShellCheck on dups\.sh:$/m);
  assert.match(r.text, /\[SC2031\]$/m);

  // A shebang alone makes a file a shell script; a clean one gets nothing.
  const greet = '#!/bin/sh\necho "hello, $1"\n';
  const w2 = await write(c, 'bin/greet', greet);
  assert.equal(w2.text, `Wrote ${greet.length} bytes to /work/bin/greet.`);
  const typo = '#!/usr/bin/env bash\nname=$1\necho "hello, $nmae"\n';
  const w3 = await write(c, 'bin/typo', typo);
  assert.ok(w3.text.startsWith(`Wrote ${typo.length} bytes to /work/bin/typo.\n[ShellCheck on /work/bin/typo:\n`), w3.text);
  assert.match(w3.text, /^line 3: warning: nmae is referenced but not assigned\. \[SC2154\]\]?$/m);
  // Not shell: nothing.
  const py = '#!/usr/bin/env python3\nprint(1)\n';
  const w4 = await write(c, 'x.py', py);
  assert.equal(w4.text, `Wrote ${py.length} bytes to /work/x.py.`);
}));

test('habits: sudo just runs, python is python3, pip install just works, npm/node/compilers/shellcheck present', withLogs(tb, async () => {
  const c = await chat('habits');
  assert.equal(await runOk(c, 'sudo whoami'), 'root\n');
  assert.equal(await runOk(c, 'sudo -E env FOO=1 sh -c \'echo $FOO\''), '1\n');
  assert.match(await runOk(c, 'sudo apt-get --version | head -n 1'), /^apt /);
  assert.match(await runOk(c, 'python --version'), /^Python 3\./);
  assert.equal((await runOk(c, 'readlink -f "$(command -v python)"')).trim(),
    (await runOk(c, 'readlink -f "$(command -v python3)"')).trim());
  // pip installs into the system Python: no "externally managed" refusal,
  // even without the PIP_BREAK_SYSTEM_PACKAGES that talkback's run sets.
  await write(c, 'make_wheel.py', MAKE_WHEEL);
  await runOk(c, 'python3 make_wheel.py habitdemo');
  const pip = await run(c, 'env -u PIP_BREAK_SYSTEM_PACKAGES pip install -q --no-index --find-links wheels habitdemo',
    { timeout: 300 });
  assert.equal(pip.isError, false, pip.text);
  assert.doesNotMatch(pip.text, /externally.managed/i);
  assert.equal(await runOk(c, 'cd / && python -c "import habitdemo; print(habitdemo.VALUE)"'), '42\n');
  assert.equal(await runOk(c, 'ls /usr/lib/python3*/EXTERNALLY-MANAGED 2>/dev/null | wc -l'), '0\n');
  const missing = await runOk(c, 'for t in node npm gcc g++ go rustc javac java kotlinc mcs mono ghc lua5.4 '
    + 'shellcheck make git curl; do command -v $t >/dev/null || echo "missing: $t"; done');
  assert.equal(missing, '', `talkback-sandbox:latest lacks:\n${missing}`);
}));
