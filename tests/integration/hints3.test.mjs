// hints3.test.mjs -- results that talk back, round 3 (hints/tasks.c,
// hints/codes.c, hints/output.c), through MCP against real sandboxes:
//   exit codes that are answers (grep 1, diff 1, timeout 124) and signals
//   (134, 135, 137 without an OOM kill, 141, 143)
//   output that is not there (a program that printed nothing, an empty
//   file) and output that is not text (binary described, control bytes
//   taken out)
//   files from other systems (CR LF) and text bash read as commands: never
//   "install it" for what is no package
//   git: nothing committed, pushed or cloned, and why
//   data work: where the file really is, which columns the table has
// Each situation also has its success, which must get no hint.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, call, run, runOk } from './harness.mjs';
import { hintsOf, oneHint, noHint, noInstall } from './hints-assert.mjs';

const tb = new Talkback({ name: 'hints3' });
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
  const c = await connect(tb, { conv: tb.chat(label), user: 'user-hints3' });
  clients.push(c);
  return c;
}

/** A hint line starting with prefix among others; returns it. */
function someHint(r, prefix) {
  const h = hintsOf(r.text).find((l) => l.startsWith(prefix));
  assert.ok(h, `want a hint starting ${JSON.stringify(prefix)}, got:\n${r.text}`);
  return h;
}

async function write(client, path, content) {
  const w = await call(client, 'write_file', { path, content });
  assert.equal(w.isError, false, w.text);
  return w;
}

// ---- exit codes that are answers, and signals -----------------------------------------

test('grep 1, diff 1, timeout 124: what the exit code means; a grep that matches is quiet', withLogs(tb, async () => {
  const c = await chat('codes');
  await runOk(c, "printf 'alpha\\nbeta\\n' > a.txt && printf 'alpha\\ngamma\\n' > b.txt");
  const g = await run(c, 'grep -n delta a.txt');
  assert.equal(g.isError, true);
  assert.match(g.text, /\[exit code 1\]/);
  oneHint(g, '[No line matched, so grep printed nothing and exited with 1: that is grep\'s answer "not found", not an error');
  oneHint(await run(c, 'cat a.txt | grep -c delta'), '[No line matched');
  const ok = await run(c, 'grep -n beta a.txt');
  assert.equal(ok.text, '$ grep -n beta a.txt\n2:beta\n');
  const d = await run(c, 'diff a.txt b.txt');
  assert.match(d.text, /< beta\n---\n> gamma\n\[exit code 1\]/);
  oneHint(d, '[Exit code 1 from diff means the files differ (0: they are the same, 2: trouble), not that it failed');
  noHint(await run(c, 'diff a.txt a.txt'));
  const t = await run(c, 'timeout 1 sleep 5');
  assert.match(t.text, /\[exit code 124\]/);
  oneHint(t, '[timeout stopped the command after 1 (exit code 124 is timeout\'s own: the command had not finished)');
  noHint(await run(c, 'timeout 5 echo fast'));
}));

test('signals: abort, double free, SIGBUS, SIGPIPE, SIGTERM, SIGKILL that was no OOM kill', withLogs(tb, async () => {
  const c = await chat('signals');
  const ab = await run(c, 'python3 -c "import os; os.abort()"');
  assert.match(ab.text, /\[exit code 134\]/);
  oneHint(ab, '[Aborted (SIGABRT, exit code 134)');
  await write(c, 'df.c', '#include <stdlib.h>\nint main(void) { char *p = malloc(16); free(p); free(p); return 0; }\n');
  const df = await run(c, 'gcc -O0 -o df df.c && ./df');
  assert.match(df.text, /double free|free\(\)/);
  oneHint(df, '[The C library found the program\'s memory corrupted');
  for (const [sig, code, prefix] of [
    ['BUS', 135, '[Bus error (SIGBUS, exit code 135)'],
    ['PIPE', 141, '[SIGPIPE (exit code 141)'],
    ['TERM', 143, '[Terminated (SIGTERM, exit code 143)'],
  ]) {
    const r = await run(c, `sh -c 'kill -${sig} $$'`);
    assert.match(r.text, new RegExp(`\\[exit code ${code}\\]`), r.text);
    oneHint(r, prefix);
  }
  const k = await run(c, "sh -c 'kill -KILL $$'");
  assert.match(k.text, /\[exit code 137\]/);
  oneHint(k, '[Killed with SIGKILL (exit 137), and not for lack of memory');
  noHint(await run(c, "sh -c 'echo alive'"));
}));

// ---- output that is not there, output that is not text -------------------------------------

test('a program that prints nothing is told so; one that prints its answer, and silent commands, are not', withLogs(tb, async () => {
  const c = await chat('empty');
  const e = await run(c, 'python3 -c "x = 6 * 7"');
  assert.equal(e.isError, false);
  oneHint(e, '[No output: the program ran and ended (exit code 0) without printing anything.');
  await write(c, 'solution.py', 'def solve(n):\n    print(n * 2)\n');
  oneHint(await run(c, 'python3 solution.py'), '[No output: the program ran and ended');
  await write(c, 'solution.py', 'def solve(n):\n    print(n * 2)\n\nsolve(21)\n');
  assert.equal((await run(c, 'python3 solution.py')).text, '$ python3 solution.py\n42\n');
  const f = await run(c, 'python3 -c "import sys; sys.exit(3)"');
  oneHint(f, '[No output, and exit code 3: the program ended with a failure status without printing why');
  await runOk(c, ': > results.txt');
  oneHint(await run(c, 'cat results.txt'), '[No output: results.txt is empty (0 bytes).');
  oneHint(await run(c, "find /work -name 'nothing-*.csv'"), '[No output: find found no file that matches');
  // Silent when all is well: no line for commands that print nothing by design.
  for (const cmd of ['mkdir -p out && touch out/x', 'ls out/empty 2>/dev/null; mkdir -p out/empty && ls out/empty',
    'python3 -c "print(1)" > one.txt', 'true', 'sleep 0.1', 'test -e nothing.txt || true']) {
    const r = await run(c, cmd);
    assert.equal(r.text, `$ ${cmd}\n`, r.text);
  }
}));

test('binary output is described (kind, size, hex), never pasted; colours are taken out', withLogs(tb, async () => {
  const c = await chat('binary');
  const b = await run(c, 'cat /usr/bin/true');
  assert.equal(b.isError, false);
  const size = (await runOk(c, 'stat -c %s /usr/bin/true')).trim();
  assert.ok(b.text.startsWith(`$ cat /usr/bin/true\n[The output is binary, not text: ${size} bytes of an ELF program or library`), b.text);
  assert.match(b.text, /\n00000000: 7f45 4c46 /);
  assert.match(b.text, /\[To look inside, use a tool that prints text: file FILE, xxd FILE \| head/);
  assert.ok(b.text.length < 1500, `${b.text.length} characters`);
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(b.text, /[\x00-\x09\x0b-\x1f\x7f\ufffd]/);
  const gz = await run(c, 'echo hello | gzip');
  assert.match(gz.text, /bytes of gzip-compressed data \(zcat FILE \| head/);
  const rnd = await run(c, 'head -c 3000 /dev/urandom');
  assert.match(rnd.text, /^\$ head -c 3000 \/dev\/urandom\n\[The output is binary, not text: 3000 bytes of /);
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(rnd.text, /[\x00-\x09\x0b-\x1f\x7f\ufffd]/);
  const col = await run(c, "printf '\\033[1;31mred\\033[0m\\n10%%\\r100%%\\n'");
  assert.equal(col.text, "$ printf '\\033[1;31mred\\033[0m\\n10%%\\r100%%\\n'\nred\n100%\n");
  assert.equal((await run(c, "printf 'caf\\xc3\\xa9\\n'")).text, "$ printf 'caf\\xc3\\xa9\\n'\ncafé\n");
}));

// ---- files from other systems; text that is no command ---------------------------------------

test('a CR LF script: Windows line endings and sed, never apt; fixed, it runs quietly', withLogs(tb, async () => {
  const c = await chat('crlf');
  await write(c, 'deploy.sh', 'echo one\r\n\r\necho two\r\n');
  const r = await run(c, 'bash deploy.sh');
  const h = someHint(r, '[deploy.sh has Windows line endings (CR LF), and bash takes each CR as part of the line');
  assert.match(h, /sed -i 's\/\\r\$\/\/' deploy\.sh/);
  assert.match(h, /nothing needs installing/);
  noInstall(r);
  await runOk(c, "sed -i 's/\\r$//' deploy.sh");
  const ok = await run(c, 'bash deploy.sh');
  assert.equal(ok.text, '$ bash deploy.sh\none\ntwo\n');
}));

test('text bash read that is no command: never "install it"', withLogs(tb, async () => {
  const c = await chat('notcmd');
  await write(c, 'solve.py', 'import sys\n\nprint(sum(map(int, sys.stdin.read().split())))\n');
  const py = await run(c, 'bash solve.py');
  const h = someHint(py, '[solve.py is not a shell script, but bash ran it line by line');
  assert.match(h, /Run it with its interpreter: python3 solve\.py\]$/);
  noInstall(py);
  const eq = await run(c, 'count = 5');
  oneHint(eq, '[count is not a command: in bash an assignment has no spaces around the =, so write count=VALUE');
  noInstall(eq);
  const brew = await run(c, 'brew install jq');
  oneHint(brew, "[brew is another system's package manager: this sandbox is Debian 13");
  const real = await run(c, 'sl');
  assert.match(real.text, /command not found/);
  assert.equal(hintsOf(real.text).length, 1, real.text);
  assert.equal((await run(c, 'echo 1 2 | python3 solve.py')).text, '$ echo 1 2 | python3 solve.py\n3\n');
}));

// ---- git ----------------------------------------------------------------------------------

test('git: nothing committed, pushed or cloned, and what to do; a commit that works is quiet', withLogs(tb, async () => {
  const c = await chat('git');
  await runOk(c, 'git init -q repo && echo x > repo/a.txt');
  const who = await run(c, 'cd repo && git add a.txt && git commit -q -m first');
  oneHint(who, '[git does not know who you are yet (a new sandbox has no name or email set), so nothing was committed.');
  await runOk(c, "git config --global user.email 't@example.com' && git config --global user.name 'T'");
  const ok = await run(c, 'cd repo && git commit -m first');
  assert.equal(ok.isError, false, ok.text);
  assert.match(ok.text, /^\[master \(root-commit\) [0-9a-f]+\] first$/m);
  assert.deepEqual(hintsOf(ok.text).filter((l) => !l.startsWith('[master')), [], ok.text);
  await runOk(c, 'echo y > repo/b.txt');
  const staged = await run(c, 'cd repo && git commit -m second');
  assert.match(staged.text, /\[exit code 1\]/);
  oneHint(staged, '[No change was staged (git commit takes only what git add staged), so nothing was committed. Stage the files, then commit: git add -A && git commit -m \'MESSAGE\']');
  const push = await run(c, 'cd repo && git push');
  oneHint(push, '[This repository has no remote to talk to (git remote -v lists none), so nothing was pushed or fetched.');
  const clone = await run(c, 'git clone https://git.talkback.invalid/me/tool.git');
  oneHint(clone, '[The host git.talkback.invalid does not resolve from this sandbox, so git reached no server: nothing was cloned.');
  const notRepo = await run(c, 'git log');
  oneHint(notRepo, '[The folder git ran in is not inside a repository (each run starts in /work), so nothing happened.');
}));

// ---- data work ----------------------------------------------------------------------------

test('pandas: where the file really is, which columns the table has; the right program is quiet', withLogs(tb, async () => {
  const c = await chat('data');
  await write(c, 'data/sales.csv', 'region,revenue\nnorth,10\nsouth,32\n');
  await write(c, 'report.py', "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df['revenue'].sum())\n");
  const nf = await run(c, 'python3 report.py');
  assert.match(nf.text, /FileNotFoundError/);
  oneHint(nf, '[sales.csv is not where the program looked: a relative path is read from the folder the program runs in (/work, unless it changes folder). A file of that name is at /work/data/sales.csv: use that path.]');
  await write(c, 'report.py', "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\nprint(df['Revenue'].sum())\n");
  const ke = await run(c, 'python3 report.py');
  assert.match(ke.text, /KeyError: 'Revenue'/);
  oneHint(ke, "[The table has no column 'Revenue': column names must match exactly (case and spaces count). The columns of data/sales.csv: 'region', 'revenue'. Use one of those as written.]");
  await write(c, 'report.py', "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\nprint(df['revenue'].sum())\n");
  assert.equal((await run(c, 'python3 report.py')).text, '$ python3 report.py\n42\n');
  // A file found nowhere: the error says it all, no line (as in round 1).
  const none = await run(c, "python3 -c \"open('nowhere.csv')\"");
  assert.match(none.text, /FileNotFoundError/);
  noHint(none);
  // csv.DictReader: the same columns, from the file the program opens.
  await write(c, 'totals.py', "import csv\nt = 0\nfor row in csv.DictReader(open('data/sales.csv')):\n"
    + "    t += float(row['Revenue'])\nprint(t)\n");
  oneHint(await run(c, 'python3 totals.py'), "[The table has no column 'Revenue': column names must match exactly "
    + "(case and spaces count). The columns of data/sales.csv: 'region', 'revenue'. Use one of those as written.]");
  // A Windows path: Linux has none; the file of that name is named.
  const win = await run(c, "python3 -c \"open(r'C:\\Users\\me\\sales.csv')\"");
  oneHint(win, '[C:\\\\Users\\\\me\\\\sales.csv is a Windows path, and this sandbox is Linux: no drive letters, '
    + 'and / between folders. A file of that name is at /work/data/sales.csv: use that path.]');
  // Run from another folder: the file is where /work has it.
  const cd = await run(c, "mkdir -p sub && cd sub && python3 -c \"open('data/sales.csv')\"");
  oneHint(cd, '[data/sales.csv is at /work/data/sales.csv, but the program ran in another folder');
}));
