// judge2.test.mjs -- run_code as an online judge, end to end (gateway, one
// judge, the sandbox manager, real sandboxes), each point in C++, Python
// and Java:
//   - `tests`: compiled once, run on every case; each case PASS or FAIL
//     with its first differing line; one overall line naming how many
//     passed; the closing sentence only when one failed
//   - `tests` together with `input`/`expected` is refused, nothing runs
//     (no sandbox is made); more than 20 cases are refused too
//   - every run has a line with its wall time, CPU time and peak memory
//   - a timeout says computing (an endless loop) or waiting (a sleep)
//   - a program printing without end is stopped at the output limit
//   - the compile cache: the same program again reuses the build, an
//     edited one compiles, another chat never gets this chat's build, and
//     a build removed from /work is put back
//   - a Java class name with `$` never reaches the compile line

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, call, runOk, containersOf } from './harness.mjs';

const tb = new Talkback({
  name: 'judge2',
  judges: 1,
  // A small output limit keeps the printing test short.
  judgeEnv: { TALKBACK_CODE_OUTPUT_LIMIT: '200K' },
});

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

const DONT = "Don't answer yet: fix the code and call run_code again until it says PASS.\n";
const CALL_TIMEOUT = 300000;

async function inChat(label, fn) {
  const conv = tb.chat(label);
  const c = await connect(tb, { conv, user: 'user-judge2' });
  try {
    return await fn(c, conv);
  } finally {
    await c.close();
  }
}

function runCode(c, args) {
  return call(c, 'run_code', args, { timeout: CALL_TIMEOUT });
}

/** How many times needle occurs in text. */
function count(text, needle) {
  return text.split(needle).length - 1;
}

// A line per run: wall time, CPU time and peak memory (the in-sandbox
// agent measures the last two).
const STATS = /^(Run|Test \d+ of \d+): \d+\.\d+ s wall time, \d+\.\d+ s CPU time, \d+\.\d MiB peak memory\./m;

// ---- the three languages -------------------------------------------------------

const LANGS = [
  {
    lang: 'cpp', compile: '$ g++ ', run: './main',
    ab: (e) => `#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<${e}<<"\\n";}\n`,
    loop: '#include <bits/stdc++.h>\nint main(){volatile unsigned long x=0;for(;;)x++;}\n',
    sleep: '#include <unistd.h>\nint main(){sleep(100);}\n',
    spam: '#include <cstdio>\nint main(){for(;;)puts("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");}\n',
  },
  {
    lang: 'python', compile: null, run: 'python3 main.py',
    ab: (e) => `a, b = map(int, input().split())\nprint(${e})\n`,
    loop: 'while True:\n    pass\n',
    sleep: 'import time\ntime.sleep(100)\n',
    spam: 'while True:\n    print("y" * 50)\n',
  },
  {
    lang: 'java', compile: '$ javac ', run: 'java -Xmx160m -Xss64m -cp . Main',
    ab: (e) => 'import java.util.Scanner;\npublic class Main {\n  public static void main(String[] x) {\n'
      + `    Scanner in = new Scanner(System.in);\n    long a = in.nextLong(), b = in.nextLong();\n    System.out.println(${e});\n  }\n}\n`,
    loop: 'public class Main {\n  public static void main(String[] x) {\n    long i = 0;\n    while (true) i++;\n  }\n}\n',
    sleep: 'public class Main {\n  public static void main(String[] x) throws Exception {\n    Thread.sleep(100000);\n  }\n}\n',
    spam: 'public class Main {\n  public static void main(String[] x) {\n    while (true) System.out.println("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");\n  }\n}\n',
  },
];

const CASES = [
  { input: '1 2\n', expected: '3\n' },
  { input: '10 -4\n', expected: '7\n' }, // wrong on purpose: 6
  { input: '1000000000 2345678901\n', expected: '3345678901\n' },
];

for (const L of LANGS) {
  test(`${L.lang}: tests run each case once compiled, name the failing line, and close with one overall line`, withLogs(tb, async () => {
    await inChat(`tests-${L.lang}`, async (c) => {
      const code = L.ab('a + b');
      const f = await runCode(c, { language: L.lang, code, tests: CASES });
      assert.equal(f.isError, true, f.text);
      if (L.compile) assert.equal(count(f.text, L.compile), 1, `compiled once:\n${f.text}`);
      for (let i = 1; i <= 3; i++) {
        assert.ok(f.text.includes(`$ ${L.run} < test-${i}.in\ninput:\n${CASES[i - 1].input}`), f.text);
      }
      assert.ok(f.text.includes('Test 1: PASS: the output matches the expected output.\n'), f.text);
      assert.ok(f.text.includes('output:\n6\nTest 2: FAIL: line 1 differs.\n  expected: 7\n  got:      6\n'), f.text);
      assert.ok(f.text.includes('Test 3: PASS: the output matches'), f.text);
      assert.ok(f.text.endsWith('FAIL: 2 of 3 tests passed; failed: test 2.\n' + DONT), f.text);
      assert.equal(count(f.text, DONT), 1, f.text);
      assert.equal(count(f.text.replace(/^Test \d+ of \d+: .*\n/gm, ''), 'Test '), 3, f.text);
      // Every run has its time line.
      assert.equal((f.text.match(new RegExp(STATS.source, 'gm')) || []).length, 3, f.text);

      const good = CASES.map((x, i) => (i === 1 ? { ...x, expected: '6\n' } : x));
      const p = await runCode(c, { language: L.lang, code, tests: good });
      assert.equal(p.isError, false, p.text);
      assert.ok(p.text.endsWith('Test 3: PASS: the output matches the expected output.\nPASS: all 3 tests passed.\n'), p.text);
      assert.ok(!p.text.includes("Don't answer yet"), p.text);
      // The case files stay, so the shown line reruns a case.
      assert.equal(await runOk(c, `${L.run} < test-2.in`), '6\n');
    });
  }));
}

// ---- refusals ---------------------------------------------------------------------

test('tests together with input or expected is refused, and nothing runs', withLogs(tb, async () => {
  await inChat('both', async (c, conv) => {
    for (const extra of [{ input: '1 2\n' }, { expected: '3\n' }]) {
      const r = await runCode(c, { language: 'python', code: 'print(3)\n', tests: [{ expected: '3\n' }], ...extra });
      assert.equal(r.isError, true, r.text);
      assert.equal(r.text, '[talkback: send either `tests` or `input` and `expected`, not both. For several cases, '
        + 'put every input with its expected output in `tests`: [{"input": "...", "expected": "..."}, ...]; '
        + 'for one case, send `input` and `expected` without `tests`. Nothing ran.]');
    }
    const many = await runCode(c, { language: 'python', code: 'print(3)\n', tests: Array(21).fill({ expected: '3\n' }) });
    assert.equal(many.isError, true, many.text);
    assert.match(many.text, /`tests` holds 21 items; at most 20 are allowed: send the rest in another call\. Nothing ran\./);
    const bad = await runCode(c, { language: 'python', code: 'print(3)\n', tests: [{ input: '1' }] });
    assert.match(bad.text, /item 1 of `tests` has no `expected`: add it\. Nothing ran\./);
    assert.deepEqual(await containersOf(conv), [], 'no sandbox was made for refused calls');
  });
}));

// ---- time and memory --------------------------------------------------------------

for (const L of LANGS) {
  test(`${L.lang}: a run has its time line, and a timeout tells computing from waiting`, withLogs(tb, async () => {
    await inChat(`time-${L.lang}`, async (c) => {
      const ok = await runCode(c, { language: L.lang, code: L.ab('a * b'), input: '6 7\n', expected: '42\n' });
      assert.equal(ok.isError, false, ok.text);
      assert.match(ok.text, new RegExp(STATS.source.replace('(Run|Test \\d+ of \\d+)', 'Run') + `\\n\\$ ${L.run.replace(/[.$]/g, '\\$&')} < main\\.in\\n`, 'm'));

      const loop = await runCode(c, { language: L.lang, code: L.loop, timeout: 3 });
      assert.equal(loop.isError, true, loop.text);
      assert.match(loop.text, /Over the 3 s time limit: stopped after \d+\.\d+ s, so it needed more than that\./);
      assert.ok(loop.text.endsWith('TIMEOUT: the program ran longer than 3 s and was killed, with everything it '
        + 'started. It loops forever, waits for input that was not given, or is too slow.\n' + DONT), loop.text);
      assert.match(loop.text, /\. It was computing(,| the whole time)/);

      // 6 s: a JVM's own start takes 0.2 s of CPU on a busy machine, over
      // 5 % (the line between waiting and computing) of 3 s.
      const sleep = await runCode(c, { language: L.lang, code: L.sleep, timeout: 6 });
      assert.equal(sleep.isError, true, sleep.text);
      assert.match(sleep.text, /Over the 6 s time limit/);
      assert.match(sleep.text, /It was waiting, not computing \(little CPU time\): a sleep/);
    });
  }));
}

test('a memory hog: its time line says it went over the memory limit', withLogs(tb, async () => {
  await inChat('mem', async (c) => {
    const code = 'x = bytearray(1 << 30)\nx[::4096] = b"\\x01" * (1 << 18)\nprint("done")\n';
    const r = await runCode(c, { language: 'python', code, expected: 'done\n', timeout: 60 });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /^Run: .* Over the memory limit: the sandbox has 256\.0 MiB/m);
  });
}));

// ---- the output limit ---------------------------------------------------------------

for (const L of LANGS) {
  test(`${L.lang}: a program printing without end is stopped at the output limit`, withLogs(tb, async () => {
    await inChat(`spam-${L.lang}`, async (c) => {
      const r = await runCode(c, { language: L.lang, code: L.spam, timeout: 60 });
      assert.equal(r.isError, true, r.text);
      assert.ok(r.text.endsWith('OUTPUT LIMIT: the program printed more than 204800 bytes and was stopped at once '
        + '(only the head of what it printed is shown). It prints in a loop that does not end, or far more than '
        + 'the task asks for.\n' + DONT), r.text);
      assert.match(r.text, /\noutput:\ny{40}/);
      assert.ok(r.text.length < 20000, `only the head is shown (${r.text.length} chars)`);
      assert.doesNotMatch(r.text, /TIMEOUT/);
    });
  }));
}

// ---- the compile cache -----------------------------------------------------------------

for (const L of LANGS.filter((x) => x.compile)) {
  test(`${L.lang}: the same program again reuses its build, an edit compiles, other chats never share it`, withLogs(tb, async () => {
    const code = L.ab('a - b');
    const args = { language: L.lang, code, input: '9 4\n', expected: '5\n' };
    await inChat(`cache-${L.lang}`, async (c) => {
      const first = await runCode(c, args);
      assert.equal(first.isError, false, first.text);
      assert.doesNotMatch(first.text, /Build reused/);
      const second = await runCode(c, args);
      assert.equal(second.isError, false, second.text);
      assert.match(second.text, /\nBuild reused: this sandbox compiled the same .* source with the same line before, so that build runs \(not compiled again\)\.\n/);
      // Removed or replaced in /work, the kept build is put back.
      await runOk(c, 'rm -f main *.class');
      const third = await runCode(c, args);
      assert.equal(third.isError, false, third.text);
      assert.match(third.text, /Build reused/);
      // An edit compiles again, and its own result shows.
      const edited = await runCode(c, { ...args, code: L.ab('b - a'), expected: '-5\n' });
      assert.equal(edited.isError, false, edited.text);
      assert.doesNotMatch(edited.text, /Build reused/);
      // A tests call reuses it too.
      const t = await runCode(c, { language: L.lang, code: L.ab('b - a'), tests: [{ input: '1 1\n', expected: '0\n' }] });
      assert.match(t.text, /Build reused/);
    });
    await inChat(`cache2-${L.lang}`, async (c) => {
      const other = await runCode(c, args);
      assert.equal(other.isError, false, other.text);
      assert.doesNotMatch(other.text, /Build reused/, 'another chat never gets this chat\'s build');
    });
  }));
}

// ---- Java class names ----------------------------------------------------------------

test('a Java class named with $ never reaches the compile line', withLogs(tb, async () => {
  await inChat('dollar', async (c) => {
    const code = 'public class A$HOME {\n  public static void main(String[] x) { System.out.println(1); }\n}\n';
    const r = await runCode(c, { language: 'java', code, expected: '1\n' });
    assert.ok(r.text.startsWith(`Saved /work/A.java (${code.length} bytes).\n$ javac -J-Xmx160m -J-XX:TieredStopAtLevel=1 -d . A.java\n`), r.text);
    assert.doesNotMatch(r.text, /\/root/);
  });
}));
