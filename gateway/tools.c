/* tools.c -- the tool table and argument checking.
 *
 * The table below is the single place a tool is defined.  Adding a tool
 * is one row: its texts, its inputSchema (a plain JSON file,
 * gateway/schemas/NAME.json), its annotations, the operation that serves
 * it (whose row in proto/optable.h says which kind of worker).
 * tools_build_request checks a call's arguments against
 * the row's own inputSchema (types, "required", "enum"), and copies the
 * arguments it names byte-exact into the proto request, under the same
 * names: those are the operation's ARG_ keys (proto/ops.h).  Arguments it
 * does not name talk back: a table of names models use by mistake (`cmd`,
 * `stdin`, `filename`...) says which was meant, and the call is refused
 * when running it would lose what the model asked for, or runs with a line
 * saying what was ignored.  Every `timeout` stays below the client's own
 * limit (client_timeout).  No I/O happens here.
 */
#include "gateway/tools.h"
#include "proto/optable.h"
#include "talk/texts.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SCHEMA_RUN, SCHEMA_RUN_CODE...: gateway/schemas/NAME.json, embedded at
 * build time (cmake/embed-json.cmake). */
#include "gateway/schemas_embedded.h"

/* How long reset and write_file may take in the worker, beyond which the
 * call's deadline (plus call_grace) ends it. */
#define TOOLS_FIXED_WAIT_S 60

static const tools_def_t tools_rows[] = {
    {
        .name = "run",
        .op = OP_RUN,
        .title = "Run a command",
        .description =
            "Run a bash command on this chat's own Linux machine (Debian 13, root). "
            "Each call is a new bash that starts in /work: cd, export and activate do not "
            "last to the next call, so chain steps with && (cd app && make). stdin is "
            "closed and nobody can type: give answers in the command. Start servers in "
            "the background (CMD > server.log 2>&1 &) and use them in a later run. Files "
            "and installs stay. Returns the output and the exit code.",
        .use = "run for shell commands",
        .input_schema = SCHEMA_RUN,
        .read_only = false,
        .destructive = true,
        .idempotent = false,
        .open_world = true,
        .takes_timeout = true,
        .enabled = true,
    },
    {
        .name = "write_file",
        .op = OP_WRITE_FILE,
        .title = "Write a file",
        .description =
            "Create or overwrite a file with exactly `content` (the whole file). "
            "Relative paths are under /work; missing folders are created. Use it instead "
            "of an editor or a heredoc, then build or run the file with run.",
        .use = "write_file to create files",
        .input_schema = SCHEMA_WRITE_FILE,
        .read_only = false,
        .destructive = true,
        .idempotent = true,
        .open_world = false,
        .fixed_wait_s = TOOLS_FIXED_WAIT_S,
        .sized_arg = ARG_CONTENT,
        .enabled = true,
    },
    {
        .name = "reset",
        .op = OP_RESET,
        .title = "Reset the machine",
        .description = "Delete this chat's machine (all files, installs and running programs) so "
                       "the next call starts from a clean one. Only when the machine is broken: "
                       "everything in it is lost.",
        .use = "reset to start again from a clean machine",
        .input_schema = SCHEMA_RESET,
        .read_only = false,
        .destructive = true,
        .idempotent = true,
        .open_world = false,
        .fixed_wait_s = TOOLS_FIXED_WAIT_S,
        .enabled = true,
    },
    {
        .name = "run_code",
        .op = OP_RUN_CODE,
        .title = "Run and check a program",
        .description =
            "Save, compile and run a program on this chat's machine (as /work/main.<ext>) "
            "with `input` as its stdin, and compare what it prints with `expected`. PASS "
            "means the output matched. FAIL shows what differs; a compile error shows the "
            "compiler's message. To check several cases in one call, send `tests` instead of "
            "`input` and `expected`. Until it says PASS, fix the code and call run_code again.",
        .use = "run_code to compile, run and check a program",
        .input_schema = SCHEMA_RUN_CODE,
        /* destructive: it overwrites /work/main.<ext> and the binary */
        .read_only = false,
        .destructive = true,
        .idempotent = true,
        .open_world = false,
        .takes_timeout = true,
        .code_timeouts = true,
        .sized_arg = ARG_CODE,
        .enabled = true,
    },
};

#define TOOLS_N (sizeof tools_rows / sizeof tools_rows[0])

/* ---- the schemas, parsed once ----------------------------------------------- */

/* Each row's inputSchema as JSON, parsed on first use (or by tools_init at
 * start) and kept for the life of the process: calls only read them, from
 * any thread; tools/list changes a copy. */
static json_t *tools_schemas[TOOLS_N];
static pthread_once_t tools_schemas_once = PTHREAD_ONCE_INIT;
static bool tools_schemas_ok;

/* The limits a schema states, from where they are written once: run_code's
 * `tests` holds at most ARG_TESTS_MAX cases (proto/ops.h, which the judge
 * enforces too), as its maxItems and as the "{tests_max}" of its
 * description. */
static void tools_fill_limits(json_t *schema)
{
    json_t *tests = json_object_get(json_object_get(schema, "properties"), "tests");
    if (!json_is_object(tests))
        return;
    json_object_set_new(tests, "maxItems", json_integer(ARG_TESTS_MAX));
    const char *d = json_string_value(json_object_get(tests, "description"));
    const char *at = d ? strstr(d, "{tests_max}") : NULL;
    if (at) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s%d%s", (int)(at - d), d, ARG_TESTS_MAX,
                 at + strlen("{tests_max}"));
        json_object_set_new(tests, "description", json_string(buf));
    }
}

static void tools_parse_schemas(void)
{
    tools_schemas_ok = true;
    for (size_t i = 0; i < TOOLS_N; i++) {
        tools_schemas[i] = json_loads(tools_rows[i].input_schema, 0, NULL);
        if (!tools_schemas[i])
            tools_schemas_ok = false;
        else
            tools_fill_limits(tools_schemas[i]);
    }
}

int tools_init(void)
{
    pthread_once(&tools_schemas_once, tools_parse_schemas);
    return tools_schemas_ok ? 0 : -1;
}

/* The parsed inputSchema of a row of the table (borrowed: never changed,
 * never freed); NULL for a def that is not a row, or a schema that did not
 * parse. */
static const json_t *tools_parsed_schema(const tools_def_t *t)
{
    tools_init();
    if (t < tools_rows || t >= tools_rows + TOOLS_N)
        return NULL;
    return tools_schemas[t - tools_rows];
}

const tools_def_t *tools_table(size_t *n)
{
    if (n)
        *n = TOOLS_N;
    return tools_rows;
}

const tools_def_t *tools_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < TOOLS_N; i++)
        if (tools_rows[i].enabled && strcmp(tools_rows[i].name, name) == 0)
            return &tools_rows[i];
    return NULL;
}

/* ---- timeouts the client leaves room for ----------------------------------- */

/* Milliseconds of the client's ceiling (client_timeout) that a call's
 * deadline leaves for the round trip: the reply's way back through the
 * hub, the gateway and HTTP, so talkback's text arrives first. */
static int64_t tools_ceiling_ms(const tools_limits_t *lim)
{
    int64_t c = lim->client_timeout * 1000 - lim->client_margin_ms;
    return c > 1000 ? c : 1000;
}

/* Seconds of a call's deadline beyond its `timeout` that run_code keeps
 * for saving and compiling first (and call_grace for the round trip to
 * the sandbox): run_code's programs never outlive the ceiling, they get a
 * timeout verdict.  `run` reserves nothing: a command still running at
 * the ceiling goes on as a job (docs/jobs.md). */
static int64_t tools_setup_s(const tools_def_t *t, const tools_limits_t *lim)
{
    return t->code_timeouts ? lim->call_grace + lim->code_compile_timeout + 60 : 0;
}

/* The default and largest `timeout` a tool advertises and accepts: the
 * configured ones; run_code's lowered so that timeout plus set-up ends
 * before the client (client_timeout) gives up on the call, run's default
 * kept below the ceiling (a larger one is asked for, not given).  *capped
 * says whether the client's limit is what set the maximum. */
static void tools_timeout_bounds(const tools_def_t *t, const tools_limits_t *lim, int64_t *dflt,
                                 int64_t *max, bool *capped)
{
    *dflt = t->code_timeouts ? lim->code_run_timeout : lim->run_timeout;
    *max = t->code_timeouts ? lim->code_timeout_max : lim->run_timeout_max;
    *capped = false;
    if (lim->client_timeout > 0) {
        int64_t room = tools_ceiling_ms(lim) / 1000 - tools_setup_s(t, lim);
        if (room < 1)
            room = 1;
        if (t->code_timeouts && room < *max) {
            *max = room;
            *capped = true;
        }
        if (!t->code_timeouts && *dflt > room)
            *dflt = room;
    }
    if (*dflt > *max)
        *dflt = *max;
}

/* ---- tools/list ---------------------------------------------------------- */

/* "a string", "an integer", ... for a schema type name (argument checking
 * below says it the same way). */
static const char *tools_type_phrase(const char *type);

/* The keywords a client checks a call against before sending it, dropped
 * from what tools/list advertises (tools_advertise). */
static const char *const tools_client_checks[] = { "type",    "required", "minimum",
                                                   "maximum", "minItems", "maxItems" };

/* What a property's description says of it once its checks are dropped:
 * " Required, a string." or " Optional, an integer." */
static int tools_describe_prop(json_t *prop, bool required)
{
    const char *d = json_string_value(json_object_get(prop, "description"));
    const char *type = json_string_value(json_object_get(prop, "type"));
    char *text = NULL;
    if (asprintf(&text, "%s %s, %s.", d ? d : "", required ? "Required" : "Optional",
                 tools_type_phrase(type ? type : "string")) < 0)
        return -1;
    int rc = json_object_set_new(prop, "description", json_string(text));
    free(text);
    return rc;
}

/*
 * The schema a client sees.  LibreChat checks every call against the
 * advertised inputSchema before sending it, and answers a call that does
 * not fit with "Received tool input did not match expected schema" alone:
 * not the argument's name, and never talkback's own text for a wrong name,
 * a missing argument, a wrong type or a timeout too long.  So what a
 * client would check (types, required, bounds) is said in each property's
 * description instead, other names pass (additionalProperties), and
 * talkback's own checks, on the table's full schema, refuse with words.
 */
static int tools_advertise(json_t *schema)
{
    json_t *props = json_object_get(schema, "properties");
    const json_t *req = json_object_get(schema, "required");
    const char *name;
    json_t *prop;
    json_object_foreach(props, name, prop)
    {
        bool required = false;
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r)
            required |= json_is_string(r) && strcmp(json_string_value(r), name) == 0;
        if (tools_describe_prop(prop, required) != 0)
            return -1;
        json_t *items = json_object_get(prop, "items");
        const char *iname;
        json_t *iprop;
        json_object_foreach(json_object_get(items, "properties"), iname, iprop)
        {
            for (size_t k = 0; k < sizeof tools_client_checks / sizeof tools_client_checks[0]; k++)
                json_object_del(iprop, tools_client_checks[k]);
        }
        for (size_t k = 0; k < sizeof tools_client_checks / sizeof tools_client_checks[0]; k++) {
            json_object_del(prop, tools_client_checks[k]);
            if (json_is_object(items))
                json_object_del(items, tools_client_checks[k]);
        }
    }
    json_object_del(schema, "required");
    return json_object_set_new(schema, "additionalProperties", json_true());
}

/* A copy of a row's schema as clients see it (tools_advertise); for a
 * timeout tool, with the limits stated in it. */
static json_t *tools_schema(const tools_def_t *t, const tools_limits_t *lim)
{
    json_t *schema = json_deep_copy(tools_parsed_schema(t));
    if (!schema)
        return NULL;
    json_t *prop = json_object_get(json_object_get(schema, "properties"), "timeout");
    if (t->takes_timeout && json_is_object(prop)) {
        const char *d = json_string_value(json_object_get(prop, "description"));
        int64_t dflt, max;
        bool capped;
        tools_timeout_bounds(t, lim, &dflt, &max, &capped);
        char *text = NULL;
        if (asprintf(&text, "%s Default %lld, at most %lld.", d ? d : "Seconds.", (long long)dflt,
                     (long long)max) < 0)
            text = NULL;
        if (!text || json_object_set_new(prop, "description", json_string(text)) != 0 ||
            json_object_set_new(prop, "default", json_integer(dflt)) != 0) {
            free(text);
            json_decref(schema);
            return NULL;
        }
        free(text);
    }
    if (tools_advertise(schema) != 0) {
        json_decref(schema);
        return NULL;
    }
    return schema;
}

json_t *tools_list_json(const tools_limits_t *lim)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (size_t i = 0; i < TOOLS_N; i++) {
        const tools_def_t *t = &tools_rows[i];
        if (!t->enabled)
            continue;
        json_t *schema = tools_schema(t, lim);
        json_t *tool = schema ? json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}",
                                          "name", t->name, "title", t->title, "description",
                                          t->description, "inputSchema", schema, "annotations",
                                          "title", t->title, "readOnlyHint", t->read_only,
                                          "destructiveHint", t->destructive, "idempotentHint",
                                          t->idempotent, "openWorldHint", t->open_world)
                              : NULL;
        /* json_pack's "o" steals schema even on failure. */
        if (!tool || json_array_append_new(arr, tool) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

char *tools_instructions(void)
{
    const char *uses[TOOLS_N];
    size_t n = 0;
    for (size_t i = 0; i < TOOLS_N; i++)
        if (tools_rows[i].enabled && tools_rows[i].use)
            uses[n++] = tools_rows[i].use;

    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    fputs("Each chat has its own Linux machine (Debian, root, working directory "
          "/work) that keeps its files between calls.",
          f);
    if (n > 0) {
        fputs(" Use ", f);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                fputs(i + 1 == n ? " and " : ", ", f);
            fputs(uses[i], f);
        }
        fputs(".", f);
    }
    fputs(" Results end with what to do next.", f);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- argument checking ----------------------------------------------------- */

/* "a string", "an integer", ... for a schema type name. */
static const char *tools_type_phrase(const char *type)
{
    if (strcmp(type, "string") == 0)
        return "a string";
    if (strcmp(type, "integer") == 0)
        return "an integer";
    if (strcmp(type, "boolean") == 0)
        return "true or false";
    if (strcmp(type, "number") == 0)
        return "a number";
    if (strcmp(type, "array") == 0)
        return "an array";
    return type;
}

/* What a JSON value was, for "must be X, not Y". */
static const char *tools_value_phrase(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "true/false";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* An integer value: JSON integers, and reals with no fraction (JSON does not
 * tell 30 from 30.0). */
static bool tools_as_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        /* Within +-2^53 (NaN fails both tests), and no fraction. */
        if (d >= -9007199254740992.0 && d <= 9007199254740992.0 && (double)(int64_t)d == d) {
            *out = (int64_t)d;
            return true;
        }
    }
    return false;
}

/* Set *err_text to a formatted message; returns TOOLS_EARG, or
 * TOOLS_ENOMEM when even that fails. */
__attribute__((format(printf, 2, 3))) static tools_err_t tools_fail(char **err_text,
                                                                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(err_text, fmt, ap);
    va_end(ap);
    if (r < 0) {
        *err_text = NULL;
        return TOOLS_ENOMEM;
    }
    return TOOLS_EARG;
}

/* One item of an array argument: an object whose string properties are
 * copied as NAME.I.PROP (I counted from 0); required ones must be there. */
static tools_err_t tools_take_item(const char *name, size_t i, const json_t *items, const json_t *v,
                                   proto_map_t *args, char **err_text)
{
    if (!json_is_object(v))
        return tools_fail(err_text, TX_GW_ITEM_NOT_OBJECT, i + 1, name, tools_value_phrase(v));
    size_t k;
    json_t *r;
    json_array_foreach(json_object_get(items, "required"), k, r)
    {
        const json_t *x = json_object_get(v, json_string_value(r) ? json_string_value(r) : "");
        if (!x || json_is_null(x))
            return tools_fail(err_text, TX_GW_ITEM_MISSING, i + 1, name,
                              json_string_value(r) ? json_string_value(r) : "?");
    }
    const char *pname;
    json_t *prop;
    json_object_foreach(json_object_get(items, "properties"), pname, prop)
    {
        const json_t *x = json_object_get(v, pname);
        if (!x || json_is_null(x))
            continue;
        if (!json_is_string(x))
            return tools_fail(err_text, TX_GW_ITEM_NOT_STRING, pname, i + 1, name,
                              tools_value_phrase(x));
        char key[160];
        ops_item_key(key, sizeof key, name, i, pname);
        if (proto_map_set_str(args, key, json_string_value(x), json_string_length(x)) != 0)
            return TOOLS_ENOMEM;
    }
    return TOOLS_OK;
}

/* ---- arguments under the wrong name ---------------------------------------- */

/* Names models send for an argument that has another name.  A row says
 * which argument was meant (`right`), or, when the tool has nothing like
 * it, what to do instead (`instead`).  The call does not run when the
 * model's intent would be lost: the meant argument is missing (a `cmd`
 * without `command` would run nothing the model asked for), or the row is
 * `never` (a `stdin` for run_code: running without it would answer a
 * different question).  Otherwise the wrong name is ignored, and the result
 * says so. */
typedef struct {
    const char *tool;    /* the tool it applies to; NULL = every tool */
    const char *wrong;   /* the name the model sent */
    const char *right;   /* the argument it meant, or NULL */
    const char *instead; /* without a right one: what to do, one sentence */
    bool never;          /* nothing runs, even when `right` is given too */
} tools_alias_t;

static const tools_alias_t tools_aliases[] = {
    /* run */
    { "run", "cmd", "command", NULL, false },
    { "run", "commands", "command", NULL, false },
    { "run", "command_line", "command", NULL, false },
    { "run", "cmdline", "command", NULL, false },
    { "run", "script", "command", NULL, false },
    { "run", "bash", "command", NULL, false },
    { "run", "shell", "command", NULL, false },
    { "run", "code", "command", NULL, false },
    { "run", "args", NULL,
      "Put the arguments in `command` itself, e.g. \"python3 app.py --port 8000\".", true },
    { "run", "stdin", NULL,
      "stdin is closed: pipe the input in `command`, e.g. printf 'LINE1\\nLINE2\\n' | CMD, or CMD "
      "< input.txt.",
      true },
    { "run", "input", NULL,
      "stdin is closed: pipe the input in `command`, e.g. printf 'LINE1\\nLINE2\\n' | CMD, or CMD "
      "< input.txt.",
      true },
    { "run", "cwd", NULL, "Every call starts in /work: put cd DIR && in front of `command`.",
      true },
    { "run", "workdir", NULL, "Every call starts in /work: put cd DIR && in front of `command`.",
      true },
    { "run", "working_dir", NULL,
      "Every call starts in /work: put cd DIR && in front of `command`.", true },
    { "run", "directory", NULL, "Every call starts in /work: put cd DIR && in front of `command`.",
      true },
    { "run", "env", NULL,
      "Set variables in `command` itself: VAR=value CMD, or export VAR=value && CMD.", true },
    { "run", "background", NULL,
      "Start it in the background in `command` itself: CMD > out.log 2>&1 &", true },
    /* run_code */
    { "run_code", "stdin", "input", NULL, true },
    { "run_code", "input_data", "input", NULL, true },
    { "run_code", "test_input", "input", NULL, true },
    { "run_code", "inputs", "input", NULL, true },
    { "run_code", "expected_output", "expected", NULL, false },
    { "run_code", "expected_stdout", "expected", NULL, false },
    { "run_code", "expected_result", "expected", NULL, false },
    { "run_code", "output", "expected", NULL, false },
    { "run_code", "lang", "language", NULL, false },
    { "run_code", "programming_language", "language", NULL, false },
    { "run_code", "source", "code", NULL, false },
    { "run_code", "source_code", "code", NULL, false },
    { "run_code", "program", "code", NULL, false },
    { "run_code", "command", NULL, "run_code runs `code`; for a shell command use the run tool.",
      true },
    { "run_code", "args", NULL, "run_code passes no arguments: read them from `input`.", true },
    /* write_file */
    { "write_file", "file", "path", NULL, false },
    { "write_file", "filename", "path", NULL, false },
    { "write_file", "file_name", "path", NULL, false },
    { "write_file", "file_path", "path", NULL, false },
    { "write_file", "filepath", "path", NULL, false },
    { "write_file", "name", "path", NULL, false },
    { "write_file", "contents", "content", NULL, false },
    { "write_file", "text", "content", NULL, false },
    { "write_file", "data", "content", NULL, false },
    { "write_file", "code", "content", NULL, false },
    { "write_file", "body", "content", NULL, false },
    { "write_file", "append", NULL,
      "write_file always writes the whole file: send the full new content, or append with run "
      "(printf 'TEXT\\n' >> FILE).",
      true },
    { "write_file", "mode", NULL,
      "write_file writes the content only: set the mode with run (chmod +x FILE).", true },
    /* every tool */
    { NULL, "timeout_seconds", "timeout", NULL, false },
    { NULL, "timeout_sec", "timeout", NULL, false },
    { NULL, "timeout_s", "timeout", NULL, false },
    { NULL, "time_limit", "timeout", NULL, false },
    { NULL, "timeout_ms", NULL, "`timeout` is in seconds.", true },
};

#define TOOLS_ALIASES_N (sizeof tools_aliases / sizeof tools_aliases[0])

/* The alias row for argument name of tool t, or NULL. */
static const tools_alias_t *tools_alias_find(const tools_def_t *t, const char *name)
{
    for (size_t i = 0; i < TOOLS_ALIASES_N; i++) {
        const tools_alias_t *a = &tools_aliases[i];
        if ((!a->tool || strcmp(a->tool, t->name) == 0) && strcmp(a->wrong, name) == 0)
            return a;
    }
    return NULL;
}

/* Whether the tool's schema names this argument. */
static bool tools_knows_arg(const json_t *schema, const char *name)
{
    return json_object_get(json_object_get(schema, "properties"), name) != NULL;
}

/* The tool's argument names, "command, timeout". */
static void tools_arg_names(const json_t *schema, char *buf, size_t len)
{
    const char *name;
    json_t *prop;
    size_t at = 0;
    buf[0] = '\0';
    json_object_foreach(json_object_get(schema, "properties"), name, prop)
    {
        int n = snprintf(buf + at, len - at, "%s`%s`", at ? ", " : "", name);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
}

/* A refusal for an argument sent under a name whose meaning would be lost,
 * or TOOLS_OK when there is none. */
static tools_err_t tools_check_aliases(const tools_def_t *t, const json_t *schema,
                                       const json_t *arguments, char **err_text)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)arguments, name, v)
    {
        if (tools_knows_arg(schema, name) || json_is_null(v))
            continue;
        const tools_alias_t *a = tools_alias_find(t, name);
        if (!a)
            continue;
        if (!a->right)
            return tools_fail(err_text, TX_GW_ALIAS_NONE, t->name, name, a->instead);
        const json_t *r = json_object_get(arguments, a->right);
        if (!a->never && r && !json_is_null(r))
            continue; /* the right one is there too: the wrong one is only ignored */
        if (r && !json_is_null(r))
            return tools_fail(err_text, TX_GW_ALIAS_ONLY, t->name, name, a->right);
        return tools_fail(err_text, TX_GW_ALIAS_RENAMED, t->name, name, a->right, t->name,
                          a->right);
    }
    return TOOLS_OK;
}

/* An array of objects of strings (run_code's `tests`): the count goes in
 * NAME, each item's strings in NAME.I.PROP; minItems and maxItems hold. */
static tools_err_t tools_take_array(const char *name, const json_t *prop, const json_t *v,
                                    proto_map_t *args, char **err_text)
{
    if (!json_is_array(v))
        return tools_fail(err_text, TX_GW_NOT_ARRAY, name, tools_value_phrase(v));
    int64_t lo = 0, hi = 0;
    size_t n = json_array_size(v);
    if (tools_as_int(json_object_get(prop, "minItems"), &lo) && (int64_t)n < lo)
        return tools_fail(err_text, TX_GW_TOO_FEW, name, n, (long long)lo);
    if (tools_as_int(json_object_get(prop, "maxItems"), &hi) && (int64_t)n > hi)
        return tools_fail(err_text, TX_GW_TOO_MANY, name, n, (long long)hi);
    const json_t *items = json_object_get(prop, "items");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        tools_err_t rc = tools_take_item(name, i, items, x, args, err_text);
        if (rc != TOOLS_OK)
            return rc;
    }
    return proto_map_set_int(args, name, (int64_t)n) == 0 ? TOOLS_OK : TOOLS_ENOMEM;
}

/* One line per argument the tool does not know, naming the right one when
 * the table knows it (tools.h). */
void tools_ignored_note(const tools_def_t *t, const json_t *arguments, char *note, size_t len)
{
    note[0] = '\0';
    if (!t || !json_is_object(arguments) || len < 2)
        return;
    const json_t *schema = tools_parsed_schema(t);
    if (!schema)
        return;
    char names[160];
    tools_arg_names(schema, names, sizeof names);
    size_t at = 0;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)arguments, name, v)
    {
        if (tools_knows_arg(schema, name))
            continue;
        const tools_alias_t *a = tools_alias_find(t, name);
        int n;
        if (a && a->right)
            n = snprintf(note + at, len - at, TX_GW_IGNORED_INSTEAD, name, t->name, a->right);
        else if (names[0])
            n = snprintf(note + at, len - at, TX_GW_IGNORED_ONLY, name, t->name, names);
        else
            n = snprintf(note + at, len - at, TX_GW_IGNORED_NONE, name, t->name);
        if (n < 0 || (size_t)n >= len - at) {
            note[at] = '\0'; /* keep whole lines only */
            break;
        }
        at += (size_t)n;
    }
}

/* Check one present, non-null argument against its property schema and copy
 * it into args. */
static tools_err_t tools_take_arg(const char *name, const json_t *prop, const json_t *v,
                                  proto_map_t *args, char **err_text)
{
    const char *type = json_string_value(json_object_get(prop, "type"));
    if (!type)
        type = "string";
    const char *want = tools_type_phrase(type);

    if (strcmp(type, "string") == 0) {
        if (!json_is_string(v))
            return tools_fail(err_text, TX_GW_WRONG_TYPE, name, want, tools_value_phrase(v));
        const json_t *en = json_object_get(prop, "enum");
        if (json_is_array(en)) {
            bool found = false;
            size_t i;
            json_t *e;
            json_array_foreach(en, i, e) if (json_equal(e, v)) found = true;
            if (!found) {
                char *list = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&list, &len);
                if (!f)
                    return TOOLS_ENOMEM;
                json_array_foreach(en, i, e) fprintf(
                    f, "%s%s", i ? ", " : "", json_is_string(e) ? json_string_value(e) : "?");
                if (fclose(f) != 0) {
                    free(list);
                    return TOOLS_ENOMEM;
                }
                tools_err_t r = tools_fail(err_text, TX_GW_NOT_ONE_OF, name, list);
                free(list);
                return r;
            }
        }
        return proto_map_set_str(args, name, json_string_value(v), json_string_length(v)) == 0
                   ? TOOLS_OK
                   : TOOLS_ENOMEM;
    }
    if (strcmp(type, "integer") == 0) {
        int64_t i;
        if (!tools_as_int(v, &i))
            return tools_fail(err_text, TX_GW_WRONG_TYPE, name, want, tools_value_phrase(v));
        return proto_map_set_int(args, name, i) == 0 ? TOOLS_OK : TOOLS_ENOMEM;
    }
    if (strcmp(type, "boolean") == 0) {
        if (!json_is_boolean(v))
            return tools_fail(err_text, TX_GW_WRONG_TYPE, name, want, tools_value_phrase(v));
        return proto_map_set_bool(args, name, json_is_true(v)) == 0 ? TOOLS_OK : TOOLS_ENOMEM;
    }
    if (strcmp(type, "array") == 0)
        return tools_take_array(name, prop, v, args, err_text);
    /* A schema type this code does not copy: a table error, refused
     * loudly rather than passed on half-understood. */
    return tools_fail(err_text, TX_GW_TYPE_UNKNOWN, name, type);
}

/*
 * Copy the call's arguments into the request as the tool's schema says:
 * first check every required argument is there (in the schema's order,
 * so the error names the first one missing), then copy each argument
 * the schema names with its type checked.  Others are ignored.
 */
static tools_err_t tools_take_args(const json_t *schema, const json_t *arguments, proto_msg_t *req,
                                   char **err_text)
{
    /* Required arguments first, in the order the schema names them. */
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i, r)
    {
        const char *name = json_string_value(r);
        if (!name)
            continue;
        const json_t *v = arguments ? json_object_get(arguments, name) : NULL;
        if (!v || json_is_null(v)) {
            const json_t *prop = json_object_get(json_object_get(schema, "properties"), name);
            const char *type = json_string_value(json_object_get(prop, "type"));
            return tools_fail(err_text, TX_GW_REQUIRED, name,
                              tools_type_phrase(type ? type : "string"));
        }
    }
    /* Then every argument the schema names; others are ignored. */
    const char *name;
    json_t *prop;
    json_object_foreach(json_object_get(schema, "properties"), name, prop)
    {
        const json_t *v = arguments ? json_object_get(arguments, name) : NULL;
        if (!v || json_is_null(v))
            continue; /* an optional argument sent as null counts as absent */
        tools_err_t rc = tools_take_arg(name, prop, v, &req->args, err_text);
        if (rc != TOOLS_OK)
            return rc;
    }
    return TOOLS_OK;
}

/*
 * Work out how long the gateway waits for this call: the tool's fixed
 * wait, or its checked `timeout` argument (times the number of test
 * cases, plus compile time for run_code), plus the grace, capped so
 * talkback's own deadline text comes before the client gives up.
 */
static tools_err_t tools_request_wait(const tools_def_t *tool, const tools_limits_t *lim,
                                      proto_msg_t *req, int64_t *wait_out, char **err_text)
{
    int64_t wait = tool->fixed_wait_s;
    if (tool->takes_timeout) {
        int64_t dflt, max;
        bool capped;
        tools_timeout_bounds(tool, lim, &dflt, &max, &capped);
        int64_t t = proto_map_int(&req->args, ARG_TIMEOUT, dflt);
        if (t < 1 || t > max)
            return tools_fail(err_text, TX_GW_TIMEOUT_RANGE, (long long)max, (long long)dflt,
                              capped ? " For longer work, start it in the background "
                                       "(CMD > work.log 2>&1 &) and read work.log in later calls."
                              : tool->code_timeouts ? ""
                                                    : " Call run again with a timeout in that "
                                                      "range: a command still running when the "
                                                      "call must answer goes on as a job.");
        if (proto_map_set_int(&req->args, ARG_TIMEOUT, t) != 0)
            return TOOLS_ENOMEM;
        /* run_code with `tests` runs once per case. */
        int64_t runs = proto_map_int(&req->args, ARG_TESTS, 1);
        wait = t * (runs > 1 ? runs : 1);
        /* run_code also saves and compiles before it runs. */
        if (tool->code_timeouts)
            wait += lim->code_compile_timeout + 60;
    }
    /* In ms from here: whatever happens, talkback's text comes before the
     * client gives up on the call (a `run` still running then is a job). */
    wait = (wait + lim->call_grace) * 1000;
    if (lim->client_timeout > 0 && wait > tools_ceiling_ms(lim))
        wait = tools_ceiling_ms(lim);
    *wait_out = wait;
    return TOOLS_OK;
}

tools_err_t tools_build_request(const tools_def_t *tool, const json_t *arguments, const char *conv,
                                const char *user, const tools_limits_t *lim, int64_t now_ms,
                                proto_msg_t **out, int64_t *wait_s, char **err_text)
{
    *out = NULL;
    *err_text = NULL;
    if (arguments && !json_is_object(arguments) && !json_is_null(arguments))
        return tools_fail(err_text, TX_GW_ARGS_NOT_OBJECT, tool->name,
                          tools_value_phrase(arguments));

    const json_t *schema = tools_parsed_schema(tool);
    if (!schema)
        return TOOLS_ENOMEM; /* the table is constant: only memory can fail */
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    if (!req)
        return TOOLS_ENOMEM;

    tools_err_t rc = TOOLS_OK;
    /* Arguments under a wrong name, when running would lose what they say. */
    if (arguments && json_is_object(arguments)) {
        rc = tools_check_aliases(tool, schema, arguments, err_text);
        if (rc != TOOLS_OK)
            goto done;
    }
    rc = tools_take_args(schema, arguments, req, err_text);
    if (rc != TOOLS_OK)
        goto done;

    if (tool->sized_arg) {
        size_t len = 0;
        if (proto_map_str(&req->args, tool->sized_arg, &len) &&
            (int64_t)len > lim->write_file_max) {
            rc = tools_fail(err_text, TX_GW_ARG_BIG, tool->sized_arg, len,
                            (long long)lim->write_file_max);
            goto done;
        }
    }

    int64_t wait = 0;
    rc = tools_request_wait(tool, lim, req, &wait, err_text);
    if (rc != TOOLS_OK)
        goto done;

    const ops_row_t *row = ops_named(tool->op);
    if (!row || proto_msg_set_kind(req, row->kind) != 0 || proto_msg_set_name(req, tool->op) != 0 ||
        proto_msg_set_conv(req, conv ? conv : "") != 0 ||
        proto_msg_set_user(req, user ? user : "") != 0) {
        rc = TOOLS_ENOMEM;
        goto done;
    }
    req->deadline_ms = now_ms + wait; /* ms */
    *wait_s = (wait + 999) / 1000;

done:
    if (rc != TOOLS_OK) {
        proto_msg_destroy(&req);
        if (rc == TOOLS_ENOMEM) {
            free(*err_text);
            *err_text = NULL;
        }
        return rc;
    }
    *out = req;
    return TOOLS_OK;
}
