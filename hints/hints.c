/* hints.c -- the first hint table and the one loop that applies every
 * table (see hints.h; what an entry is: hints_table.h).
 */
#include "hints/hints.h"

#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "hints/table.h"

/* ---- the table ----------------------------------------------------------------- */

static const hint_t hints_table[] = {
    /* -- files that are not there -- */
    {
        .name = "missing-file", .group = "file",
        .cmd = AT_CMD "(python[0-9.]*|node|nodejs|bash|sh|dash|ruby|perl|php|lua[0-9.]*|java|javac|kotlinc"
               "|kotlin|gcc|g\\+\\+|cc|c\\+\\+|clang|clang\\+\\+|mcs|mono|ghc|runghc|rustc|go|tsc|ts-node"
               "|Rscript|scala|scalac|swift|gfortran|shellcheck|\\.{1,2}/)",
        .out = "No such file or directory|[Nn]ot found|could not be found|can't open file|[Cc]annot open"
               "|can't find file|couldn't read|Cannot find module '[./]|no input files"
               "|undefined reference to .main|does not exist|expected 'package', found 'EOF'",
        .exit = HX_NONZERO,
        .probe = MISSING_FILE_PROBE("1"),
        .say = { MISSING_SAY },
    },
    {
        .name = "empty-file-ran", .group = "file",
        .cmd = AT_CMD "(python3?|node|bash|sh|ruby|perl|php|lua[0-9.]*|javac|kotlinc|gcc|g\\+\\+|cc|clang"
               "|mcs|runghc|rustc|go[[:space:]]+(run|build))[[:space:]]",
        .not_out = "[^[:space:]]",
        .exit = HX_ZERO,
        .probe = MISSING_FILE_PROBE(""),
        .say = { MISSING_SAY },
    },
    {
        .name = "missing-program", .group = "file",
        .out = "^bash: (line [0-9]+: )?(\\.{0,2}/[^:]+): No such file or directory$",
        .exit = HX_CODE, .code = 127,
        .probe = CD_GUARD(3) PROBE_MISSING_PROGRAM,
        .say = {
            [0] = "[{o2} does not exist: nothing was built or written there. What is there now: {p1}]",
            [1] = "[{o2} does not exist, nor does its folder. Build or write it first.]",
        },
    },

    /* -- builds that never reached the code -- */
    {
        .name = "go-no-module",
        .cmd = "\\<go[[:space:]]",
        .out = "go\\.mod file not found|cannot find main module|does not contain main module",
        .exit = HX_NONZERO,
        .probe = CD_GUARD(1) PROBE_GO_NO_MODULE,
        .say = {
            [0] = "[There is no go.mod here, so go compiled nothing. Build the file itself: {p1} "
                  "(or go run FILE.go), or make a module first: go mod init NAME.]",
            [1] = "[There is no go.mod here, so go compiled nothing. Build the file itself: "
                  "go build -o NAME FILE.go (or go run FILE.go), or make a module first: go mod init NAME.]",
        },
    },
    {
        .name = "cargo-no-manifest",
        .cmd = "\\<cargo[[:space:]]",
        .out = "could not find `Cargo\\.toml`",
        .exit = HX_NONZERO,
        .say = { "[There is no Cargo.toml here, so cargo compiled nothing. Build the file itself: "
                 "rustc -O -o NAME FILE.rs, or make a project first: cargo new NAME.]" },
    },
    {
        .name = "java-public-class",
        .out = "class ([A-Za-z0-9_$]+) is public, should be declared in a file named ([A-Za-z0-9_$]+\\.java)",
        .exit = HX_NONZERO,
        .say = { "[javac needs the public class {o1} in a file named {o2}: write the code to {o2} "
                 "(or rename the class), then compile {o2}.]" },
    },
    {
        .name = "java-no-main-class",
        .cmd = "\\<java[[:space:]]",
        .out = "Could not find or load main class ([A-Za-z0-9_$]+)(\\.class|\\.java)?$",
        .exit = HX_NONZERO,
        .say = { "[java runs a compiled class by its name: compile first (javac {o1}.java), then run "
                 "java {o1} (no .class) in the folder that holds {o1}.class; or run the source "
                 "directly: java {o1}.java.]" },
    },
    {
        .name = "mono-exe",
        .cmd = AT_CMD "([^[:space:];&|<>]*\\.exe)\\>",
        .out = "cannot execute binary file|Exec format error",
        .exit = HX_NONZERO,
        .probe = PROBE_MONO_EXE,
        .say = {
            [0] = "[{c2} is a .NET program, which Linux cannot run directly. Run it with Mono: mono {c2}]",
            [1] = "[{c2} is a .NET program, which Linux cannot run directly. Install Mono "
                  "(apt-get update && apt-get install -y mono-runtime), then run mono {c2}]",
        },
    },
    {
        .name = "crlf-or-interpreter",
        .out = "^[^[:space:]]+: (line [0-9]+: )?([^:[:space:]]+): ([^:]*: )?(cannot execute: required file "
               "not found|bad interpreter)",
        .exit = HX_NONZERO,
        .probe = CD_GUARD(3) PROBE_CRLF_OR_INTERPRETER,
        .say = {
            [0] = "[{o2} has Windows line endings (CR LF), so its #! line names a program that does "
                  "not exist. Remove them: sed -i 's/\\r$//' {o2}]",
            [1] = "[{o2} starts with #!{p1}, which is not installed here: fix the #! line, or run it "
                  "with an interpreter that is.]",
        },
    },
    {
        .name = "not-executable",
        .out = "^[^[:space:]]+: (line [0-9]+: )?([^:[:space:]]+): Permission denied$",
        .exit = HX_CODE, .code = 126,
        .probe = CD_GUARD(3) SCRIPT_INTERP_PROBE("{o2}"),
        .say = {
            [0] = "[{o2} is not executable. Make it so with chmod +x {o2}, or run it with its "
                  "interpreter: {p1}]",
            [1] = "[{o2} is not executable: chmod +x {o2}, then run it again.]",
        },
    },

    /* -- packages and modules -- */
    {
        .name = "apt-no-lists", .group = "apt",
        .cmd = "\\<apt(-get)?[[:space:]]",
        .out = "Unable to locate package ([^[:space:]]+)",
        .exit = HX_NONZERO,
        .probe = PROBE_APT_NO_LISTS,
        .say = {
            [1] = "[apt has no package lists yet (a new sandbox starts without them), so it knows no "
                  "package at all: run apt-get update first, then install.]",
        },
    },
    {
        .name = "apt-unknown-package", .group = "apt",
        .cmd = "\\<apt(-get)?[[:space:]]",
        .out = "Unable to locate package ([^[:space:]]+)|Package '([^']+)' has no installation candidate",
        .exit = HX_NONZERO,
        .probe = PROBE_APT_UNKNOWN_PACKAGE,
        .say = {
            [0] = "[Debian 13 has no package {o1}{o2}. apt-cache search finds these instead: {p1}. "
                  "Install one of those.]",
            [1] = "[Debian 13 has no package {o1}{o2}, and apt-cache search finds nothing like it. "
                  "Look for the right name: apt-cache search WORD.]",
        },
    },
    {
        .name = "python-module",
        .out = "ModuleNotFoundError: No module named '([^'.]+)",
        .exit = HX_NONZERO,
        .probe = PROBE_PYTHON_MODULE,
        .say = {
            [0] = "[No Python module named {o1} is installed. If it is a library, install it: "
                  "pip install {p1}; if it is a file of yours, write {o1}.py first.]",
            [2] = "[{o1} comes from Debian, not pip: {p1}]",
        },
    },
    {
        .name = "pip-externally-managed",
        .out = "externally-managed-environment",
        .exit = HX_NONZERO,
        .say = { "[pip refused because Debian manages this Python. This sandbox is yours: "
                 "add --break-system-packages to the pip install.]" },
    },
    {
        .name = "node-module", .group = "node",
        .out = "Cannot find (module|package) '((@[^/']+/)?[^/'.][^/']*)",
        .exit = HX_NONZERO,
        .say = { "[The Node module {o2} is not installed: npm install {o2} (in the folder of the "
                 "script), then run it again.]" },
    },
    {
        .name = "npm-no-package-json",
        .cmd = "\\<npm[[:space:]]",
        .out = "Could not read package\\.json|no such file or directory, open '[^']*package\\.json'",
        .exit = HX_NONZERO,
        .say = { "[There is no package.json here, so npm has nothing to run. Run the file with node "
                 "(node FILE.js), or make a package first: npm init -y.]" },
    },
    {
        .name = "command-not-found", .group = "cnf",
        .out = "^[^[:space:]]+: (line [0-9]+: )?([^:[:space:]]+): command not found$",
        .exit = HX_NONZERO,
        .probe = COMMAND_PROBE("{o2}"),
        .say = NOT_INSTALLED_SAY("{o2}"),
    },
    {
        /* The image's sudo runs the command with env, which says this. */
        .name = "command-not-found-env", .group = "cnf",
        .out = "^env: (\xe2\x80\x98|')([^'/[:space:]]+)(\xe2\x80\x99|'): No such file or directory$",
        .exit = HX_CODE, .code = 127,
        .probe = COMMAND_PROBE("{o2}"),
        .say = NOT_INSTALLED_SAY("{o2}"),
    },

    /* -- servers and ports -- */
    {
        .name = "connection-refused", .group = "refused",
        .out = "Connection refused|ECONNREFUSED|Could not connect to server|Couldn't connect to server",
        .exit = HX_NONZERO,
        .probe = REFUSED_PROBE,
        .say = REFUSED_SAY,
    },
    {
        /* Python's create_connection("localhost") tries ::1 first and
         * reports that failure: no IPv6 in the sandbox. */
        .name = "connection-refused-ipv6", .group = "refused",
        .cmd = "localhost",
        .out = "Cannot assign requested address|EADDRNOTAVAIL",
        .exit = HX_NONZERO,
        .probe = REFUSED_PROBE,
        .say = { [0] = REFUSED_SAY_NOT_LISTENING, [2] = REFUSED_SAY_NOT_READY },
    },
    {
        .name = "connection-refused-nc", .group = "refused",
        .cmd = "\\<(nc|ncat|netcat)\\>[^;&|]*[[:space:]](localhost|127\\.[0-9.]+|::1)[[:space:]]+[0-9]+",
        .not_out = "[^[:space:]]",
        .exit = HX_NONZERO,
        .probe = REFUSED_PROBE,
        .say = REFUSED_SAY,
    },
    {
        .name = "address-in-use",
        .out = "Address already in use|EADDRINUSE",
        .exit = HX_NONZERO,
        .probe = LISTENERS,
        .say = { "[That port is taken already. Listening now: {p1}. Stop the old server first "
                 "(kill PID) or use another port.]" },
    },

    /* -- what really happened after a success -- */
    {
        .name = "ownership-after",
        .cmd = AT_CMD "(chmod|chown|chgrp)(([[:space:]]+-[^[:space:];&|<>]*)*)[[:space:]]+"
               "([^-[:space:];&|<>][^[:space:];&|<>]*)(([[:space:]]+[^[:space:];&|<>]+)+)",
        .probe = PROBE_OWNERSHIP_AFTER,
        .say = { "[Now (mode owner:group path): {p1}]" },
    },
    {
        .name = "host-figures",
        .cmd = AT_CMD "(free|nproc|df|lscpu|top|vmstat)\\>|/proc/(meminfo|cpuinfo)|_NPROCESSORS_ONLN",
        .exit = HX_ZERO,
        .say = { "[Those figures are the host's, not this sandbox's. This sandbox has {limits}.]" },
    },

    /* -- nobody at a terminal -- */
    {
        .name = "passwd-no-tty", .group = "tty",
        .cmd = AT_CMD "passwd\\>",
        .out = "Authentication token manipulation error|password unchanged|Password change has been aborted",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here (no terminal, stdin closed), so passwd could not read a password: "
                 "the password was NOT changed. Set it in the command: echo 'USER:PASSWORD' | chpasswd]" },
    },
    {
        .name = "gpg-no-tty", .group = "tty",
        .cmd = "\\<gpg2?\\>",
        .out = "cannot open '/dev/tty'|Inappropriate ioctl for device|problem with the agent|Operation cancelled",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here (no terminal), so gpg could not ask for a passphrase and did nothing. "
                 "Pass it in the command: gpg --batch --pinentry-mode loopback --passphrase 'PASS' ... "
                 "(--passphrase '' for none).]" },
    },
    {
        .name = "ssh-keygen-no-tty", .group = "tty",
        .cmd = "\\<ssh-keygen\\>",
        .out = "Enter file in which to save|Enter passphrase",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so ssh-keygen could not ask where to save the key or for a "
                 "passphrase, and made no key. Give both in the command: "
                 "ssh-keygen -t ed25519 -N '' -f ~/.ssh/id_ed25519]" },
    },
    {
        .name = "mysql-secure-no-tty", .group = "tty",
        .cmd = "\\<(mysql|mariadb)_secure_installation\\>",
        .not_out = "command not found",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so mysql_secure_installation could not ask its questions. "
                 "Run its SQL directly instead: mysql -e \"ALTER USER 'root'@'localhost' IDENTIFIED BY "
                 "'PASS'; DELETE FROM mysql.user WHERE User=''; DROP DATABASE IF EXISTS test; "
                 "FLUSH PRIVILEGES;\"]" },
    },
    {
        .name = "no-tty", .group = "tty",
        .out = "/dev/tty|[Nn]ot a tty|not a terminal|the input device is not a TTY|no tty present"
               "|[Ii]nappropriate ioctl for device",
        .exit = HX_NONZERO,
        .say = { NO_TTY_SAY },
    },
    {
        .name = "stdin-eof",
        .out = "EOFError: EOF when reading a line|NoSuchElementException.*\n[[:space:]]+at java\\.base/java\\.util\\.Scanner",
        .exit = HX_NONZERO,
        .say = { "[The program read input, but stdin is closed here and nobody types. Give it its "
                 "input in the command: printf 'LINE1\\nLINE2\\n' | CMD, or CMD < input.txt.]" },
    },

    /* -- killed -- */
    {
        .name = "killed-137", .group = "oom",
        .exit = HX_CODE, .code = 137,
        .probe = OOM_PROBE,
        .say = OOM_SAY,
    },
    {
        .name = "killed-line", .group = "oom",
        .out = "^[^[:space:]]+: (line [0-9]+: )?[[:space:]]*[0-9]+ Killed[[:space:]]",
        .probe = OOM_PROBE,
        .say = OOM_SAY,
    },
    {
        .name = "segfault",
        .exit = HX_CODE, .code = 139,
        .say = { "[Segmentation fault: the program read or wrote memory it does not own (an index "
                 "out of range, a null pointer, or recursion too deep). For C or C++, build with "
                 "-g -fsanitize=address and run again to see the line.]" },
    },
    {
        .name = "sigfpe",
        .exit = HX_CODE, .code = 136,
        .say = { "[Floating point exception: the program divided an integer by zero (or took a "
                 "remainder by zero).]" },
    },

    /* -- shell scripts -- */
    {
        .name = "shellcheck-run", .group = "shellcheck",
        .cmd = AT_CMD "(bash|sh|dash)[[:space:]]+(-[abd-z]+[[:space:]]+)*([^-[:space:];&|<>][^[:space:];&|<>]*)",
        .probe = CD_GUARD(3) SHELLCHECK_PROBE("{c4}"),
        .say = { "[{probe}]" },
    },
    {
        .name = "shellcheck-run-direct", .group = "shellcheck",
        .cmd = AT_CMD "((\\.{1,2}|~)?/[^[:space:];&|<>]+\\.(sh|bash))\\>",
        .probe = CD_GUARD(3) SHELLCHECK_PROBE("{c2}"),
        .say = { "[{probe}]" },
    },
    {
        .name = "shellcheck-write", .on = HK_WRITE, .group = "shellcheck",
        .cmd = "\\.(sh|bash)$",
        .probe = SHELLCHECK_PROBE("{cmd}"),
        .say = { "[{probe}]" },
    },
    {
        .name = "shellcheck-write-shebang", .on = HK_WRITE, .group = "shellcheck",
        .not_cmd = "\\.(sh|bash)$",
        .out = "\\`#![[:space:]]*(/usr)?/bin/(env[[:space:]]+)?(ba|da|k)?sh([[:space:]]|$)",
        .probe = SHELLCHECK_PROBE("{cmd}"),
        .say = { "[{probe}]" },
    },
};

#define HINTS_MAIN_N (sizeof hints_table / sizeof hints_table[0])

/* Every table in reading order (table.h says why this order): a table's
 * entries speak before those of the tables after it. */
static const struct {
    const hint_t *t;
    const size_t *n;
} tables[] = {
    { hints_tasks, &hints_tasks_n },
    { hints_habits, &hints_habits_n },
    { hints_table, NULL },
    { hints_codes, &hints_codes_n },
};

static size_t table_len(size_t k)
{
    return tables[k].n ? *tables[k].n : HINTS_MAIN_N;
}

/* Entries of all tables, at most HINTS_MAX (checked by hints_check). */
static size_t hints_count(void)
{
    size_t n = 0;
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
        n += table_len(k);
    return n < HINTS_MAX ? n : HINTS_MAX;
}
#define HINTS_N   hints_count()
#define HINTS_CAP HINTS_MAX

/* Entry i of all tables in reading order. */
static const hint_t *hint_at(size_t i)
{
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        if (i < table_len(k))
            return &tables[k].t[i];
        i -= table_len(k);
    }
    return NULL;
}
#define NGROUPS         10 /* regex groups kept per match: \0 and {c1}..{c9} */
#define PROBE_OUT_TAIL  4096
#define PLACEHOLDER_MAX 300

/* ---- compiling ------------------------------------------------------------------- */

typedef struct {
    regex_t cmd, not_cmd, out, not_out;
    bool has_cmd, has_not_cmd, has_out, has_not_out;
    bool ok;
} compiled_t;

static compiled_t compiled[HINTS_CAP];
static pthread_mutex_t compile_mu = PTHREAD_MUTEX_INITIALIZER;
static bool compiled_done;
static char compile_err[512];

static bool compile_one(regex_t *re, bool *has, const char *pat, const char *name, const char *what)
{
    *has = false;
    if (!pat)
        return true;
    int rc = regcomp(re, pat, REG_EXTENDED | REG_NEWLINE);
    if (rc != 0) {
        char msg[200];
        regerror(rc, re, msg, sizeof msg);
        if (!compile_err[0])
            snprintf(compile_err, sizeof compile_err, "hint %s: bad %s regex: %s", name, what, msg);
        return false;
    }
    *has = true;
    return true;
}

/* Compile the table on first use (again after hints_shutdown).  The lock
 * costs nothing next to a docker exec. */
static void ensure_compiled(void)
{
    pthread_mutex_lock(&compile_mu);
    if (!compiled_done) {
        for (size_t i = 0; i < HINTS_N; i++) {
            const hint_t *h = hint_at(i);
            compiled_t *c = &compiled[i];
            c->ok = compile_one(&c->cmd, &c->has_cmd, h->cmd, h->name, "cmd") &
                    compile_one(&c->not_cmd, &c->has_not_cmd, h->not_cmd, h->name, "not_cmd") &
                    compile_one(&c->out, &c->has_out, h->out, h->name, "out") &
                    compile_one(&c->not_out, &c->has_not_out, h->not_out, h->name, "not_out");
            if (!c->ok)
                log_error("%s", compile_err);
        }
        compiled_done = true;
    }
    pthread_mutex_unlock(&compile_mu);
}

void hints_shutdown(void)
{
    pthread_mutex_lock(&compile_mu);
    if (compiled_done) {
        for (size_t i = 0; i < HINTS_N; i++) {
            compiled_t *c = &compiled[i];
            if (c->has_cmd)
                regfree(&c->cmd);
            if (c->has_not_cmd)
                regfree(&c->not_cmd);
            if (c->has_out)
                regfree(&c->out);
            if (c->has_not_out)
                regfree(&c->not_out);
            memset(c, 0, sizeof *c);
        }
        compiled_done = false;
    }
    pthread_mutex_unlock(&compile_mu);
}

const char *hints_entry_name(size_t i)
{
    return i < HINTS_N ? hint_at(i)->name : NULL;
}

const char *hints_entry_say(size_t i, int k)
{
    return i < HINTS_N && k >= 0 && k < 3 ? hint_at(i)->say[k] : NULL;
}

const char *hints_entry_on(size_t i)
{
    if (i >= HINTS_N)
        return NULL;
    const hint_t *h = hint_at(i);
    if (h->on == HK_WRITE)
        return "a write_file";
    if (h->on == HK_TIMEOUT)
        return "a run its timeout killed";
    switch (h->exit) {
    case HX_ZERO: return "a run that exited 0";
    case HX_NONZERO: return "a run that failed";
    case HX_CODE: return "a run with one exit code";
    default: return "a run";
    }
}

/* ---- limits as phrases ------------------------------------------------------------ */

static void fmt_size(int64_t v, char *out, size_t outlen)
{
    const int64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
    struct {
        int64_t unit;
        const char *name;
    } units[] = { { GiB, "GiB" }, { MiB, "MiB" }, { KiB, "KiB" } };
    for (size_t i = 0; i < 3; i++)
        if (v >= units[i].unit) {
            if (v % units[i].unit == 0)
                snprintf(out, outlen, "%" PRId64 " %s", v / units[i].unit, units[i].name);
            else
                snprintf(out, outlen, "%.1f %s", (double)v / (double)units[i].unit, units[i].name);
            return;
        }
    snprintf(out, outlen, "%" PRId64 " bytes", v);
}

/* The sandbox template's limits (cfg, in Docker's terms: memory_swap 0
 * means as much swap as memory) as a sandbox would report them. */
static void limits_configured(const hints_limits_t *cfg, hints_limits_t *l)
{
    memset(l, 0, sizeof *l);
    if (!cfg)
        return;
    *l = *cfg;
    int64_t sw = cfg->memory_swap;
    l->memory_swap = sw < 0 ? -1 : sw == 0 ? 2 * l->memory : sw;
}

static void phrase_memory(textbuf_t *t, const hints_limits_t *l)
{
    int64_t mem = l->memory, sw = l->memory_swap;
    char a[32], b[32];
    if (mem <= 0) {
        textbuf_puts(t, "no memory limit of its own");
        return;
    }
    fmt_size(mem, a, sizeof a);
    if (sw < 0) {
        textbuf_printf(t, "%s of memory plus unlimited swap", a);
    } else if (sw > mem) {
        fmt_size(sw - mem, b, sizeof b);
        textbuf_printf(t, "%s of memory plus %s of swap", a, b);
    } else {
        textbuf_printf(t, "%s of memory and no swap", a);
    }
}

static void phrase_cpus(textbuf_t *t, const hints_limits_t *l)
{
    int64_t n = l->nano_cpus;
    if (n <= 0) {
        textbuf_puts(t, "no CPU limit");
        return;
    }
    double cpus = (double)n / 1e9;
    textbuf_printf(t, "%g CPU%s", cpus, cpus > 1.0 ? "s" : "");
}

static void phrase_pids(textbuf_t *t, const hints_limits_t *l)
{
    int64_t n = l->pids;
    if (n <= 0)
        textbuf_puts(t, "no process limit");
    else
        textbuf_printf(t, "at most %" PRId64 " processes", n);
}

static void phrase_disk(textbuf_t *t, int64_t n)
{
    char a[32];
    if (n <= 0) {
        textbuf_puts(t, "no disk cap");
        return;
    }
    fmt_size(n, a, sizeof a);
    textbuf_printf(t, "%s of disk", a);
}

/* ---- templates -------------------------------------------------------------------- */

typedef struct {
    const char *cmd;
    const regmatch_t *cm; /* NULL when the entry has no cmd regex */
    const char *outp;
    size_t out_len;
    const regmatch_t *om;
    const char *probe_out;     /* NULL before the probe ran */
    const hints_limits_t *lim; /* the sandbox's limits; NULL: the configured ones */
    const hints_limits_t *cfg; /* the configured template (hints.h); may be NULL */
    int exit_code;
} expand_ctx_t;

static void put_quoted(textbuf_t *t, const char *s, size_t n)
{
    textbuf_puts(t, "'");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'')
            textbuf_puts(t, "'\\''");
        else if (s[i] != '\0')
            textbuf_append(t, &s[i], 1);
    }
    textbuf_puts(t, "'");
}

static void put_value(textbuf_t *t, const char *s, size_t n, bool quote)
{
    if (quote) {
        put_quoted(t, s, n);
        return;
    }
    if (n > PLACEHOLDER_MAX)
        n = PLACEHOLDER_MAX;
    textbuf_append(t, s, n);
}

/* Line k (1-based) of s: start and length; false past the end. */
static bool nth_line(const char *s, int k, const char **start, size_t *len)
{
    const char *p = s;
    for (int i = 1; i < k; i++) {
        p = strchr(p, '\n');
        if (!p)
            return false;
        p++;
    }
    if (!*p && k > 1)
        return false;
    const char *e = strchr(p, '\n');
    *start = p;
    *len = e ? (size_t)(e - p) : strlen(p);
    return true;
}

static bool is_known_name(const char *name, size_t n)
{
    static const char *const names[] = { "cmd",  "out",  "probe",    "memory", "cpus",
                                         "pids", "exit", "disk_cap", "limits" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return true;
    return n == 2 && (name[0] == 'c' || name[0] == 'o' || name[0] == 'p') && name[1] >= '1' &&
           name[1] <= '9';
}

/* Expand one placeholder; false when the name is not one. */
static bool expand_name(const expand_ctx_t *x, const char *name, size_t n, bool quote, textbuf_t *t)
{
    if (!is_known_name(name, n))
        return false;
    if (n == 3 && memcmp(name, "cmd", 3) == 0) {
        put_value(t, x->cmd, strlen(x->cmd), quote);
    } else if (n == 4 && memcmp(name, "exit", 4) == 0) {
        textbuf_printf(t, "%d", x->exit_code);
    } else if (n == 3 && memcmp(name, "out", 3) == 0) {
        size_t off = x->out_len > PROBE_OUT_TAIL ? x->out_len - PROBE_OUT_TAIL : 0;
        put_quoted(t, x->outp + off, x->out_len - off);
    } else if (n == 5 && memcmp(name, "probe", 5) == 0) {
        const char *p = x->probe_out ? x->probe_out : "";
        size_t len = strlen(p);
        while (len && (p[len - 1] == '\n' || p[len - 1] == ' ' || p[len - 1] == '\t' ||
                       p[len - 1] == '\r'))
            len--;
        if (quote)
            put_quoted(t, p, len);
        else
            textbuf_append(t, p, len);
    } else if (n == 2 && (name[0] == 'c' || name[0] == 'o')) {
        const regmatch_t *m = name[0] == 'c' ? x->cm : x->om;
        const char *src = name[0] == 'c' ? x->cmd : x->outp;
        int g = name[1] - '0';
        if (m && m[g].rm_so >= 0)
            put_value(t, src + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so), quote);
        else if (quote)
            textbuf_puts(t, "''");
    } else if (n == 2 && name[0] == 'p') {
        const char *s;
        size_t len;
        if (x->probe_out && nth_line(x->probe_out, name[1] - '0', &s, &len)) {
            while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
                len--;
            put_value(t, s, len, quote);
        } else if (quote) {
            textbuf_puts(t, "''");
        }
    } else {
        hints_limits_t cfg;
        if (!x->lim)
            limits_configured(x->cfg, &cfg);
        const hints_limits_t *lim = x->lim ? x->lim : &cfg;
        textbuf_t v;
        textbuf_init(&v);
        if (n == 6 && memcmp(name, "memory", 6) == 0)
            phrase_memory(&v, lim);
        else if (n == 4 && memcmp(name, "cpus", 4) == 0)
            phrase_cpus(&v, lim);
        else if (n == 4 && memcmp(name, "pids", 4) == 0)
            phrase_pids(&v, lim);
        else if (n == 8 && memcmp(name, "disk_cap", 8) == 0)
            phrase_disk(&v, x->cfg ? x->cfg->disk_cap : 0);
        else { /* limits */
            phrase_memory(&v, lim);
            textbuf_puts(&v, ", ");
            phrase_cpus(&v, lim);
            textbuf_puts(&v, ", ");
            phrase_pids(&v, lim);
            textbuf_puts(&v, " and ");
            phrase_disk(&v, x->cfg ? x->cfg->disk_cap : 0);
        }
        if (v.buf)
            put_value(t, v.buf, v.len, quote);
        textbuf_free(&v);
    }
    return true;
}

/* Expand tmpl into t.  Returns false when a text (not quote) names the
 * probe's output ({probe}, {pN}) and that is empty: a line built on a
 * probe that printed nothing would say nothing true. */
static bool expand(const expand_ctx_t *x, const char *tmpl, bool quote, textbuf_t *t)
{
    const char *p = tmpl;
    bool full = true;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open) {
            textbuf_puts(t, p);
            return full;
        }
        textbuf_append(t, p, (size_t)(open - p));
        const char *close = strchr(open + 1, '}');
        size_t before = t->len;
        if (close && expand_name(x, open + 1, (size_t)(close - open - 1), quote, t)) {
            if (!quote && open[1] == 'p' && t->len == before)
                full = false;
            p = close + 1;
        } else {
            textbuf_append(t, open, 1);
            p = open + 1;
        }
    }
    return full;
}

/* ---- checking the table ------------------------------------------------------------ */

static int check_template(const char *name, const char *tmpl, bool is_say, char *err, size_t errlen)
{
    size_t len = strlen(tmpl);
    if (is_say && (len < 2 || tmpl[0] != '[' || tmpl[len - 1] != ']')) {
        snprintf(err, errlen, "hint %s: a text must be one bracketed line \"[...]\"", name);
        return -1;
    }
    if (is_say) {
        /* Placeholders in texts are all {name} with a known name. */
        for (const char *p = strchr(tmpl, '{'); p; p = strchr(p + 1, '{')) {
            const char *close = strchr(p + 1, '}');
            if (!close || !is_known_name(p + 1, (size_t)(close - p - 1)) ||
                (close - p - 1 == 3 && memcmp(p + 1, "out", 3) == 0)) {
                snprintf(err, errlen, "hint %s: unknown placeholder in \"%.40s\"", name, p);
                return -1;
            }
        }
    }
    return 0;
}

int hints_check(char *err, size_t errlen)
{
    ensure_compiled();
    size_t all = 0;
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
        all += table_len(k);
    if (all > HINTS_MAX) {
        snprintf(err, errlen, "the hint tables have %zu entries, over HINTS_MAX (%d)", all,
                 HINTS_MAX);
        return -1;
    }
    for (size_t i = 0; i < HINTS_N; i++) {
        const hint_t *h = hint_at(i);
        if (!compiled[i].ok) {
            snprintf(err, errlen, "%s", compile_err[0] ? compile_err : "a regex did not compile");
            return -1;
        }
        if (!h->name || !*h->name) {
            snprintf(err, errlen, "hint #%zu has no name", i);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(hint_at(j)->name, h->name) == 0) {
                snprintf(err, errlen, "hint name %s is used twice", h->name);
                return -1;
            }
        bool any = false;
        for (int k = 0; k < 3; k++)
            if (h->say[k]) {
                any = true;
                if (check_template(h->name, h->say[k], true, err, errlen))
                    return -1;
                if (!h->probe && k > 0) {
                    snprintf(err, errlen, "hint %s: say[%d] without a probe is never used", h->name,
                             k);
                    return -1;
                }
            }
        if (!any) {
            snprintf(err, errlen, "hint %s says nothing", h->name);
            return -1;
        }
        if (!h->cmd && !h->out && h->exit != HX_CODE) {
            snprintf(err, errlen, "hint %s matches every result", h->name);
            return -1;
        }
    }
    return 0;
}

/* ---- the loop ---------------------------------------------------------------------- */

static bool exit_matches(const hint_t *h, int exit_code)
{
    switch (h->exit) {
    case HX_ANY: return true;
    case HX_ZERO: return exit_code == 0;
    case HX_NONZERO: return exit_code != 0;
    case HX_CODE: return exit_code == h->code;
    }
    return false;
}

static bool group_fired(const char *const *fired, size_t n, const char *group)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fired[i], group) == 0)
            return true;
    return false;
}

/* Whether a text names one of the sandbox's limits. */
static bool says_limits(const char *say)
{
    static const char *const names[] = { "{memory}", "{cpus}", "{pids}", "{limits}" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(say, names[i]))
            return true;
    return false;
}

static void apply(hint_on_t on, const char *command, const char *output, size_t output_len,
                  int exit_code, hints_probe_fn probe, hints_limits_fn limits, void *ctx,
                  const hints_limits_t *cfg, textbuf_t *out)
{
    ensure_compiled();
    /* The sandbox's limits are asked for once, and only by a text that
     * says them. */
    hints_limits_t lim = { 0 };
    bool have_lim = false;
    const char *fired[HINTS_CAP];
    size_t nfired = 0;
    /* Lines added by this call start here: no line is said twice. */
    size_t start = out->len;
    for (size_t i = 0; i < HINTS_N; i++) {
        const hint_t *h = hint_at(i);
        const compiled_t *c = &compiled[i];
        if (h->on != on || !c->ok)
            continue;
        if (h->group && group_fired(fired, nfired, h->group))
            continue;
        if (h->alone && out->len > start)
            continue;
        if (!exit_matches(h, exit_code))
            continue;
        regmatch_t cm[NGROUPS], om[NGROUPS];
        if (c->has_cmd && regexec(&c->cmd, command, NGROUPS, cm, 0) != 0)
            continue;
        if (c->has_not_cmd && regexec(&c->not_cmd, command, 0, NULL, 0) == 0)
            continue;
        if (c->has_out && regexec(&c->out, output, NGROUPS, om, 0) != 0)
            continue;
        if (c->has_not_out && regexec(&c->not_out, output, 0, NULL, 0) == 0)
            continue;
        expand_ctx_t x = {
            .cmd = command,
            .cm = c->has_cmd ? cm : NULL,
            .outp = output,
            .out_len = output_len,
            .om = c->has_out ? om : NULL,
            .cfg = cfg,
            .exit_code = exit_code,
        };
        textbuf_t pout;
        textbuf_init(&pout);
        int rc = 0;
        if (h->probe) {
            if (!probe)
                continue;
            textbuf_t script;
            textbuf_init(&script);
            expand(&x, h->probe, true, &script);
            rc = script.buf && !script.oom ? probe(ctx, script.buf, &pout) : -1;
            textbuf_free(&script);
            x.probe_out = pout.buf ? pout.buf : "";
        }
        const char *say = rc >= 0 && rc <= 2 ? h->say[rc] : NULL;
        if (say && !have_lim && says_limits(say)) {
            if (!limits || limits(ctx, &lim) != 0)
                limits_configured(cfg, &lim);
            have_lim = true;
        }
        x.lim = have_lim ? &lim : NULL;
        if (say) {
            textbuf_t line;
            textbuf_init(&line);
            bool full = expand(&x, say, false, &line);
            textbuf_puts(&line, "\n");
            if (full && line.buf && !line.oom &&
                !(out->len > start &&
                  memmem(out->buf + start, out->len - start, line.buf, line.len))) {
                textbuf_append(out, line.buf, line.len);
                if (h->group)
                    fired[nfired++] = h->group;
            }
            textbuf_free(&line);
        }
        textbuf_free(&pout);
    }
}

void hints_memory_phrase(hints_limits_fn limits, void *ctx, const hints_limits_t *configured,
                         textbuf_t *out)
{
    hints_limits_t lim;
    if (!limits || limits(ctx, &lim) != 0)
        limits_configured(configured, &lim);
    phrase_memory(out, &lim);
}

void hints_for_run(const char *command, const char *output, size_t output_len, int exit_code,
                   bool timed_out, hints_probe_fn probe, hints_limits_fn limits, void *ctx,
                   const hints_limits_t *configured, textbuf_t *out)
{
    if (!command)
        return;
    if (!output) {
        output = "";
        output_len = 0;
    }
    apply(timed_out ? HK_TIMEOUT : HK_RUN, command, output, output_len, exit_code, probe, limits,
          ctx, configured, out);
}

void hints_for_write(const char *abspath, const char *content, size_t len, hints_probe_fn probe,
                     void *ctx, textbuf_t *out)
{
    if (!abspath)
        return;
    /* The regexes read a C string: the first 64 KiB are plenty. */
    size_t n = len > 65536 ? 65536 : len;
    char *copy = malloc(n + 1);
    if (!copy)
        return;
    if (n)
        memcpy(copy, content, n);
    copy[n] = '\0';
    apply(HK_WRITE, abspath, copy, strlen(copy), 0, probe, NULL, ctx, NULL, out);
    free(copy);
}
