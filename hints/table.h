/* table.h -- what an entry of the hint tables is, and the building
 * blocks entries share (private to the hints/ sources).
 *
 * The tables are data: hints.c holds the first table and the engine that
 * reads every table; habits.c holds the entries for habits a small
 * model brings from a real machine (service managers, terminals, a shell
 * that lasts, clients that fail without a word, servers).  The engine reads
 * habits.c first, so such an entry speaks before a general entry of
 * the same group (say, "systemctl is not installed") could say a wrong
 * thing.
 *
 * An entry of the table:
 *
 *   name      what the situation is called (tests refer to it)
 *   on        HK_RUN: matched against a run's command and output;
 *             HK_WRITE: against a write_file's path and content;
 *             HK_TIMEOUT: against a run that its timeout killed
 *   group     entries sharing a group are alternatives: the first of them
 *             that says something wins, the rest are skipped
 *   cmd       ERE the command (the path) must match; NULL = any
 *   not_cmd   ERE it must not match
 *   out       ERE the output (the content) must match; NULL = any
 *   not_out   ERE it must not match ("[^[:space:]]" = the output is empty)
 *   exit      HX_ANY, HX_ZERO, HX_NONZERO or HX_CODE (with code)
 *   probe     bash run in the sandbox when everything above matched (its
 *             text: hints/probes/NAME.sh, see "probes" below); its
 *             exit code picks the text: 0 -> say[0], 1 -> say[1],
 *             2 -> say[2]; any other code, or a NULL text, says nothing
 *   say       the line(s), "[...]"; without a probe, say[0]
 *   alone     speaks only when no entry before it said anything about
 *             this result (a last word: "the program printed nothing")
 *
 * Regexes are POSIX extended as glibc implements them (with \< \> \`),
 * compiled once, with REG_NEWLINE: ^ and $ match at every line of the
 * output.  Placeholders, replaced in probes (as one single-quoted shell
 * word) and in texts (as is):
 *
 *   {cmd}            the command (for a write: the path)
 *   {out}            the last 4 KiB of the output (probes only)
 *   {c1}..{c9}       groups of the cmd regex;  {o1}..{o9} of the out regex
 *   {exit}           the exit code
 *   {probe}          the probe's output, trailing blank space trimmed
 *   {p1}..{p9}       its lines
 *   {memory} {cpus} {pids} {disk_cap} {limits}
 *                    the sandbox's limits as phrases: "256 MiB of memory
 *                    plus 768 MiB of swap", "1 CPU", "at most 512
 *                    processes", "2 GiB of disk", and all four together.
 *                    What its cgroup says when the limits callback can
 *                    tell (swap only as far as the host has any), else the
 *                    sandbox template's limits from the configuration
 *
 * Rules every text keeps: it is short, concrete and true (a probe checks
 * what the output alone cannot tell); it says what to do next; it never
 * asks to work out by hand what a program computed, or to make up tests;
 * error hints never fire on a success.  The exceptions are deliberate and
 * state facts: chmod/chown/chgrp show the mode after, free/nproc/df show
 * the real limits, ShellCheck reports what it finds, and running an empty
 * file says it was empty.
 */
#ifndef TALKBACK_HINTS_TABLE_H
#define TALKBACK_HINTS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

/* What an entry looks at: a run that ended by itself, a write_file, or a
 * run its timeout killed (its output so far; probes run after the kill). */
typedef enum { HK_RUN = 0, HK_WRITE, HK_TIMEOUT } hint_on_t;
typedef enum { HX_ANY = 0, HX_ZERO, HX_NONZERO, HX_CODE } hint_exit_t;

typedef struct {
    const char *name;
    hint_on_t on;
    const char *group;
    const char *cmd, *not_cmd;
    const char *out, *not_out;
    hint_exit_t exit;
    int code;
    const char *probe;
    const char *say[3];
    bool alone;
} hint_t;

/* The tables, in the order the engine reads them:
 *
 *   tasks.c   everyday work whose tool's own words mislead (git, data
 *             files, files from other systems, text bash read that is
 *             not a command): first, so "nothing was cloned" speaks
 *             before a general word on DNS, and a CR or a line of Python
 *             is never "not installed"
 *   habits.c  what a model believes about a real machine
 *   hints.c   the first table
 *   codes.c   exit codes that are not errors, signals, and output that
 *             is not there: last, as a general word after the specific
 */
extern const hint_t hints_tasks[];
extern const size_t hints_tasks_n;
extern const hint_t hints_habits[];
extern const size_t hints_habits_n;
extern const hint_t hints_codes[];
extern const size_t hints_codes_n;
/* Room the engine keeps for all of them (checked by hints_check). */
#define HINTS_MAX 256

/* ---- building blocks of the table ------------------------------------------- */

/* Where a command word starts: the line's start, after ; & | ( ` or $(, or
 * after a word that runs the next one.  One regex group. */
#define AT_CMD                                                                                     \
    "(^|[;&|(`]|\\$\\(|\\<sudo|\\<then|\\<do|\\<else|\\<time|\\<nohup|\\<exec|\\<xargs|\\<env"     \
    "|\\<timeout[[:space:]]+[0-9.]+[smhd]?)[[:space:]]*"

/* ---- probes ----------------------------------------------------------------
 *
 * The probes' shell text lives in hints/probes/NAME.sh, one file per
 * probe, checked by ShellCheck (tests/run); the build embeds each file as
 * the string PROBE_NAME (cmake/embed-sh.cmake).  An entry's probe is
 * such a text, or a few joined at compile time: a head that sets the
 * variables the body reads (cd-guard.sh, "f={c4}; "), then the body.
 * Placeholders work in them as anywhere in a probe. */
#include "hints/probes_embedded.h"

/* Relative paths in a probe are resolved in /work, where commands start; a
 * command that changes folder first leaves them unknown.  Probes starting
 * with CD_GUARD(n) exit with n when the command has a cd or pushd; the
 * command is in c after it. */
#define CD_GUARD(n) "cd_exit=" #n "; " PROBE_CD_GUARD

/* ---- the command's last part --------------------------------------------------
 *
 * What decides a result's exit code is the last command of the line (no
 * pipefail here).  LAST_CMD matches where that command may start, like
 * AT_CMD; LAST_TAIL, after its name, matches the rest of the line when
 * no ; & | or newline follows (2>&1 and &> are no such break, nor any of
 * them inside quotes). */
#define LAST_TAIL "('[^']*'|\"[^\"]*\"|[0-9]?>&[0-9]?|&>|[^;&|\n'\"])*\\'"

/* The command sends its standard output to a file, or runs in the
 * background: what it printed is not in the result by its own choice. */
#define OUT_ELSEWHERE "(^|[^0-9&>])>>?[[:space:]]*[^&[:space:]]|&>|&[[:space:]]*\\'"

/* The first source file of the command that is missing (when missing is
 * "1") or empty: missing-file.sh. */
#define MISSING_FILE_PROBE(missing) CD_GUARD(3) "missing=" missing "; " PROBE_MISSING_FILE

/* Every TCP listener, or "nothing": listeners.sh. */
#define LISTENERS PROBE_LISTENERS "listeners\n"

/* Which local port a refused connection went to: refused-port.sh. */
#define REFUSED_PROBE PROBE_LISTENERS PROBE_REFUSED_PORT

/* ShellCheck's report on one shell script: script-report.sh. */
#define SHELLCHECK_PROBE(file) "f=" file "; " PROBE_SCRIPT_REPORT

/* Which Debian package (or other install line) gives a missing command:
 * command-package.sh. */
#define COMMAND_PROBE(var) "c=" var "; cmd={cmd}; " PROBE_COMMAND_PACKAGE

#define NOT_INSTALLED_SAY(o)                                                                       \
    {                                                                                              \
        [0] = "[" o " is not installed in this sandbox. Install it: {p1}]",                        \
        [1] = "[" o " is not installed in this sandbox. Find its package with apt-get update && "  \
              "apt-cache search " o ", then apt-get install -y PACKAGE.]",                         \
        [2] = "[{p1}.]",                                                                           \
    }

/* Whether the kernel killed for lack of memory: oom-killed.sh. */
#define OOM_PROBE PROBE_OOM_KILLED

#define OOM_SAY                                                                                    \
    {                                                                                              \
        [0] = "[Killed for lack of memory: this sandbox has {memory}, and the program needed "     \
              "more. Make it use less memory; running it again as is ends the same way.]",         \
        [1] = "[Killed with SIGKILL (exit 137), and not for lack of memory (this sandbox counts "  \
              "no out-of-memory kill): something sent it kill -9 (a kill or pkill, or timeout "    \
              "-s KILL). It did not finish; run it again without whatever killed it.]",            \
        [2] = "[Killed (SIGKILL), most likely for lack of memory: this sandbox has {memory}. "     \
              "Make the program use less memory.]",                                                \
    }

#define REFUSED_SAY_NOT_LISTENING                                                                  \
    "[Nothing listens on port {p1} in this sandbox, so the connection was refused: the server is " \
    "not running (or listens on another port). Listening now: {p2}. Start the server first, in "   \
    "the background (CMD > server.log 2>&1 &), then check with ss -ltnp.]"
#define REFUSED_SAY_NOT_READY                                                                      \
    "[Port {p1} has a listener now ({p2}), but it was not ready when this connected. Wait for it " \
    "(sleep 1, or retry a few times) before connecting.]"
#define REFUSED_SAY                                                                                \
    {                                                                                              \
        [0] = REFUSED_SAY_NOT_LISTENING,                                                           \
        [1] = "[Connection refused: nothing listened at the address and port this connected to. "  \
              "Listening in this sandbox now: {p1}. If the server should run here, start it "      \
              "first, in the background (CMD > server.log 2>&1 &), then check with ss -ltnp.]",    \
        [2] = REFUSED_SAY_NOT_READY,                                                               \
    }

#define MISSING_SAY                                                                                \
    "[{probe}, so there was nothing to compile or run. Write it first (write_file), "              \
    "then run this command again.]"

#define NO_TTY_SAY                                                                                 \
    "[Nobody types here: there is no terminal and stdin is closed, so this command "               \
    "could not ask for input and did not do what it asks for. Pass the answers in "                \
    "the command instead (a --batch, --yes or --password style option, or pipe them "              \
    "in: printf 'answer\\n' | CMD).]"

/* The interpreter of a script that is not executable: script-interp.sh. */
#define SCRIPT_INTERP_PROBE(var) "f=" var "; " PROBE_SCRIPT_INTERP

#endif
