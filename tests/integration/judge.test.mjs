// judge.test.mjs -- run_code through MCP, end to end: the gateway, one
// judge worker, the sandbox manager and the real sandbox image.
//   - every language of judge/languages.c: an a+b program that PASSes, a
//     wrong one (prints a+b+1) whose FAIL names the differing line, and for
//     the compiled ones a program that does not compile; the compile and
//     run lines are the table's, the file name too (Java: the public
//     class's name), the calls use the aliases (cpp, c++, py, python3, js,
//     node, sh, rs, golang, kt, cs, csharp, hs, ...), and the program and
//     its input (main.in) stay in /work, where `run` reruns the shown line
//   - an unknown language: isError, listing the supported ones
//   - the closing sentence: every FAIL, crash, timeout and compile error
//     ends with "Don't answer yet: ..."; a PASS never does
//   - a Kadane program with input prompts (the prompt FAIL), LeetCode 128
//     printing `Input: [...]` above its answer (no prompt scolding, line 1
//     named), hello world without expected (output only, no verdict),
//     a program reading an empty stdin (ends at once), stderr shown apart
//     and not compared, CRLF and trailing blanks (plain PASS), spacing and
//     float leniency (a PASS that says so)
//   - an infinite loop (TIMEOUT), a memory hog (the OOM CRASH), a fork bomb
//     (contained: the sandbox answers a `run` afterwards)
//   - the precompiled bits/stdc++.h is used by the C++ compile line

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Talkback, withLogs, connect, call, run, runOk, containersOf, docker, memoryPhrase,
} from './harness.mjs';

const tb = new Talkback({ name: 'judge', judges: 1 });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

const DONT = "Don't answer yet: fix the code and call run_code again until it says PASS.\n";
const PASS = 'PASS: the output matches the expected output.\n';
// Compiles run in a 1-CPU, 256 MiB sandbox: Kotlin and Haskell take a while.
const CALL_TIMEOUT = 300000;

/** A fresh chat with its own sandbox; fn(client, conv). */
async function inChat(label, fn) {
  const conv = tb.chat(label);
  const c = await connect(tb, { conv, user: 'user-judge' });
  try {
    return await fn(c, conv);
  } finally {
    await c.close();
  }
}

/** run_code: {text, isError, ms, result}. */
function runCode(c, args) {
  return call(c, 'run_code', args, { timeout: CALL_TIMEOUT });
}

/** A failure of any kind: isError, and the text ends with exactly one closing sentence. */
function assertClosed(r, tail) {
  assert.equal(r.isError, true, r.text);
  assert.ok(r.text.endsWith(tail + DONT), `expected the text to end with\n${tail}${DONT}---- got:\n${r.text}`);
  assert.equal(r.text.split(DONT).length, 2, `the closing sentence once:\n${r.text}`);
  assert.doesNotMatch(r.text, /\bPASS:/, r.text);
}

/** A PASS: no isError, the verdict line last, no closing sentence. */
function assertPass(r, verdict = PASS) {
  assert.equal(r.isError, false, r.text);
  assert.ok(r.text.endsWith(verdict), `expected the text to end with\n${verdict}---- got:\n${r.text}`);
  assert.ok(!r.text.includes("Don't answer yet"), r.text);
  assert.doesNotMatch(r.text, /\bFAIL/, r.text);
}

// ---- the per-language table ------------------------------------------------
//
// ab(e): a program that reads two integers from stdin and prints e, an
// expression of a and b.  bad: a program that does not compile, message:
// what its compiler says about it.  names: the language names (aliases,
// any case) of the PASS, FAIL and compile-error calls.

const A = 1000000000;
const B = 2345678901; // a+b does not fit 32 bits
const INPUT = `${A} ${B}\n`;
const SUM = String(A + B);
const WRONG = String(A + B + 1);

const LANGS = [
  {
    lang: 'C', names: ['c', 'gcc', 'C'], file: 'main.c',
    compile: 'gcc -O2 -std=gnu17 -pipe -o main main.c -lm', run: './main',
    ab: (e) => String.raw`#include <stdio.h>

int main(void) {
    long long a, b;
    if (scanf("%lld %lld", &a, &b) != 2) return 1;
    printf("%lld\n", ${e});
    return 0;
}
`,
    message: /error: expected .;. before .printf./,
    bad: String.raw`#include <stdio.h>

int main(void) {
    long long a, b;
    scanf("%lld %lld", &a, &b)
    printf("%lld\n", a + b);
}
`,
  },
  {
    lang: 'C++', names: ['cpp', 'c++', 'C++'], file: 'main.cpp',
    compile: 'g++ -O2 -std=c++17 -pipe -I/opt/talkback/pch -Winvalid-pch -o main main.cpp', run: './main',
    ab: (e) => String.raw`#include <bits/stdc++.h>
using namespace std;

int main() {
    long long a, b;
    cin >> a >> b;
    cout << ${e} << "\n";
}
`,
    message: /error: conversion from .long long int. to non-scalar type/,
    bad: String.raw`#include <bits/stdc++.h>
using namespace std;

int main() {
    long long a, b;
    cin >> a >> b;
    string s = a + b;
    cout << s << "\n";
}
`,
  },
  {
    lang: 'Python', names: ['py', 'python3'], file: 'main.py', run: 'python3 main.py',
    ab: (e) => String.raw`a, b = map(int, input().split())
print(${e})
`,
  },
  {
    lang: 'JavaScript', names: ['js', 'node'], file: 'main.js', run: 'node main.js',
    ab: (e) => String.raw`const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\s+/).map(Number);
console.log(${e});
`,
  },
  {
    lang: 'Bash', names: ['sh', 'bash'], file: 'main.sh', run: 'bash main.sh',
    ab: (e) => String.raw`read -r a b
echo $((${e}))
`,
  },
  {
    lang: 'Rust', names: ['rs', 'rust', 'rustc'], file: 'main.rs',
    compile: 'rustc -O -o main main.rs', run: './main',
    ab: (e) => String.raw`use std::io::Read;

fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    let (a, b) = (v[0], v[1]);
    println!("{}", ${e});
}
`,
    message: /error\[E0308\]: mismatched types/,
    bad: String.raw`fn main() {
    let x: i64 = "5";
    println!("{}", x);
}
`,
  },
  {
    lang: 'Go', names: ['golang', 'go', 'Go'], file: 'main.go',
    compile: 'go build -o main main.go', run: './main',
    ab: (e) => String.raw`package main

import "fmt"

func main() {
	var a, b int64
	fmt.Scan(&a, &b)
	fmt.Println(${e})
}
`,
    message: /undefined: c/,
    bad: String.raw`package main

import "fmt"

func main() {
	var a, b int64
	fmt.Scan(&a, &b)
	fmt.Println(a + c)
}
`,
  },
  {
    lang: 'Java', names: ['java', 'Java', 'JAVA'], file: 'TwoSum.java',
    compile: 'javac -J-Xmx160m -J-XX:TieredStopAtLevel=1 -d . TwoSum.java', run: 'java -Xmx160m -Xss64m -cp . TwoSum',
    ab: (e) => String.raw`import java.util.Scanner;

// class Helper is not the one to run
public class TwoSum {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        long a = in.nextLong(), b = in.nextLong();
        System.out.println(${e});
    }
}
`,
    message: /TwoSum\.java:3: error: ';' expected/,
    bad: String.raw`public class TwoSum {
    public static void main(String[] args) {
        int a = 2
        System.out.println(a);
    }
}
`,
  },
  {
    lang: 'Kotlin', names: ['kt', 'kotlin', 'kts'], file: 'main.kt',
    compile: 'JAVA_OPTS=-Xmx160m kotlinc main.kt -include-runtime -d main.jar', run: 'java -Xmx160m -Xss64m -jar main.jar',
    ab: (e) => String.raw`fun main() {
    val (a, b) = readLine()!!.trim().split(Regex("\\s+")).map { it.toLong() }
    println(${e})
}
`,
    message: /mismatch/i,
    bad: String.raw`fun main() {
    val x: Int = "five"
    println(x)
}
`,
  },
  {
    lang: 'C#', names: ['cs', 'csharp', 'c#'], file: 'main.cs',
    compile: 'mcs -out:main.exe main.cs', run: 'mono main.exe',
    ab: (e) => String.raw`using System;

class Program {
    static void Main() {
        var p = Console.ReadLine().Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
        long a = long.Parse(p[0]), b = long.Parse(p[1]);
        Console.WriteLine(${e});
    }
}
`,
    message: /error CS0029: Cannot implicitly convert type `string' to `int'/,
    bad: String.raw`using System;

class Program {
    static void Main() {
        int x = "five";
        Console.WriteLine(x);
    }
}
`,
  },
  {
    lang: 'Haskell', names: ['hs', 'haskell', 'ghc'], file: 'main.hs',
    compile: 'ghc -O1 -o main main.hs +RTS -M200m -RTS', run: './main',
    ab: (e) => String.raw`main :: IO ()
main = do
  [a, b] <- map read . words <$> getContents :: IO [Integer]
  print (${e})
`,
    message: /No instance for .Num String./,
    bad: String.raw`main :: IO ()
main = print (1 + "two")
`,
  },
  {
    lang: 'Lua', names: ['lua', 'lua5.4'], file: 'main.lua', run: 'lua5.4 main.lua',
    ab: (e) => String.raw`local a, b = io.read("n", "n")
print(${e})
`,
  },
];

/** The head every run_code text starts with: the saved file and the compile line. */
function head(L, code) {
  return `Saved /work/${L.file} (${Buffer.byteLength(code)} bytes).\n` + (L.compile ? `$ ${L.compile}\n` : '');
}

const times = [];

for (const L of LANGS) {
  const what = L.compile ? 'PASS, FAIL and COMPILE ERROR' : 'PASS and FAIL';
  test(`${L.lang}: a+b gives ${what}, with the table's file, compile and run lines`, withLogs(tb, async () => {
    await inChat(`lang-${L.names[0].replace(/\W/g, 'x')}`, async (c) => {
      const t = { lang: L.lang };
      times.push(t);
      // PASS
      const good = L.ab('a + b');
      const p = await runCode(c, { language: L.names[0], code: good, input: INPUT, expected: `${SUM}\n` });
      t.pass = p.ms;
      assert.ok(p.text.startsWith(head(L, good)), `the head of\n${p.text}`);
      assertPass(p);
      assert.ok(p.text.endsWith(`$ ${L.run} < main.in\ninput:\n${INPUT}output:\n${SUM}\n${PASS}`), p.text);

      // FAIL: a wrong answer names line 1 with both sides
      const wrong = L.ab('a + b + 1');
      const f = await runCode(c, { language: L.names[1], code: wrong, input: INPUT, expected: `${SUM}\n` });
      t.fail = f.ms;
      assert.ok(f.text.startsWith(head(L, wrong)), `the head of\n${f.text}`);
      assertClosed(f, `$ ${L.run} < main.in\ninput:\n${INPUT}output:\n${WRONG}\n`
        + `FAIL: line 1 differs.\n  expected: ${SUM}\n  got:      ${WRONG}\n`);
      // The run line works as shown, with run: the input is saved beside the program.
      assert.equal(await runOk(c, `${L.run} < main.in`), `${WRONG}\n`);

      let last = wrong;
      if (L.compile) {
        const ce = await runCode(c, { language: L.names[2], code: L.bad, input: INPUT, expected: `${SUM}\n` });
        t.compileError = ce.ms;
        assert.ok(ce.text.startsWith(head(L, L.bad)), `the head of\n${ce.text}`);
        assertClosed(ce, 'COMPILE ERROR: the program did not compile (exit code 1), so it did not run.\n');
        // The compiler's messages are shown; nothing ran.
        const messages = ce.text.slice(head(L, L.bad).length, ce.text.indexOf('COMPILE ERROR:'));
        assert.match(messages, L.message, `compiler messages:\n${ce.text}`);
        assert.ok(!ce.text.includes(`$ ${L.run}`), `the program must not run:\n${ce.text}`);
        assert.ok(!ce.text.includes('output:'), ce.text);
        last = L.bad;
      }

      // The program and its input stay in /work for a later run.
      assert.equal(await runOk(c, `cat /work/${L.file}; echo ----; cat /work/main.in`), `${last}----\n${INPUT}`);
    });
  }));
}

// ---- errors of the call itself ---------------------------------------------------

test('an unknown language: isError listing the supported languages, nothing ran', withLogs(tb, async () => {
  await inChat('unknown', async (c, conv) => {
    const r = await runCode(c, { language: 'brainfuck', code: '+[.]' });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.text, '[talkback: run_code does not know the language `brainfuck`. Use one of: '
      + 'C (c), C++ (cpp), Python (python), JavaScript (javascript), Bash (bash), Rust (rust), Go (go), '
      + 'Java (java), Kotlin (kotlin), C# (csharp), Haskell (haskell), Lua (lua), Perl (perl), AWK (awk), Ruby (ruby), PHP (php), Tcl (tcl), '
      + 'Fortran (fortran), Pascal (pascal), D (d), OCaml (ocaml), Common Lisp (lisp), '
      + 'Prolog (prolog), SQL (sql), Ada (ada), R (r), Scheme (scheme), Erlang (erlang), '
      + 'Objective-C (objc), COBOL (cobol). '
      + 'Nothing ran.]');
    assert.deepEqual(await containersOf(conv), [], 'no sandbox was made for it');
  });
}));

// ---- what the text says -----------------------------------------------------------

test('hello world without expected: the output only, no verdict and no invented test', withLogs(tb, async () => {
  await inChat('hello', async (c) => {
    const code = 'print("Hello, World!")\n';
    const r = await runCode(c, { language: 'python', code });
    assert.equal(r.isError, false, r.text);
    // Every run has its time line (judge2.test.mjs tests it); the rest is exact.
    assert.equal(r.text.replace(/^Run: [^\n]*\n/m, ''), `Saved /work/main.py (${code.length} bytes).\n`
      + '$ python3 main.py < /dev/null\ninput: (none: stdin was empty)\noutput:\nHello, World!\n');
    assert.doesNotMatch(r.text, /PASS|FAIL|Don't answer yet|expected/);
  });
}));

test('a program reading stdin with no input given ends at once (stdin is empty, not open)', withLogs(tb, async () => {
  await inChat('stdin', async (c) => {
    const code = 'import sys\ndata = sys.stdin.read().split()\nprint(len(data))\n';
    const r = await runCode(c, { language: 'python', code, expected: '0\n', timeout: 20 });
    assert.ok(r.text.includes('$ python3 main.py < /dev/null\ninput: (none: stdin was empty)\noutput:\n0\n'), r.text);
    assertPass(r);
    assert.ok(r.ms < 15000, `the call took ${r.ms} ms: stdin looks open`);
  });
}));

test('Kadane with input prompts: the prompt FAIL, naming the prompt', withLogs(tb, async () => {
  await inChat('kadane', async (c) => {
    const code = String.raw`#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cout << "Enter the number of elements: ";
    cin >> n;
    vector<long long> a(n);
    cout << "Enter the elements: ";
    for (auto &x : a) cin >> x;
    long long best = a[0], cur = 0;
    for (long long x : a) {
        cur = max(x, cur + x);
        best = max(best, cur);
    }
    cout << "Maximum subarray sum: " << best << endl;
}
`;
    const r = await runCode(c, { language: 'cpp', code, input: '9\n-2 1 -3 4 -1 2 1 -5 4\n', expected: '6\n' });
    const got = 'Enter the number of elements: Enter the elements: Maximum subarray sum: 6';
    assertClosed(r, `output:\n${got}\n`
      + 'FAIL: the program prints an input prompt (`Enter the number of elements:`). Nobody types here: '
      + 'the input comes from stdin, all at once. Remove every prompt and print only what the task asks for.\n'
      + `  expected: 6\n  got:      ${got}\n`);
  });
}));

test('LeetCode 128 printing "Input: [...]" above its answer: line 1 named, no prompt scolding', withLogs(tb, async () => {
  await inChat('lc128', async (c) => {
    const code = `def longest_consecutive(nums):
    s = set(nums)
    best = 0
    for x in s:
        if x - 1 not in s:
            y = x
            while y + 1 in s:
                y += 1
            best = max(best, y - x + 1)
    return best


nums = list(map(int, input().split()))
print("Input:", nums)
print(longest_consecutive(nums))
`;
    const r = await runCode(c, { language: 'python', code, input: '100 4 200 1 3 2\n', expected: '4\n' });
    assertClosed(r, 'output:\nInput: [100, 4, 200, 1, 3, 2]\n4\n'
      + 'FAIL: line 1 differs.\n  expected: 4\n  got:      Input: [100, 4, 200, 1, 3, 2]\n');
    assert.doesNotMatch(r.text, /prompt|Nobody types/, r.text);
  });
}));

test('stderr is shown apart and not compared', withLogs(tb, async () => {
  await inChat('stderr', async (c) => {
    const code = 'import sys\na, b = map(int, input().split())\n'
      + 'print("debug: read", a, b, file=sys.stderr)\nprint(a + b)\n';
    const r = await runCode(c, { language: 'py', code, input: '2 3\n', expected: '5\n' });
    assertPass(r);
    assert.ok(r.text.endsWith('output:\n5\nstderr (not compared):\ndebug: read 2 3\n' + PASS), r.text);
  });
}));

test('CRLF line ends, trailing blanks and blank lines at the end: a plain PASS', withLogs(tb, async () => {
  await inChat('crlf', async (c) => {
    const code = 'import sys\nsys.stdout.write("1 2  \\r\\n3\\t\\r\\n\\r\\n")\n';
    const r = await runCode(c, { language: 'python', code, expected: '1 2\n3\n' });
    assertPass(r);
    assert.ok(r.text.endsWith('output:\n1 2  \r\n3\t\r\n\r\n' + PASS), JSON.stringify(r.text));
  });
}));

test('a PASS that needed leniency says so: spacing, and numbers within 1e-6', withLogs(tb, async () => {
  await inChat('lenient', async (c) => {
    const s = await runCode(c, { language: 'python', code: 'print("1  2   3")\n', expected: '1 2 3\n' });
    assertPass(s, 'PASS: the output matches the expected output (only spacing differs: '
      + 'extra or missing spaces between values were ignored).\n');
    const f = await runCode(c, { language: 'python', code: 'print(1 / 3)\n', expected: '0.333333\n' });
    assertPass(f, 'PASS: the output matches the expected output (numbers differ by at most 1e-6, '
      + 'which counts as equal).\n');
    assert.ok(f.text.includes('output:\n0.3333333333333333\n'), f.text);
  });
}));

// ---- programs that misbehave ---------------------------------------------------------

test('an infinite loop: TIMEOUT after the given seconds', withLogs(tb, async () => {
  await inChat('loop', async (c) => {
    const r = await runCode(c, { language: 'python', code: 'while True:\n    pass\n', input: '1\n', expected: '1\n', timeout: 3 });
    assertClosed(r, 'output: (nothing)\nTIMEOUT: the program ran longer than 3 s and was killed, with everything '
      + 'it started. It loops forever, waits for input that was not given, or is too slow.\n');
    assert.ok(r.ms >= 2900 && r.ms < 30000, `the call took ${r.ms} ms`);
  });
}));

test('a memory hog: CRASH explained as running out of the sandbox memory', withLogs(tb, async () => {
  await inChat('oom', async (c) => {
    // 1 GiB, every page written.
    const code = 'x = bytearray(1 << 30)\nx[::4096] = b"\\x01" * (1 << 18)\nprint("done")\n';
    const r = await runCode(c, { language: 'python', code, expected: 'done\n', timeout: 60 });
    assertClosed(r, 'CRASH: the program was killed (exit code 137, SIGKILL), most likely because it ran '
      + `out of memory: this sandbox has ${memoryPhrase(256, 768)}.\n`);
    // The sandbox is fine afterwards.
    assert.equal(await runOk(c, 'echo still here'), 'still here\n');
  });
}));

// ---- the image ---------------------------------------------------------------------------

test('the C++ compile line uses the precompiled bits/stdc++.h', withLogs(tb, async () => {
  await inChat('pch', async (c) => {
    const cpp = LANGS.find((L) => L.lang === 'C++');
    const code = '#include <bits/stdc++.h>\nint main() { std::vector<int> v{2, 3}; std::cout << v[0] + v[1] << std::endl; }\n';
    const w = await call(c, 'write_file', { path: 'pch/main.cpp', content: code });
    assert.equal(w.isError, false, w.text);
    // The judge's exact line, plus -H: g++ lists the headers it reads, "!" marking a PCH it used.
    const line = cpp.compile.replace(' -o main', ' -H -o main');
    const out = await runOk(c, `cd /work/pch && ${line} 2>&1 && ./main`, { timeout: 120 });
    const lines = out.split('\n');
    assert.ok(lines.some((l) => l.startsWith('! /opt/talkback/pch/bits/stdc++.h.gch')),
      `no "! /opt/talkback/pch/bits/stdc++.h.gch" line: the PCH was not used\n${out}`);
    assert.doesNotMatch(out, /invalid|not used because|^x /m, out);
    assert.equal(lines.at(-2), '5', out);
  });
}));

// Last: when it goes wrong, the bomb keeps a CPU busy.
test('a fork bomb is contained: it ends with the program (or its timeout), and the sandbox still answers', withLogs(tb, async () => {
  await inChat('forkbomb', async (c, conv) => {
    try {
      // Both halves are checked and reported together: the verdict, then
      // whether the sandbox still answers.
      const problems = [];
      // The bomb's first shell returns at once; what it left running is
      // killed when it ends (or at the timeout, if it keeps the shell busy).
      const r = await runCode(c, { language: 'bash', code: ':(){ :|:& };:\n', timeout: 5 });
      const ended = (!r.isError && /\noutput:/.test(r.text) && !/PASS|FAIL/.test(r.text))
        || (r.isError && /\n(TIMEOUT: the program ran longer than 5 s and was killed|CRASH: )/.test(r.text)
            && r.text.endsWith(DONT));
      if (!ended || r.ms >= 60000) {
        problems.push(`run_code of the fork bomb (isError=${r.isError}, ${r.ms} ms) did not end cleanly:\n${r.text}`);
      }
      const t0 = Date.now();
      try {
        const alive = await run(c, 'echo alive', { timeout: 20, callTimeout: 35000 });
        if (alive.text !== '$ echo alive\nalive\n' || alive.ms >= 30000) {
          problems.push(`run "echo alive" afterwards took ${alive.ms} ms and said:\n${alive.text}`);
        }
        // Nothing of the bomb is left: a handful of processes, not hundreds.
        const n = Number((await run(c, 'ps -e --no-headers | wc -l')).text.split('\n')[1]);
        if (!(n < 30)) problems.push(`${n} processes left in the sandbox after the bomb`);
      } catch (e) {
        problems.push(`run "echo alive" afterwards got no answer in ${Date.now() - t0} ms: ${e.message}`);
      }
      assert.deepEqual(problems, [], problems.join('\n\n'));
    } finally {
      // A bomb that got out keeps running; do not let it slow the other tests.
      const ids = (await containersOf(conv)).map((x) => x.id);
      if (ids.length) await docker('rm', '-f', ...ids).catch(() => {});
    }
  });
}));

after(() => {
  if (!times.length) return;
  const ms = (v) => (v === undefined ? '-' : `${v} ms`);
  const rows = times.map((t) => `  ${t.lang.padEnd(11)} pass ${ms(t.pass)}, fail ${ms(t.fail)}`
    + (LANGS.find((L) => L.lang === t.lang).compile ? `, compile error ${ms(t.compileError)}` : ''));
  process.stderr.write(`run_code times per language:\n${rows.join('\n')}\n`);
});
