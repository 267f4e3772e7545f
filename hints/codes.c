/* codes.c -- hint entries for exit codes that are not errors, for the
 * signals that ended a program, and for output that is not there
 * (table.h says what an entry is; the engine reads this table last).
 *
 * A small model reads `[exit code 1]` as "it failed", and a result that is
 * the `$` line alone as whatever it hoped for.  But grep exits 1 when no
 * line matched, diff when the files differ, timeout 124 when it stopped
 * the command; and an exit code above 128 is a signal, 128 + its number,
 * which says how a program was stopped better than any message it had no
 * time to print.  Each entry here says which of those a result is, in the
 * model's terms, and what to do next.
 *
 * Quiet cases are the rule: a grep that matched, a diff of equal files, a
 * program that printed its answer, and commands that are silent when they
 * work (mkdir, cp, test, ls of an empty folder, a write to a file) get
 * nothing.  The "no output" entries are for programs only, and speak only
 * when nothing before them did (alone).
 */
#include "hints/table.h"

/* ---- building blocks --------------------------------------------------------- */

/* A program of the model's own: an interpreter, a built binary, a script.
 * One regex group from AT_CMD, then the program ({c2}). */
#define PROGRAM                                                                                    \
    AT_CMD "(python[0-9.]*|pypy3?|node|nodejs|deno|bun|ruby|perl|php|lua[0-9.]*|luajit|Rscript"    \
           "|julia|java|kotlin|scala|mono|dotnet|go[[:space:]]+run|cargo[[:space:]]+run|swift"     \
           "|dart|elixir|escript|racket|guile|ocaml|runghc|runhaskell|tsx|ts-node|bash|sh|dash"    \
           "|zsh|(\\.{1,2}|~)?/[^[:space:];&|<>]+|[A-Za-z0-9_.-]+\\.out)([[:space:]]|\\')"

/* Programs run as tools that print nothing when they work: making a
 * virtualenv, installing quietly, checking syntax. */
#define SILENT_TOOLS                                                                               \
    "python[0-9.]*[[:space:]]+-m[[:space:]]+(venv|virtualenv|pip|ensurepip|compileall"             \
    "|py_compile)\\>|\\<(node|nodejs)[[:space:]]+(--check|-c)\\>|\\<(bash|sh|dash)[[:space:]]+-"   \
    "n\\>"

/* A signal's entry: exit code 128 + n, not an error the program reported
 * but the way it was stopped. */
#define SIGNAL(nm, c, text)                                                                        \
    {                                                                                              \
        .name = nm, .exit = HX_CODE, .code = c, .say = { text },                                   \
    }

/* ---- the table ---------------------------------------------------------------------- */

const hint_t hints_codes[] = {
    /* -- exit codes that are answers, not errors -- */
    {
        .name = "grep-no-match",
        .cmd = AT_CMD "((e|f|z|bz|xz)?grep|rg|ag|git[[:space:]]+grep)\\>" LAST_TAIL,
        .exit = HX_CODE,
        .code = 1,
        .say = { "[No line matched, so grep printed nothing and exited with 1: that is grep's "
                 "answer \"not found\", not an error (0: found, 2: an error such as a missing "
                 "file).]" },
    },
    {
        .name = "diff-differs",
        .cmd = AT_CMD "(diff|cmp|colordiff|git[[:space:]]+diff[[:space:]][^;&|]*--(exit-code|quiet)"
                      "|git[[:space:]]+diff[[:space:]]+--no-index)\\>" LAST_TAIL,
        .exit = HX_CODE,
        .code = 1,
        .say = { "[Exit code 1 from {c2} means the files differ (0: they are the same, 2: "
                 "trouble), "
                 "not that it failed: what it printed above are the differences.]" },
    },
    {
        .name = "pgrep-none",
        .cmd = AT_CMD "(pgrep|pidof)\\>" LAST_TAIL,
        .not_out = "[^[:space:]]",
        .exit = HX_CODE,
        .code = 1,
        .say = { "[No process matched, so {c2} printed nothing and exited with 1: nothing of that "
                 "name is running in this sandbox now. That is its answer, not an error.]" },
    },
    {
        .name = "timeout-124",
        .cmd = "\\<timeout[[:space:]]+(-[^[:space:]]+[[:space:]]+([A-Z0-9]+[[:space:]]+)?)*"
               "([0-9.]+[smhd]?)[[:space:]]",
        .exit = HX_CODE,
        .code = 124,
        .say = { "[timeout stopped the command after {c3} (exit code 124 is timeout's own: the "
                 "command had not finished). A server never finishes: start it in the background "
                 "instead. A computation needs longer (a larger timeout) or a faster way; a "
                 "program "
                 "waiting for input needs its input in the command.]" },
    },

    {
        .name = "which-none",
        .cmd = AT_CMD "(which|command[[:space:]]+-v|type[[:space:]]+-[pP])[[:space:]]+([A-Za-z0-9._+-]+)"
               "[[:space:]]*(2>[^[:space:]]+[[:space:]]*)?\\'",
        .not_out = "[^[:space:]]",
        .exit = HX_CODE, .code = 1,
        .probe = "c={c3}; cmd={cmd}; " PROBE_COMMAND_PACKAGE,
        .say = {
            [0] = "[No program {c3} is installed here ({c2} found none: that is its answer, not an "
                  "error). Install it: {p1}]",
            [1] = "[No program {c3} is installed here ({c2} found none: that is its answer, not an "
                  "error).]",
            [2] = "[No program {c3} is installed here ({c2} found none). {p1}.]",
        },
    },
    {
        .name = "pytest-no-tests",
        .cmd = "\\<(py\\.test|pytest)\\>",
        .exit = HX_CODE, .code = 5,
        .say = { "[pytest found no tests, so none ran (exit code 5 means that): test files must be "
                 "named test_*.py or *_test.py and hold functions named test_*. Name them so, or "
                 "give the file: pytest -q FILE.]" },
    },
    {
        .name = "make-no-makefile",
        .cmd = AT_CMD "make\\>",
        .out = "No targets specified and no makefile found|No rule to make target",
        .exit = HX_NONZERO,
        .say = { "[make built nothing: there is no Makefile here, or it has no rule for that "
                 "target. Compile directly (gcc -O2 -o main main.c), or write a Makefile "
                 "first.]" },
    },

    /* -- signals: 128 + the signal's number (139 and 136: hints.c; 137: OOM) -- */
    {
        .name = "abort-uncaught",
        .group = "abort",
        .out = "terminate called after throwing an instance of '([^']+)'",
        .exit = HX_CODE,
        .code = 134,
        .say = { "[The C++ program threw {o1} and nothing caught it, so it aborted (SIGABRT, exit "
                 "code 134); its what() is above. Catch it, or fix what threw it (an .at() out of "
                 "range, a stoi of a non-number).]" },
    },
    {
        .name = "abort-assert",
        .group = "abort",
        .out = "Assertion [`'](.*)' failed",
        .exit = HX_CODE,
        .code = 134,
        .say = { "[The assert({o1}) was false, so the program aborted itself (SIGABRT, exit code "
                 "134): the line is named above. Fix the code so that it holds, or the assert if "
                 "it "
                 "is wrong.]" },
    },
    {
        .name = "abort-heap",
        .group = "abort",
        .out = "double free|free\\(\\): |malloc\\(\\): |realloc\\(\\): |corrupted (size|double"
               "|top|unsorted)|munmap_chunk|stack smashing detected|buffer overflow detected",
        .exit = HX_CODE,
        .code = 134,
        .say = { "[The C library found the program's memory corrupted (a double free, a free of "
                 "something malloc did not return, or a write past the end of an array) and "
                 "aborted it (SIGABRT, exit code 134). Build with -g -fsanitize=address and run "
                 "it again: the report names the line.]" },
    },
    {
        .name = "abort",
        .group = "abort",
        .exit = HX_CODE,
        .code = 134,
        .say = { "[Aborted (SIGABRT, exit code 134): the program stopped itself with abort(), the "
                 "way a failed assert, an uncaught C++ exception or corrupted memory end. For C or "
                 "C++, build with -g -fsanitize=address and run again to see where.]" },
    },
    SIGNAL("sigbus", 135,
           "[Bus error (SIGBUS, exit code 135): the program touched memory with nothing behind it: "
           "a memory-mapped file that is shorter than what it read (or was truncated), a full "
           "/dev/shm (small in this sandbox), or a misaligned access. Check the file's size and "
           "what the program maps.]"),
    SIGNAL("sigpipe", 141,
           "[SIGPIPE (exit code 141): the program wrote into a pipe whose reader had already "
           "stopped (head, grep -q and the like stop reading early). After head that is expected, "
           "and the output above is what was asked for; otherwise the reader ended first.]"),
    {
        .name = "sigterm", .group = "sigterm", /* after pkill-self-term (habits.c) */
        .exit = HX_CODE, .code = 143,
        .say = { "[Terminated (SIGTERM, exit code 143): something asked the program to stop (kill "
                 "PID sends SIGTERM, and so do timeout and pkill), so it did not finish. Run it "
                 "again without whatever stopped it.]" },
    },
    SIGNAL("sigint", 130,
           "[Interrupted (SIGINT, exit code 130): the program got the Ctrl-C signal (kill -INT "
           "PID, or a program that raised it), so it did not finish.]"),
    SIGNAL("sighup", 129,
           "[Hung up (SIGHUP, exit code 129): the program was told its terminal went away (kill "
           "-HUP), so it did not finish. To keep a program running after a call, start it in the "
           "background: nohup CMD > app.log 2>&1 &]"),
    SIGNAL("sigquit", 131,
           "[Quit (SIGQUIT, exit code 131): the program was stopped with kill -QUIT, so it did "
           "not finish.]"),
    SIGNAL("sigill", 132,
           "[Illegal instruction (SIGILL, exit code 132): the CPU met an instruction it cannot "
           "run: code built for another CPU (-march=native elsewhere), or a C/C++ program that "
           "reached undefined behaviour (a function with no return, __builtin_trap). Build with "
           "-g -fsanitize=undefined and run again.]"),
    SIGNAL("sigtrap", 133,
           "[Trace trap (SIGTRAP, exit code 133): the program hit a breakpoint instruction (a "
           "debug trap, or a runtime check that stops that way) with no debugger attached.]"),
    SIGNAL("sigusr", 138,
           "[Killed by SIGUSR1 (exit code 138): something sent the program a user signal (kill "
           "-USR1) that it does not handle, which ends it.]"),
    SIGNAL("sigalrm", 142,
           "[Alarm clock (SIGALRM, exit code 142): a timer the program (or alarm()) set went off "
           "and it had no handler, so it ended there.]"),
    SIGNAL("sigxcpu", 152,
           "[CPU time limit exceeded (SIGXCPU, exit code 152): the program used more CPU time "
           "than ulimit -t allows. Make it faster, or raise the limit for it.]"),
    SIGNAL("sigxfsz", 153,
           "[File size limit exceeded (SIGXFSZ, exit code 153): the program wrote a file larger "
           "than ulimit -f allows.]"),
    SIGNAL("sigsys", 159,
           "[Bad system call (SIGSYS, exit code 159): the program made a system call this "
           "sandbox does not allow. Use another way to do that.]"),

    /* -- output that is not there -- */
    {
        .name = "no-output-program",
        .alone = true,
        .cmd = PROGRAM LAST_TAIL,
        .not_cmd = OUT_ELSEWHERE "|" SILENT_TOOLS,
        .not_out = "[^[:space:]]",
        .exit = HX_ZERO,
        .say = { "[No output: the program ran and ended (exit code 0) without printing anything. "
                 "If it should print a result, no print was reached: check that the code that "
                 "prints is called (a function or class that nothing calls does nothing) and "
                 "that it writes to stdout.]" },
    },
    {
        .name = "no-output-failed",
        .alone = true,
        .cmd = PROGRAM LAST_TAIL,
        .not_cmd = OUT_ELSEWHERE,
        .not_out = "[^[:space:]]",
        .exit = HX_NONZERO,
        .say = { "[No output, and exit code {exit}: the program ended with a failure status "
                 "without printing why (an exit({exit}) or a return from main on some path). Make "
                 "it print the reason before it exits.]" },
    },
    {
        .name = "no-output-file",
        .alone = true,
        .cmd = AT_CMD "(cat|tac|head|tail|more|less)[[:space:]]+(-[^[:space:]]+[[:space:]]+)*"
                      "([^-[:space:];&|<>][^[:space:];&|<>]*)[[:space:]]*\\'",
        .not_out = "[^[:space:]]",
        .exit = HX_ZERO,
        .probe = CD_GUARD(3) "f={c4}; " PROBE_EMPTY_FILE,
        .say = { "[No output: {c4} is empty (0 bytes). Whatever should have written it wrote "
                 "nothing (or has not run yet).]" },
    },
    {
        .name = "find-nothing",
        .alone = true,
        .cmd = AT_CMD "find\\>" LAST_TAIL,
        .not_cmd = OUT_ELSEWHERE "|-delete|-exec",
        .not_out = "[^[:space:]]",
        .exit = HX_ZERO,
        .say = { "[No output: find found no file that matches (that is its answer, not an error). "
                 "Look wider: another folder (find / -name 'NAME' 2>/dev/null), or -iname for any "
                 "case.]" },
    },
};

const size_t hints_codes_n = sizeof hints_codes / sizeof hints_codes[0];
