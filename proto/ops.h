/* ops.h -- what crosses the queue: every operation, worker kind and key.
 *
 * proto.h says how a message is framed; this file says what the messages
 * mean.  A REQUEST names the worker kind that serves it (proto_msg_t.kind)
 * and an operation (proto_msg_t.name); its arguments are the keys of its
 * args map, and a REPLY's structured fields are the keys of its data map.
 * Every such name is defined here, once, and the C code outside proto/
 * uses the names, never the strings (tests/tools/check-ops fails on a
 * string literal given to proto_map_* or proto_msg_set_kind/_name).
 *
 * Prefixes:  KIND_  a worker kind (HELLO k, REQUEST k)
 *            OP_    an operation (REQUEST n)
 *            ARG_   a key of a request's arguments (a)
 *            DATA_  a key of a reply's data (d)
 *
 * The model's tools (run, write_file, reset, run_code) are operations of
 * the same names: the gateway copies the MCP call's arguments into the
 * request under the names its inputSchema gives them (gateway/tools.c),
 * so those ARG_ names are the MCP argument names too; test_tools checks
 * that every schema property is one of the ARG_ names below.
 *
 * What each operation is allowed and needs -- who serves it, which keys
 * may send it, whether it needs a conversation id, may place a chat, is
 * sent again when its worker dies, names a host -- is its row in
 * optable.h, not here: this file names things and says what they carry.
 *
 * Every reply may carry text (x) and is_error (e); "text" below is what
 * the text says.  Absent optional keys read as the defaults
 * ops_exec_read gives them.
 */
#ifndef TALKBACK_PROTO_OPS_H
#define TALKBACK_PROTO_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"

/* ---- worker kinds ------------------------------------------------------- */

#define KIND_SANDBOX "sandbox" /* talkback-sandbox: one kept container per chat */
#define KIND_JUDGE   "judge"   /* talkback-judge: run_code */
#define KIND_REAPER  "reaper"  /* talkback-reaper: idle stop, disk cap, eviction */
#define KIND_CTL     "ctl"     /* talkbackctl: an operator's client (never a worker) */
#define KIND_HUB     "hub"     /* answered by the hub itself (hub/hosts.c) */

/* ---- kind "sandbox" (sandbox/manager.c) ---------------------------------
 *
 * Every sandbox operation of a chat (OPS_CONV in optable.c) needs a usable
 * conversation id (c) and, when given, a usable user id (u); otherwise the
 * reply is an is_error text and nothing runs (hub/worker.c checks it).
 *
 * run         the model's tool, from the gateway.
 *   args      command (str, required), timeout (int, seconds; default
 *             run_timeout, clamped to 1..run_timeout_max)
 *   text      "$ command\n<output>" and a status line ("[exit code N]"
 *             when not 0, "[timed out ...]", ...), the images the command
 *             drew (named; carried in i), then hints
 *   data      exit_code, timed_out, cancelled, cut, elapsed_ms, and
 *             cpu_ms, max_rss_kb when the agent ran it (see exec)
 *
 * exec        a judge's command line, from the judge.
 *   args      command (str, required), timeout (int, as run),
 *             separate_stderr (bool: stderr apart, in data stderr),
 *             output_limit (int, bytes: stop the command once it printed
 *             that much; 0 = none), stdin (str: fed to the command; no
 *             talkback process sends it today), program (int: set by a
 *             judge on the line that runs the model's program: the hub's
 *             id of the run_code request it belongs to; the hub reads it
 *             and notes that the program started, so that request is never
 *             sent to another judge: hub/retry.h)
 *   text      the output and the status line, without the "$ command"
 *             line, the image lines or hints
 *   data      exit_code (int, the command's), timed_out (bool),
 *             cancelled (bool: the call was cancelled and everything it
 *             started killed), cut (int: bytes of the output's middle left
 *             out), elapsed_ms (int, wall time), cpu_ms and max_rss_kb
 *             (int, when the agent ran it), output_limited (bool:
 *             stopped at output_limit), output (str: the bare output,
 *             stdout and stderr merged unless separate_stderr), stderr
 *             (str: only with separate_stderr), notice (str: the resume
 *             notice, when the sandbox was woken up), memory (str: how
 *             much memory the sandbox has, as read from it, e.g. "256 MiB
 *             of memory and no swap"; only when the exit code is 137),
 *             images (str: the lines naming the images it drew, only when
 *             it drew any; the images themselves are carried in i)
 *   When the command could not be started, or there is no container, the
 *   reply is an is_error text with no exit_code.
 *
 * write_file  the model's tool, from the gateway.
 * put         a judge's file, from the judge.  The same write; write_file
 *             alone clears the retry note and gets the write hints
 *             (ShellCheck's findings on a shell script).
 *   args      path (str, required; relative paths are under /work),
 *             content (str, required, at most write_file_max bytes),
 *             mode (int, default 0644; no talkback process sends it today)
 *   text      "Wrote N bytes to /abs/path." or why not
 *   data      path (str, the absolute path) and bytes (int) when
 *             written; notice (str) when the sandbox was woken up
 *
 * reset       the model's tool, from the gateway.  No args.
 *   text      what was removed (the chat's container and its files)
 *
 * busy        from the reaper, before it stops a sandbox.  No args.
 *   data      inflight (int): calls of this chat running now
 *
 * forget      from the reaper, after it stopped or removed the chat's
 *             sandbox: the manager drops what it keeps of the chat.
 *             No args; empty text, no data.
 *
 * pause       from the reaper, for a sandbox with no call for idle_pause:
 *             the manager pauses it (docker pause) unless a call of the
 *             chat is in flight or its sandbox is not running; the chat's
 *             next call unpauses it (docs/sandbox.md, the tiers).
 *   args      idle (int, s: the idle_pause it was paused after)
 *   data      paused (bool), inflight (int): calls running (not paused)
 */
#define OP_RUN        "run"
#define OP_EXEC       "exec"
#define OP_WRITE_FILE "write_file"
#define OP_PUT        "put"
#define OP_RESET      "reset"
#define OP_BUSY       "busy"
#define OP_FORGET     "forget"
#define OP_PAUSE      "pause"

#define ARG_COMMAND         "command"         /* str */
#define ARG_TIMEOUT         "timeout"         /* int, seconds (also run_code) */
#define ARG_SEPARATE_STDERR "separate_stderr" /* bool */
#define ARG_OUTPUT_LIMIT    "output_limit"    /* int, bytes */
#define ARG_STDIN           "stdin"           /* str */
#define ARG_PATH            "path"            /* str */
#define ARG_CONTENT         "content"         /* str */
#define ARG_MODE            "mode"            /* int */
#define ARG_PROGRAM         "program"         /* int: a run_code request's hub id */
#define ARG_IDLE            "idle"            /* int, seconds (pause) */

#define DATA_EXIT_CODE      "exit_code"      /* int */
#define DATA_TIMED_OUT      "timed_out"      /* bool */
#define DATA_CANCELLED      "cancelled"      /* bool */
#define DATA_CUT            "cut"            /* int, bytes */
#define DATA_ELAPSED_MS     "elapsed_ms"     /* int */
#define DATA_CPU_MS         "cpu_ms"         /* int */
#define DATA_MAX_RSS_KB     "max_rss_kb"     /* int */
#define DATA_OUTPUT_LIMITED "output_limited" /* bool */
#define DATA_OUTPUT         "output"         /* str */
#define DATA_STDERR         "stderr"         /* str */
#define DATA_NOTICE         "notice"         /* str */
#define DATA_MEMORY         "memory"         /* str */
#define DATA_IMAGES         "images"         /* str */
#define DATA_PATH           "path"           /* str */
#define DATA_BYTES          "bytes"          /* int */
#define DATA_INFLIGHT       "inflight"       /* int */
#define DATA_PAUSED         "paused"         /* bool (pause); int (HELLO: how many) */

/* ---- kind "judge" (judge/judge.c) ----------------------------------------
 *
 * run_code    the model's tool, from the gateway.
 *   args      language (str, required), code (str, required; the gateway
 *             refuses more than write_file_max bytes), input (str), expected (str),
 *             timeout (int, seconds; default code_run_timeout, clamped to
 *             1..code_timeout_max), tests (int: how many cases, 1..ARG_TESTS_MAX,
 *             instead of input and expected; case I, counted from 0, is
 *             in tests.I.input (str) and tests.I.expected (str): see
 *             ops_item_key)
 *   text      the saved file, the build, each run and its verdict
 *   data      verdict (str: pass, fail, crash, timeout, output limit,
 *             cancelled, ran, compile error), unless a call to the
 *             sandbox manager failed first
 *
 * history     the chat's last programs, read from its sandbox; sent by no
 *             talkback process (talkback-hubcall reaches it).  No args.
 *   data      last-ran_language, last-ran_verdict, last-ran_code,
 *             last-passed_language, last-passed_verdict, last-passed_code
 *             (str), each pair present when that run is remembered
 */
#define OP_RUN_CODE "run_code"
#define OP_HISTORY  "history"

#define ARG_LANGUAGE "language" /* str */
#define ARG_CODE     "code"     /* str */
#define ARG_INPUT    "input"    /* str; also the PROP of a tests item */
#define ARG_EXPECTED "expected" /* str; also the PROP of a tests item */
#define ARG_TESTS    "tests"    /* int: the count; items in tests.I.PROP */

/* The most cases one run_code call holds: the judge refuses more, and the
 * gateway's schema says so (maxItems, and its description, built from it). */
#define ARG_TESTS_MAX 20

#define DATA_VERDICT              "verdict"              /* str */
#define DATA_LAST_RAN_LANGUAGE    "last-ran_language"    /* str */
#define DATA_LAST_RAN_VERDICT     "last-ran_verdict"     /* str */
#define DATA_LAST_RAN_CODE        "last-ran_code"        /* str */
#define DATA_LAST_PASSED_LANGUAGE "last-passed_language" /* str */
#define DATA_LAST_PASSED_VERDICT  "last-passed_verdict"  /* str */
#define DATA_LAST_PASSED_CODE     "last-passed_code"     /* str */

/* ---- kind "reaper" (reaper/main.c) ---------------------------------------
 *
 * sweep       run every sweep now (idle stop, eviction, disk cap); sent
 *             by no talkback process (talkback-hubcall reaches it).
 *   args      dry_run (bool: say what would be done, change nothing)
 *   text      one line per sandbox stopped or removed (or that would be)
 *   data      calls (int: Docker calls made), stopped (int), removed (int)
 */
#define OP_SWEEP "sweep"

#define ARG_DRY_RUN "dry_run" /* bool */

#define DATA_CALLS   "calls"   /* int */
#define DATA_STOPPED "stopped" /* int */
#define DATA_REMOVED "removed" /* int */

/* ---- served by the sandbox manager for several hosts (sandbox/hostops.c) --
 *
 * Every worker's HELLO carries a data map: host (str, its host_name).  The
 * sandbox manager's adds its capacity (sandbox/capacity.c), which the hub
 * places new chats by (hub/route.c):
 *   version (str)  running, kept, spares, max_running, keep_max_count,
 *   mem_free_kb, disk_free_kb, paused (int: of running, how many are
 *   paused)  draining (bool)
 *
 * locate      from the hub, when it does not know a chat's host: does this
 *             manager's Docker hold the chat's container?  No args.
 *   data      found (bool), state (str: running, exited, ...)
 * list        host-named (REQUEST host): one line per chat's sandbox,
 *             tab-separated: conversation user host state idle_seconds
 *             disk_bytes.  Spares are not chats and are not listed.
 * drain       host-named: place no new chat on this host (kept in
 * undrain     state_dir/draining, so it outlives restarts); undrain ends it.
 * stop, rm    stop, or remove with its files, the chat's sandbox.
 */
#define OP_LOCATE  "locate"
#define OP_LIST    "list"
#define OP_DRAIN   "drain"
#define OP_UNDRAIN "undrain"
#define OP_STOP    "stop"
#define OP_RM      "rm"

#define DATA_HOST           "host"           /* str (HELLO) */
#define DATA_VERSION        "version"        /* str (HELLO) */
#define DATA_RUNNING        "running"        /* int (HELLO) */
#define DATA_KEPT           "kept"           /* int (HELLO) */
#define DATA_SPARES         "spares"         /* int (HELLO) */
#define DATA_MAX_RUNNING    "max_running"    /* int (HELLO) */
#define DATA_KEEP_MAX_COUNT "keep_max_count" /* int (HELLO) */
#define DATA_MEM_FREE_KB    "mem_free_kb"    /* int (HELLO) */
#define DATA_DISK_FREE_KB   "disk_free_kb"   /* int (HELLO) */
#define DATA_DRAINING       "draining"       /* bool (HELLO) */
#define DATA_FOUND          "found"          /* bool (locate) */
#define DATA_STATE          "state"          /* str (locate) */

/* ---- answered by the hub itself (hub/queue.c) ----------------------------
 *
 * hosts       kind hub, from talkbackctl: one line per host, tab-separated
 *             host=, version=, running=, kept=, spares=, max_running=,
 *             keep_max_count=, mem_free_kb=, disk_free_kb=, draining=yes|no,
 *             workers=KIND:N,...  (from the workers' last HELLO data)
 *
 * forget_host kind hub, from talkbackctl: drop a host from the hosts the
 *             hub remembers (hub_hosts_file; hub/known.h), for a host
 *             retired for good.
 *   args      host (str, required)
 *   text      "Forgot host H: ..." or why not (is_error)
 *
 * A request the hub could not hand to a worker (no worker of that kind,
 * the worker lost, the deadline passed) is answered by the hub with that
 * status, an is_error text and
 *   data      kind (str): the worker kind the request was for;
 *             started (bool, worker lost, run_code only): whether the
 *             model's program had started (it is then not run again:
 *             hub/retry.h)
 */
#define OP_HOSTS       "hosts"
#define OP_FORGET_HOST "forget_host"

#define ARG_HOST "host" /* str (forget_host) */

#define DATA_KIND    "kind"    /* str */
#define DATA_STARTED "started" /* bool (worker lost) */

/* ---- helpers -------------------------------------------------------------- */

/* The key of one property of one item of an array argument, NAME.I.PROP
 * (I counted from 0), e.g. "tests.2.expected": how the gateway copies an
 * array of objects (run_code's `tests`) and how the judge reads it back.
 * Returns what snprintf returns. */
static inline int ops_item_key(char *buf, size_t len, const char *name, size_t i, const char *prop)
{
    return snprintf(buf, len, "%s.%zu.%s", name, i, prop);
}

/* An exec reply's data, read once.  The strings point into the reply
 * (valid while it lives) and are NULL when absent. */
typedef struct {
    bool has_exit_code; /* exit_code is there: the command ran */
    int64_t exit_code;  /* -1 when absent */
    bool timed_out;
    bool cancelled;
    bool output_limited;
    int64_t cut;        /* 0 when absent */
    int64_t elapsed_ms; /* -1 when absent */
    int64_t cpu_ms;     /* -1 when absent */
    int64_t max_rss_kb; /* -1 when absent */
    const char *output;
    size_t output_len;
    const char *err; /* DATA_STDERR */
    size_t err_len;
    const char *notice;
    size_t notice_len;
    const char *memory;
    size_t memory_len;
    const char *images;
    size_t images_len;
} ops_exec_t;

/* Read the data of an exec (or put: notice alone) reply into x; r may be
 * NULL, which reads as all absent. */
void ops_exec_read(const proto_msg_t *r, ops_exec_t *x);

#endif
