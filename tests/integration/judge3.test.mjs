// judge3.test.mjs -- run_code's FAIL for answers right in all but form
// (judge/form.c), against real sandboxes: rounding, line breaks, the
// answer on stderr, a LeetCode-style class that nothing calls; and the
// right answer, which still passes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, call } from './harness.mjs';

const tb = new Talkback({ name: 'judge3', judges: 1 });
let c;

before(async () => {
  await tb.start();
  c = await connect(tb, { conv: tb.chat('form'), user: 'user-judge3' });
});

after(async () => {
  await c?.close().catch(() => {});
  await tb.cleanup();
});

const runCode = (args) => call(c, 'run_code', { language: 'python', ...args }, { timeout: 300000 });

/** The verdict line: the first line starting with PASS or FAIL. */
function verdict(r) {
  const l = r.text.split('\n').find((x) => /^(PASS|FAIL)/.test(x));
  assert.ok(l, r.text);
  return l;
}

test('rounding: the values agree to the expected precision, only the rounding differs', withLogs(tb, async () => {
  const r = await runCode({ code: 'print(1/3)\n', expected: '0.33\n' });
  assert.equal(r.isError, true);
  assert.equal(verdict(r), 'FAIL: the values agree to the expected precision (2 decimal places), so only the '
    + 'rounding differs. Print them rounded to 2 decimal places, as expected (Python: f"{x:.2f}"; C, C++: '
    + 'printf("%.2f", x)).');
  assert.match(r.text, /expected: 0\.33\n {2}got: {6}0\.333333/);
  assert.match(verdict(await runCode({ code: 'print(f"{1/3:.2f}")\n', expected: '0.33\n' })), /^PASS/);
  // A wrong value is a plain FAIL.
  assert.equal(verdict(await runCode({ code: 'print(0.4)\n', expected: '0.33\n' })), 'FAIL: line 1 differs.');
}));

test('line breaks: the values are right, only the line breaks differ', withLogs(tb, async () => {
  const r = await runCode({ code: 'for x in input().split():\n    print(x)\n', input: '1 2 3\n', expected: '1 2 3\n' });
  assert.equal(verdict(r), 'FAIL: the values are right and only the line breaks differ: '
    + '1 line was expected, the program printed 3. Print them all on one line, separated by spaces '
    + '(Python: print(*values)); C++: a space between values, one newline at the end).');
  assert.match(verdict(await runCode({ code: 'print(*input().split())\n', input: '1 2 3\n', expected: '1 2 3\n' })), /^PASS/);
}));

test('the answer on stderr: stderr is not compared, print to stdout', withLogs(tb, async () => {
  const r = await runCode({ code: 'import sys\nprint(int(input()) * 2, file=sys.stderr)\n', input: '21\n', expected: '42\n' });
  assert.equal(verdict(r), 'FAIL: stdout was empty, and the answer went to stderr: stderr is not compared, and '
    + 'the answer must go to stdout (Python: print(x), not print(x, file=sys.stderr); C++: cout, not cerr; '
    + 'Java: System.out, not System.err).');
}));

test('a class Solution nothing calls: it defines twoSum but never calls it', withLogs(tb, async () => {
  const code = 'from typing import List\n\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n'
    + '        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n'
    + '                return [seen[target - x], i]\n            seen[x] = i\n        return []\n';
  const r = await runCode({ code, input: '2 7 11 15\n9\n', expected: '0 1\n' });
  assert.equal(verdict(r), 'FAIL: the program printed nothing: the code defines `twoSum` but never calls it. '
    + 'The program must read the input and print the answer: add the lines that read stdin, call `twoSum` '
    + 'with it and print the result (run_code runs the code as a whole program).');
  const called = `${code}\nnums = list(map(int, input().split()))\nt = int(input())\nprint(*Solution().twoSum(nums, t))\n`;
  assert.match(verdict(await runCode({ code: called, input: '2 7 11 15\n9\n', expected: '0 1\n' })), /^PASS/);
  // A program that prints nothing and calls what it defines: the plain FAIL.
  const quiet = await runCode({ code: 'def f():\n    pass\n\nf()\n', expected: '1\n' });
  assert.match(verdict(quiet), /^FAIL: the program printed nothing, but output was expected/);
}));

test('a language run_code does not run: the install and run lines for the run tool; none in Debian: said', withLogs(tb, async () => {
  const r = await runCode({ language: 'scala', code: 'println(1)\n', input: '', expected: '1\n' });
  assert.equal(r.isError, true);
  assert.equal(r.text, '[talkback: run_code does not run Scala itself, but this sandbox can, with the run tool. '
    + 'Write the program to main.scala with write_file (its input to input.txt), then run: apt-get update && '
    + 'apt-get install -y scala && scala -J-Xmx160m main.scala < input.txt (the install is needed once per chat; '
    + 'after it: scala -J-Xmx160m main.scala < input.txt). Nothing ran.]');
  const ts = await runCode({ language: 'TypeScript', code: 'console.log(1)\n' });
  assert.match(ts.text, /npm install -g tsx && tsx main\.ts < input\.txt/);
  const zig = await runCode({ language: 'zig', code: 'x' });
  assert.match(zig.text, /^\[talkback: run_code does not run Zig, and Debian 13 has no package for it.* Write the program in a language run_code knows: C \(c\), C\+\+ \(cpp\)/);
  // A name nobody knows keeps the list.
  assert.match((await runCode({ language: 'brainfuck', code: 'x' })).text, /^\[talkback: run_code does not know the language `brainfuck`\. Use one of: /);
}));

test('Ruby, Tcl, PHP and Fortran, installed on first use in a sandbox made for the test: said with the time; then PASS and a run error', withLogs(tb, async () => {
  const c2 = await connect(tb, { conv: tb.chat('install'), user: 'user-judge3' });
  try {
    const rc = (args) => call(c2, 'run_code', args, { timeout: 300000 });
    const first = await rc({ language: 'ruby', code: 'puts gets.split.map(&:to_i).sum\n', input: '1 2 3\n', expected: '6\n' });
    assert.match(first.text, /^Installed Ruby in this sandbox on first use \(apt-get install -y ruby\): \d+\.\d s\. Later runs in this chat find it there\.$/m, first.text);
    assert.match(verdict(first), /^PASS/, first.text);
    const again = await rc({ language: 'rb', code: 'puts gets.to_i * 2\n', input: '21\n', expected: '42\n' });
    assert.doesNotMatch(again.text, /Installed Ruby/);
    assert.match(verdict(again), /^PASS/);
    const err = await rc({ language: 'ruby', code: 'puts(1\n', expected: '1\n' });
    assert.match(err.text, /syntax error|unexpected end-of-input/, err.text);
    assert.match(err.text, /^CRASH: the program exited with code 1/m, err.text);
    const tcl = await rc({ language: 'tcl', code: 'gets stdin n\nputs [expr {$n * 3}]\n', input: '5\n', expected: '15\n' });
    assert.match(tcl.text, /^Installed Tcl in this sandbox on first use \(apt-get install -y tcl\): /m, tcl.text);
    assert.match(verdict(tcl), /^PASS/, tcl.text);
    const tcle = await rc({ language: 'tcl', code: 'puts [expr {1 +}]\n', expected: '1\n' });
    assert.match(tcle.text, /^CRASH: the program exited with code 1/m, tcle.text);
    const php = await rc({ language: 'php', code: '<?php\n$n = (int) trim(fgets(STDIN));\necho $n + 1, "\\n";\n', input: '41\n', expected: '42\n' });
    assert.match(php.text, /^Installed PHP in this sandbox on first use \(apt-get install -y php-cli\): /m, php.text);
    assert.match(verdict(php), /^PASS/, php.text);
    const phpe = await rc({ language: 'php', code: '<?php\necho (1;\n', expected: '1\n' });
    assert.match(phpe.text, /^CRASH: the program exited with code 255/m, phpe.text);
    const f90 = 'program main\n  integer :: a, b\n  read(*,*) a, b\n  print \'(I0)\', a + b\nend program main\n';
    const fo = await rc({ language: 'fortran', code: f90, input: '2 3\n', expected: '5\n' });
    assert.match(fo.text, /^Installed Fortran in this sandbox on first use \(apt-get install -y gfortran\): /m, fo.text);
    assert.match(fo.text, /\$ gfortran -O2 -o main main\.f90/);
    assert.match(verdict(fo), /^PASS/, fo.text);
    const foe = await rc({ language: 'f90', code: 'program main\n  print *, x +\nend program main\n', expected: '1\n' });
    assert.match(foe.text, /^COMPILE ERROR: the program did not compile/m, foe.text);
  } finally {
    await c2.close().catch(() => {});
  }
}));

test('Pascal, D, OCaml, Common Lisp, Prolog, SQL and Ada, installed on first use: a PASS and a compile or run error each', withLogs(tb, async () => {
  const c3 = await connect(tb, { conv: tb.chat('install2'), user: 'user-judge3' });
  try {
    const rc = (args) => call(c3, 'run_code', args, { timeout: 300000 });
    const cases = [
      ['pascal', 'fp-compiler', 'program main;\nvar a, b: integer;\nbegin\n  readln(a, b);\n  writeln(a + b);\nend.\n',
        'program main;\nbegin\n  writeln(x)\nend.\n', /^COMPILE ERROR/m],
      ['d', 'gdc', 'import std.stdio;\nvoid main() { int a, b; readf(" %d %d", &a, &b); writeln(a + b); }\n',
        'void main() { x = ; }\n', /^COMPILE ERROR/m],
      ['ocaml', 'ocaml-nox', 'let () = Scanf.scanf " %d %d" (fun a b -> print_int (a + b); print_newline ())\n',
        'let () = print_int (1 +)\n', /^COMPILE ERROR/m],
      ['lisp', 'sbcl', '(let ((a (read)) (b (read))) (format t "~a~%" (+ a b)))\n',
        '(format t "~a~%" (+ 1 (car nil) "x"))\n', /^CRASH: the program exited with code/m],
      ['prolog', 'swi-prolog-nox', 'main :- read_line_to_string(user_input, S), split_string(S, " ", "", [A, B]),\n'
        + '    number_string(X, A), number_string(Y, B), Z is X + Y, format("~w~n", [Z]).\n',
        'main :- X is foo + 1, write(X).\n', /^CRASH: the program exited with code/m],
      ['sql', 'sqlite3', 'SELECT 2 + 3;\n', 'SELEC 1;\n', /^CRASH: the program exited with code 1/m],
      ['ada', 'gnat', 'with Ada.Integer_Text_IO; use Ada.Integer_Text_IO;\nwith Ada.Text_IO; use Ada.Text_IO;\n'
        + 'procedure Main is\n   A, B : Integer;\nbegin\n   Get (A);\n   Get (B);\n   Put (A + B, Width => 0);\n   New_Line;\nend Main;\n',
        'procedure Main is\nbegin\n   X := 1;\nend Main;\n', /^COMPILE ERROR/m],
    ];
    for (const [language, pkg, ok, bad, badRe] of cases) {
      const r = await rc({ language, code: ok, input: '2 3\n', expected: '5\n' });
      assert.match(r.text, new RegExp(`^Installed .* in this sandbox on first use \\(apt-get install -y ${pkg}\\): `, 'm'), r.text);
      assert.match(verdict(r), /^PASS/, r.text);
      const e = await rc({ language, code: bad, expected: '1\n' });
      assert.doesNotMatch(e.text, /Installed/);
      assert.match(e.text, badRe, e.text);
    }
  } finally {
    await c3.close().catch(() => {});
  }
}));

test('R, Scheme, Erlang, Objective-C and COBOL, installed on first use: a PASS and a compile or run error each', withLogs(tb, async () => {
  const c4 = await connect(tb, { conv: tb.chat('install3'), user: 'user-judge3' });
  try {
    const rc = (args) => call(c4, 'run_code', args, { timeout: 300000 });
    const cases = [
      ['r', 'r-base-core', 'x <- scan(file("stdin"), quiet = TRUE)\ncat(sum(x), "\\n", sep = "")\n',
        'cat(undefined_thing)\n', /^CRASH: the program exited with code 1/m, /\$ Rscript main\.R < main\.in/],
      ['scheme', 'guile-3.0', '(let* ((a (read)) (b (read))) (display (+ a b)) (newline))\n',
        '(display (car 5))\n', /^CRASH: the program exited with code/m, /\$ guile --no-auto-compile -s main\.scm < main\.in/],
      ['erlang', 'erlang-nox', '-module(main).\n-export([main/1]).\nmain(_) ->\n'
        + '    {ok, [A, B]} = io:fread("", "~d ~d"),\n    io:format("~w~n", [A + B]).\n',
        '-module(main).\n-export([main/1]).\nmain(_) -> x = .\n', /^CRASH: the program exited with code/m,
        /\$ escript main\.erl < main\.in/],
      ['objc', 'gobjc', '#import <stdio.h>\nint main(void) { int a, b; scanf("%d %d", &a, &b); printf("%d\\n", a + b); return 0; }\n',
        'int main(void) { return x; }\n', /^COMPILE ERROR/m, /\$ gcc -O2 -o main main\.m -lobjc/],
      ['cobol', 'gnucobol3', '       IDENTIFICATION DIVISION.\n       PROGRAM-ID. MAIN.\n       DATA DIVISION.\n'
        + '       WORKING-STORAGE SECTION.\n       01 A PIC 9(5).\n       01 B PIC 9(5).\n       01 C PIC Z(5)9.\n'
        + '       PROCEDURE DIVISION.\n           ACCEPT A.\n           ACCEPT B.\n'
        + '           ADD A TO B GIVING C.\n           DISPLAY FUNCTION TRIM(C).\n           STOP RUN.\n',
        '       IDENTIFICATION DIVISION.\n       PROGRAM-ID. MAIN.\n       PROCEDURE DIVISION.\n           MOVE X TO.\n',
        /^COMPILE ERROR/m, /\$ cobc -x -o main main\.cob/],
    ];
    for (const [language, pkg, ok, bad, badRe, line] of cases) {
      const input = language === 'cobol' ? '2\n3\n' : '2 3\n';
      const r = await rc({ language, code: ok, input, expected: '5\n' });
      assert.match(r.text, new RegExp(`^Installed .* in this sandbox on first use \\(apt-get install -y ${pkg}\\): `, 'm'), r.text);
      assert.match(verdict(r), /^PASS/, r.text);
      assert.match(r.text, line, r.text);
      const e = await rc({ language, code: bad, expected: '1\n' });
      assert.doesNotMatch(e.text, /Installed/);
      assert.match(e.text, badRe, e.text);
    }
  } finally {
    await c4.close().catch(() => {});
  }
}));

test('Perl and AWK, in the image: a PASS and a run error each', withLogs(tb, async () => {
  const pl = await runCode({ language: 'perl', code: 'my @a = split " ", <STDIN>; my $s = 0; $s += $_ for @a; print "$s\\n";\n',
    input: '1 2 3\n', expected: '6\n' });
  assert.match(verdict(pl), /^PASS/, pl.text);
  assert.match(pl.text, /\$ perl main\.pl < main\.in/);
  const ple = await runCode({ language: 'pl', code: 'print "x\n"\nmy $ = ;\n', expected: 'x\n' });
  assert.match(ple.text, /^CRASH: the program exited with code 255/m, ple.text);
  const awk = await runCode({ language: 'awk', code: '{ s += $1 } END { print s }\n', input: '4\n5\n', expected: '9\n' });
  assert.match(verdict(awk), /^PASS/, awk.text);
  assert.match(awk.text, /\$ awk -f main\.awk < main\.in/);
  const awe = await runCode({ language: 'awk', code: '{ print $1 \n', input: '1\n', expected: '1\n' });
  assert.match(awe.text, /^CRASH: the program exited with code 2/m, awe.text);
}));

test('a program whose output is binary: described in run_code too, never pasted', withLogs(tb, async () => {
  const r = await runCode({ language: 'python', code: 'import sys\nsys.stdout.buffer.write(bytes(range(256)) * 4)\n', expected: '1\n' });
  assert.match(r.text, /\noutput:\n\[The output is binary, not text: 1024 bytes of binary data\. /, r.text);
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(r.text, /[\x00-\x09\x0b-\x1f\x7f]/);
  assert.match(r.text, /^FAIL/m);
}));
