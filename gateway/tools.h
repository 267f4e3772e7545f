/* tools.h -- the MCP tools talkback offers, as data, and how a call's
 * arguments become a proto request.
 *
 * Each tool is one row of a table (tools.c): its name, title and
 * description as the model sees them, its inputSchema as JSON text, its
 * annotations, the operation that serves it and how long it may take.
 * Argument checking reads the row's own inputSchema (property types,
 * "required", "enum"), so what the model is shown and what is enforced
 * cannot drift apart.  A row with enabled = false is neither listed nor
 * callable: that is how a tool is prepared before its worker exists.
 *
 * Everything here is pure (no I/O, no config reads): limits come in a
 * tools_limits_t filled by the caller.  Unit-tested in tests/unit/test_mcp.c
 * and tests/unit/test_tools.c.
 */
#ifndef TALKBACK_TOOLS_H
#define TALKBACK_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "proto/ops.h"
#include "proto/proto.h"

/* The limits a call is checked against (config keys of the same names). */
typedef struct {
    int64_t run_timeout;          /* default `timeout` in seconds */
    int64_t run_timeout_max;      /* largest `timeout` accepted */
    int64_t call_grace;           /* seconds added to a call's deadline */
    int64_t write_file_max;       /* largest sized argument, bytes */
    int64_t code_run_timeout;     /* run_code: default `timeout` */
    int64_t code_timeout_max;     /* run_code: largest `timeout` */
    int64_t code_compile_timeout; /* run_code: compile time added to the deadline */
    int64_t client_timeout;       /* seconds the MCP client waits for one call (its own
                                 hard limit); 0 = no limit.  Every `timeout`
                                 and deadline stays below it. */
    int64_t client_margin_ms;     /* the round trip kept between a call's
                                 deadline and client_timeout */
} tools_limits_t;

/* One tool. */
typedef struct {
    const char *name;         /* MCP tool name */
    const char *op;           /* the operation that serves it
                                   (proto/ops.h): the same word today; its
                                   row (proto/optable.h) names the kind */
    const char *title;        /* short human title (annotations.title too) */
    const char *description;  /* what the model reads */
    const char *use;          /* fragment for the server instructions,
                                   e.g. "run for shell commands" */
    const char *input_schema; /* JSON Schema text of the arguments */
    bool read_only;           /* annotations.readOnlyHint */
    bool destructive;         /* annotations.destructiveHint */
    bool idempotent;          /* annotations.idempotentHint */
    bool open_world;          /* annotations.openWorldHint */
    bool code_timeouts;       /* timeout limits are run_code's (code_*),
                                   and the deadline has room to compile */
    bool takes_timeout;       /* optional `timeout` argument in seconds,
                                   default run_timeout, 1..run_timeout_max */
    int64_t fixed_wait_s;     /* tools without timeout: seconds the
                                   worker may take (call_grace is added) */
    const char *sized_arg;    /* string argument (ARG_*) capped at
                                   write_file_max bytes, or NULL */
    bool enabled;             /* listed and callable */
} tools_def_t;

/* Result of turning a call into a request. */
typedef enum {
    TOOLS_OK = 0,
    TOOLS_EARG, /* an argument is missing or wrong: *err_text says which */
    TOOLS_ENOMEM
} tools_err_t;

/* Parse every row's inputSchema, once for the life of the process (later
 * calls, and the first use of any function below, do nothing more): 0, or
 * -1 when one does not parse, a table error the gateway refuses to start
 * with. */
int tools_init(void);

/* The whole table (enabled or not) and its length. */
const tools_def_t *tools_table(size_t *n);

/* The enabled tool of that name, or NULL. */
const tools_def_t *tools_find(const char *name);

/* The "tools" array of a tools/list result: every enabled tool with name,
 * title, description, inputSchema (with the timeout limits of `lim`
 * filled in) and annotations.  New reference, NULL when out of memory. */
json_t *tools_list_json(const tools_limits_t *lim);

/* Server instructions naming the enabled tools, malloc'ed; NULL when out
 * of memory. */
char *tools_instructions(void);

/* Check `arguments` (a JSON object, or NULL for none) against the tool
 * and build the proto request: its op, and the kind from the op's row
 * (proto/optable.h), conv, user
 * (NULL -> ""), deadline now_ms + (timeout + call_grace) s, and args
 * copied byte-exact (strings with their length, integers, booleans; a
 * `timeout` tool gets its effective timeout in args "timeout").
 * On TOOLS_OK *out is the new request and *wait_s the seconds between
 * now_ms and its deadline.  On TOOLS_EARG *err_text is a malloc'ed text
 * for the model ("[talkback: argument `command` is required and must be
 * a string. Nothing ran.]"). */
tools_err_t tools_build_request(const tools_def_t *tool, const json_t *arguments, const char *conv,
                                const char *user, const tools_limits_t *lim, int64_t now_ms,
                                proto_msg_t **out, int64_t *wait_s, char **err_text);

/* The lines that tell the model which of its arguments were ignored
 * because the tool has no such argument ("[talkback: argument `cmd` was
 * ignored: run takes `command` instead.]\n"), at most len - 1 bytes of whole
 * lines, into note; "" when every argument is known.  tools_build_request
 * refuses the calls where an ignored argument would change their meaning;
 * this says the rest. */
void tools_ignored_note(const tools_def_t *t, const json_t *arguments, char *note, size_t len);

#endif
