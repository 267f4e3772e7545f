/* repair.c -- the reply repair of talkback-proxy (see repair.h).
 *
 * Reading order: tool names and language tags; verdicts; finding the
 * turn's programs in a request; rendering the appended block; repairing a
 * whole JSON answer; the SSE filter.
 *
 * Choices made here:
 *  - The turn is every message after the last `user` message.  Tool calls
 *    are taken in the order their results appear: a call without a result
 *    is not known to have run.
 *  - run_code's verdict is read by proxy/verdict.c, from the shape of the
 *    result and the call's arguments (see repair_code_verdict).
 *  - A file written with write_file counts as run when a later `run`
 *    command names its basename (as a whole word) and the file looks like
 *    a program (a known extension, or a #! line).  The content is the one
 *    written last before that run.  When one command names several such
 *    files, the one written last wins.
 *  - The winner is the last program that passed, else the last that ran.
 *  - A reply "has code" when it holds ``` anywhere or ~~~ at the start of a
 *    line; such replies are never touched.
 */
#include "proxy/repair.h"

#include "talk/langs.h"

#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- tool names and language tags ------------------------------------------ */

bool repair_tool_matches(const char *names, const char *tool)
{
    if (!names || !tool || !*tool)
        return false;
    size_t tl = strlen(tool);
    const char *n = names;
    while (*n) {
        while (*n == ',' || isspace((unsigned char)*n))
            n++;
        size_t nl = strcspn(n, ",");
        size_t end = nl;
        while (end && isspace((unsigned char)n[end - 1]))
            end--;
        if (end) {
            if (tl == end && memcmp(tool, n, end) == 0)
                return true;
            /* name + "_mcp_" + a server name */
            if (tl > end + 5 && memcmp(tool, n, end) == 0 && memcmp(tool + end, "_mcp_", 5) == 0)
                return true;
        }
        n += nl;
    }
    return false;
}

void repair_lang_tag(const char *language, char *out, size_t outlen)
{
    if (!outlen)
        return;
    out[0] = '\0';
    if (!language)
        return;
    size_t n;
    if (!langs_trim(language, &language, &n) || n >= outlen)
        return;
    /* The judge's names (talk/langs.c): "c++" fences as run_code's "cpp". */
    const lang_name_t *ln = langs_find(language);
    if (ln) {
        snprintf(out, outlen, "%s", ln->tag);
        return;
    }
    /* Unknown: keep a tidy name (letters, digits, + # . -), lower-cased. */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)language[i];
        if (!isalnum(c) && c != '+' && c != '#' && c != '.' && c != '-' && c != '_') {
            out[0] = '\0';
            return;
        }
        out[i] = (char)tolower(c);
    }
    out[n] = '\0';
}

static const struct {
    const char *ext, *tag;
} repair_exts[] = {
    { "c", "c" },
    { "h", "c" },
    { "cpp", "cpp" },
    { "cc", "cpp" },
    { "cxx", "cpp" },
    { "c++", "cpp" },
    { "hpp", "cpp" },
    { "hh", "cpp" },
    { "py", "python" },
    { "js", "javascript" },
    { "mjs", "javascript" },
    { "cjs", "javascript" },
    { "ts", "typescript" },
    { "sh", "bash" },
    { "bash", "bash" },
    { "rs", "rust" },
    { "go", "go" },
    { "java", "java" },
    { "kt", "kotlin" },
    { "kts", "kotlin" },
    { "cs", "csharp" },
    { "hs", "haskell" },
    { "lua", "lua" },
    { "rb", "ruby" },
    { "pl", "perl" },
    { "php", "php" },
    { "swift", "swift" },
    { "scala", "scala" },
    { "r", "r" },
    { "jl", "julia" },
    { "ml", "ocaml" },
    { "ex", "elixir" },
    { "exs", "elixir" },
    { "erl", "erlang" },
    { "clj", "clojure" },
    { "dart", "dart" },
    { "zig", "zig" },
    { "nim", "nim" },
    { "f90", "fortran" },
    { "pas", "pascal" },
    { "awk", "awk" },
    { "tcl", "tcl" },
    { "scm", "scheme" },
    { "cob", "cobol" },
};

static const char *repair_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char *repair_ext_tag(const char *path)
{
    if (!path)
        return NULL;
    const char *base = repair_basename(path);
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || !dot[1])
        return NULL;
    for (size_t i = 0; i < sizeof repair_exts / sizeof repair_exts[0]; i++)
        if (strcasecmp(repair_exts[i].ext, dot + 1) == 0)
            return repair_exts[i].tag;
    return NULL;
}

/* Tag from a "#!" line: "#!/usr/bin/env python3" -> "python". */
static void repair_shebang_tag(const char *content, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t ll = strcspn(content, "\n");
    char line[128];
    if (ll < 3 || ll >= sizeof line)
        return;
    memcpy(line, content + 2, ll - 2);
    line[ll - 2] = '\0';
    /* the interpreter: the last word that is not an option */
    char *word = NULL;
    for (char *tok = strtok(line, " \t\r"); tok; tok = strtok(NULL, " \t\r"))
        if (tok[0] != '-')
            word = tok;
    if (word)
        repair_lang_tag(repair_basename(word), out, outlen);
}

/* ---- fences ------------------------------------------------------------------- */

bool repair_has_fence(const char *text, size_t len)
{
    bool line_start = true;
    int spaces = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '`' && i + 2 < len && text[i + 1] == '`' && text[i + 2] == '`')
            return true;
        if (c == '~' && line_start && spaces <= 3 && i + 2 < len && text[i + 1] == '~' &&
            text[i + 2] == '~')
            return true;
        if (c == '\n') {
            line_start = true;
            spaces = 0;
        } else if (c == ' ' && line_start) {
            spaces++;
        } else {
            line_start = false;
        }
    }
    return false;
}

/* ---- finding the turn's programs ----------------------------------------------- */

typedef struct {
    char *path; /* as the sandbox sees it: relative paths are under /work */
    char *content;
    char tag[24];
} repair_file_t;

typedef struct {
    repair_file_t *v;
    size_t n, cap;
} repair_files_t;

typedef struct {
    repair_program_t pass; /* last that passed (code == NULL: none) */
    repair_program_t last; /* last that ran */
} repair_pick_t;

void repair_program_free(repair_program_t *p)
{
    if (!p)
        return;
    free(p->tag);
    free(p->code);
    free(p->path);
    free(p->command);
    memset(p, 0, sizeof *p);
}

static int repair_program_set(repair_program_t *p, repair_verdict_t v, const char *tag,
                              const char *code, const char *path, const char *command)
{
    repair_program_t n = { .verdict = v };
    n.tag = strdup(tag ? tag : "");
    n.code = strdup(code);
    n.path = path ? strdup(path) : NULL;
    n.command = command ? strdup(command) : NULL;
    if (!n.tag || !n.code || (path && !n.path) || (command && !n.command)) {
        repair_program_free(&n);
        return -1;
    }
    repair_program_free(p);
    *p = n;
    return 0;
}

static int repair_note(repair_pick_t *pick, repair_verdict_t v, const char *tag, const char *code,
                       const char *path, const char *command)
{
    if (v == REPAIR_NOT_RUN)
        return 0;
    if (v == REPAIR_PASS && repair_program_set(&pick->pass, v, tag, code, path, command))
        return -1;
    return repair_program_set(&pick->last, v, tag, code, path, command);
}

/* The text of a tool message: a string, or an array of {type:"text", text}. */
static char *repair_tool_text(json_t *content)
{
    if (json_is_string(content))
        return strdup(json_string_value(content));
    textbuf_t t;
    textbuf_init(&t);
    size_t i;
    json_t *part;
    if (json_is_array(content))
        json_array_foreach(content, i, part)
        {
            const char *s = json_string_value(json_object_get(part, "text"));
            if (s) {
                if (t.len)
                    textbuf_puts(&t, "\n");
                textbuf_puts(&t, s);
            }
        }
    if (t.oom) {
        textbuf_free(&t);
        return NULL;
    }
    return textbuf_take(&t, NULL);
}

/* Arguments come as a JSON string (OpenAI) or, from some clients, as an
 * object.  Returns a new reference or NULL. */
static json_t *repair_call_args(json_t *fn)
{
    json_t *a = json_object_get(fn, "arguments");
    if (json_is_object(a))
        return json_incref(a);
    if (!json_is_string(a))
        return NULL;
    json_t *o = json_loadb(json_string_value(a), json_string_length(a), 0, NULL);
    if (o && !json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void repair_files_free(repair_files_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].path);
        free(f->v[i].content);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

/* Remember a write; a rewrite of the same path moves it to the end. */
static int repair_files_put(repair_files_t *f, const char *path, const char *content)
{
    char *abs = NULL;
    if (path[0] == '/')
        abs = strdup(path);
    else if (asprintf(&abs, "/work/%s", path[0] == '.' && path[1] == '/' ? path + 2 : path) < 0)
        abs = NULL;
    char *body = strdup(content);
    if (!abs || !body) {
        free(abs);
        free(body);
        return -1;
    }
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].path, abs) == 0) {
            free(f->v[i].path);
            free(f->v[i].content);
            memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof f->v[0]);
            f->n--;
            break;
        }
    if (f->n == f->cap) {
        size_t ncap = f->cap ? f->cap * 2 : 8;
        repair_file_t *nv = realloc(f->v, ncap * sizeof *nv);
        if (!nv) {
            free(abs);
            free(body);
            return -1;
        }
        f->v = nv;
        f->cap = ncap;
    }
    repair_file_t *e = &f->v[f->n++];
    e->path = abs;
    e->content = body;
    const char *tag = repair_ext_tag(abs);
    if (tag)
        snprintf(e->tag, sizeof e->tag, "%s", tag);
    else if (strncmp(body, "#!", 2) == 0)
        repair_shebang_tag(body, e->tag, sizeof e->tag);
    else
        e->tag[0] = '\0';
    return 0;
}

static bool repair_file_is_program(const repair_file_t *e)
{
    return repair_ext_tag(e->path) != NULL || strncmp(e->content, "#!", 2) == 0;
}

static bool repair_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

bool repair_command_names(const char *command, const char *base)
{
    size_t bl = strlen(base);
    if (!bl)
        return false;
    for (const char *p = strstr(command, base); p; p = strstr(p + 1, base)) {
        bool before_ok = p == command || !repair_word_char(p[-1]);
        char after = p[bl];
        bool after_ok = !after || !repair_word_char(after) ||
                        (after == '.' && !isalnum((unsigned char)p[bl + 1]));
        if (before_ok && after_ok)
            return true;
    }
    return false;
}

static int repair_take_result(const repair_tools_t *tools, const char *name, json_t *args,
                              const char *text, repair_files_t *files, repair_pick_t *pick)
{
    if (repair_tool_matches(tools->run_code, name)) {
        const char *code = json_string_value(json_object_get(args, "code"));
        if (!code || !*code)
            return 0;
        char tag[24];
        repair_lang_tag(json_string_value(json_object_get(args, "language")), tag, sizeof tag);
        /* Without an expected output the judge never says PASS. */
        const json_t *tests = json_object_get(args, "tests");
        bool compared = json_is_string(json_object_get(args, "expected")) ||
                        (json_is_array(tests) && json_array_size(tests) > 0);
        return repair_note(pick, repair_code_verdict(text, compared), tag, code, NULL, NULL);
    }
    if (repair_tool_matches(tools->write_file, name)) {
        const char *path = json_string_value(json_object_get(args, "path"));
        const char *content = json_string_value(json_object_get(args, "content"));
        if (!path || !*path || !content)
            return 0;
        if (strstr(text, "Nothing was written") || repair_nothing_ran(text))
            return 0;
        return repair_files_put(files, path, content);
    }
    if (repair_tool_matches(tools->run, name)) {
        const char *command = json_string_value(json_object_get(args, "command"));
        if (!command || !*command)
            return 0;
        repair_verdict_t v = repair_run_verdict(text);
        const repair_file_t *hit = NULL;
        for (size_t i = 0; i < files->n; i++)
            if (repair_file_is_program(&files->v[i]) &&
                repair_command_names(command, repair_basename(files->v[i].path)))
                hit = &files->v[i];
        if (hit)
            return repair_note(pick, v, hit->tag, hit->content, hit->path, command);
    }
    return 0;
}

typedef struct {
    const char *id, *name;
    json_t *args; /* borrowed from the request (or a parsed string, owned) */
    bool owned;
} repair_call_t;

/* The program the model last tested, from a chat request (repair.h).  It
 * is long because it walks the messages after the user's last one once,
 * collecting the assistant's tool calls and matching each tool result to
 * its call in the same pass; that state (the calls, the files written,
 * the pick) is local to the pass. */
int repair_find(const char *body, size_t len, const repair_tools_t *tools, repair_program_t *out)
{
    memset(out, 0, sizeof *out);
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_array(msgs)) {
        json_decref(root);
        return -1;
    }
    size_t n = json_array_size(msgs), start = 0;
    for (size_t i = 0; i < n; i++) {
        const char *role = json_string_value(json_object_get(json_array_get(msgs, i), "role"));
        if (role && strcmp(role, "user") == 0)
            start = i + 1;
    }

    repair_call_t *calls = NULL;
    size_t ncalls = 0, capcalls = 0;
    repair_files_t files = { 0 };
    repair_pick_t pick;
    memset(&pick, 0, sizeof pick);
    int rc = 0;

    for (size_t i = start; i < n && rc == 0; i++) {
        json_t *m = json_array_get(msgs, i);
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!role)
            continue;
        if (strcmp(role, "assistant") == 0) {
            json_t *tcs = json_object_get(m, "tool_calls"), *tc;
            size_t j;
            json_array_foreach(tcs, j, tc)
            {
                json_t *fn = json_object_get(tc, "function");
                const char *id = json_string_value(json_object_get(tc, "id"));
                const char *name = json_string_value(json_object_get(fn, "name"));
                if (!id || !name)
                    continue;
                if (ncalls == capcalls) {
                    size_t ncap = capcalls ? capcalls * 2 : 8;
                    repair_call_t *nc = realloc(calls, ncap * sizeof *nc);
                    if (!nc) {
                        rc = -1;
                        break;
                    }
                    calls = nc;
                    capcalls = ncap;
                }
                json_t *args = repair_call_args(fn);
                calls[ncalls++] =
                    (repair_call_t){ .id = id, .name = name, .args = args, .owned = args != NULL };
            }
        } else if (strcmp(role, "tool") == 0) {
            const char *id = json_string_value(json_object_get(m, "tool_call_id"));
            repair_call_t *c = NULL;
            for (size_t j = 0; id && j < ncalls; j++)
                if (strcmp(calls[j].id, id) == 0)
                    c = &calls[j];
            if (!c || !c->args)
                continue;
            char *text = repair_tool_text(json_object_get(m, "content"));
            if (!text) {
                rc = -1;
                break;
            }
            if (repair_take_result(tools, c->name, c->args, text, &files, &pick))
                rc = -1;
            free(text);
            /* a result counts once */
            json_decref(c->args);
            c->args = NULL;
        }
    }

    for (size_t j = 0; j < ncalls; j++)
        if (calls[j].owned)
            json_decref(calls[j].args);
    free(calls);
    repair_files_free(&files);
    json_decref(root);

    if (rc == 0 && (pick.pass.code || pick.last.code)) {
        if (pick.pass.code) {
            *out = pick.pass;
            repair_program_free(&pick.last);
        } else {
            *out = pick.last;
        }
        return 1;
    }
    repair_program_free(&pick.pass);
    repair_program_free(&pick.last);
    return rc;
}

/* ---- the appended block ----------------------------------------------------------- */

/* A code span for a label, or NULL when the text cannot sit in one. */
static bool repair_span_ok(const char *s)
{
    return s && *s && strlen(s) <= 160 && !strchr(s, '`') && !strchr(s, '\n') && !strchr(s, '\r');
}

char *repair_render(const repair_program_t *p, const char *reply, size_t reply_len)
{
    textbuf_t t;
    textbuf_init(&t);

    bool blank = true;
    for (size_t i = 0; i < reply_len && blank; i++)
        blank = isspace((unsigned char)reply[i]) != 0;
    if (!blank) {
        if (reply[reply_len - 1] != '\n')
            textbuf_puts(&t, "\n\n");
        else if (reply_len < 2 || reply[reply_len - 2] != '\n')
            textbuf_puts(&t, "\n");
    }

    if (p->path) {
        textbuf_puts(&t, "**The last program that ran");
        if (repair_span_ok(p->path))
            textbuf_printf(&t, ", `%s`", p->path);
        textbuf_puts(&t, " (");
        if (repair_span_ok(p->command))
            textbuf_printf(&t, "run with `%s`; ", p->command);
        textbuf_puts(&t, p->verdict == REPAIR_FAIL ? "it did not finish cleanly"
                                                   : "not tested against an expected output");
        textbuf_puts(&t, "):**\n\n");
    } else {
        switch (p->verdict) {
        case REPAIR_PASS: textbuf_puts(&t, "**The program that passed its test:**\n\n"); break;
        case REPAIR_FAIL:
            textbuf_puts(&t, "**The last program that ran (it did not pass its test):**\n\n");
            break;
        case REPAIR_COMPILE_ERROR:
            textbuf_puts(&t, "**The last program that was tried (it did not compile):**\n\n");
            break;
        default:
            textbuf_puts(&t, "**The last program that ran (it was not tested against an expected "
                             "output):**\n\n");
            break;
        }
    }

    /* The fence is longer than any run of backticks in the code. */
    size_t longest = 0, run = 0;
    for (const char *c = p->code; *c; c++) {
        run = *c == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    size_t flen = longest >= 3 ? longest + 1 : 3;
    char fence[64];
    if (flen >= sizeof fence)
        flen = sizeof fence - 1;
    memset(fence, '`', flen);
    fence[flen] = '\0';

    size_t cl = strlen(p->code);
    textbuf_printf(&t, "%s%s\n", fence, p->tag ? p->tag : "");
    textbuf_append(&t, p->code, cl);
    if (cl && p->code[cl - 1] != '\n')
        textbuf_puts(&t, "\n");
    textbuf_printf(&t, "%s\n", fence);
    if (t.oom) {
        textbuf_free(&t);
        return NULL;
    }
    return textbuf_take(&t, NULL);
}

/* ---- a whole JSON answer -------------------------------------------------------------- */

static bool repair_is_tool_finish(json_t *finish)
{
    const char *f = json_string_value(finish);
    return f && (strcmp(f, "tool_calls") == 0 || strcmp(f, "function_call") == 0);
}

static bool repair_has_calls(json_t *obj)
{
    json_t *tc = json_object_get(obj, "tool_calls");
    if (json_is_array(tc) ? json_array_size(tc) > 0 : (tc && !json_is_null(tc)))
        return true;
    json_t *fc = json_object_get(obj, "function_call");
    return fc && !json_is_null(fc);
}

int repair_json(const char *body, size_t len, const repair_program_t *p, char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!p || !p->code)
        return 0;
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    json_t *msg = json_object_get(choice, "message");
    json_t *content = json_object_get(msg, "content");
    int rc = 0;
    if (!json_is_object(root) || json_object_get(root, "error") || !json_is_object(msg) ||
        repair_has_calls(msg) || repair_is_tool_finish(json_object_get(choice, "finish_reason")) ||
        !(json_is_string(content) || json_is_null(content) || !content))
        goto out;
    const char *text = json_is_string(content) ? json_string_value(content) : "";
    size_t tl = json_is_string(content) ? json_string_length(content) : 0;
    if (repair_has_fence(text, tl))
        goto out;
    char *add = repair_render(p, text, tl);
    if (!add)
        goto out;
    size_t al = strlen(add);
    char *joined = malloc(tl + al + 1);
    if (!joined) {
        free(add);
        goto out;
    }
    memcpy(joined, text, tl);
    memcpy(joined + tl, add, al + 1);
    free(add);
    if (json_object_set_new(msg, "content", json_stringn(joined, tl + al)) == 0) {
        *out = json_dumps(root, JSON_COMPACT);
        if (*out) {
            *outlen = strlen(*out);
            rc = 1;
        }
    }
    free(joined);
out:
    json_decref(root);
    return rc;
}

/* ---- the SSE filter ------------------------------------------------------------------- */

struct repair_sse {
    const repair_program_t *p; /* borrowed; NULL: pass everything */
    textbuf_t pending;         /* bytes of an event not yet complete */
    size_t line_start;         /* where the unfinished line in pending starts */
    textbuf_t content;         /* choice 0's content so far */
    json_t *meta;              /* id, object, created, model, ... of the last chunk */
    const char *eol;           /* the upstream's line ending */
    bool off;                  /* decided: pass the rest through as it is */
    bool repaired;
};

repair_sse_t *repair_sse_new(const repair_program_t *p)
{
    repair_sse_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = p && p->code ? p : NULL;
    s->off = s->p == NULL;
    s->eol = "\n";
    textbuf_init(&s->pending);
    textbuf_init(&s->content);
    return s;
}

void repair_sse_free(repair_sse_t **sp)
{
    if (!sp || !*sp)
        return;
    repair_sse_t *s = *sp;
    textbuf_free(&s->pending);
    textbuf_free(&s->content);
    json_decref(s->meta);
    free(s);
    *sp = NULL;
}

bool repair_sse_repaired(const repair_sse_t *s)
{
    return s && s->repaired;
}

static void repair_sse_emit_json(repair_sse_t *s, json_t *chunk, textbuf_t *out)
{
    char *js = json_dumps(chunk, JSON_COMPACT);
    if (!js)
        return;
    textbuf_puts(out, "data: ");
    textbuf_puts(out, js);
    textbuf_puts(out, s->eol);
    textbuf_puts(out, s->eol);
    free(js);
}

/* The extra content chunk, with the upstream's id, model and created. */
static void repair_sse_emit_block(repair_sse_t *s, textbuf_t *out)
{
    char *add = repair_render(s->p, s->content.buf ? s->content.buf : "", s->content.len);
    if (!add)
        return;
    json_t *chunk = s->meta ? json_deep_copy(s->meta) : json_object();
    json_t *choice =
        json_pack("{s:i, s:{s:s}, s:n}", "index", 0, "delta", "content", add, "finish_reason");
    if (chunk && choice) {
        if (!json_object_get(chunk, "object"))
            json_object_set_new(chunk, "object", json_string("chat.completion.chunk"));
        json_object_set_new(chunk, "choices", json_pack("[o]", choice));
        choice = NULL;
        repair_sse_emit_json(s, chunk, out);
        s->repaired = true;
    }
    json_decref(choice);
    json_decref(chunk);
    free(add);
}

static void repair_sse_keep_meta(repair_sse_t *s, json_t *chunk)
{
    static const char *const keys[] = { "id", "object", "created", "model", "system_fingerprint" };
    json_t *meta = json_object();
    if (!meta)
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(chunk, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(meta, keys[i], v);
    }
    json_decref(s->meta);
    s->meta = meta;
}

static json_t *repair_sse_choice0(json_t *chunk)
{
    json_t *choices = json_object_get(chunk, "choices"), *c;
    size_t i;
    json_array_foreach(choices, i, c)
    {
        json_t *idx = json_object_get(c, "index");
        if (!idx || json_integer_value(idx) == 0)
            return c;
    }
    return NULL;
}

/* Insert before a finish chunk that itself carries content: that content
 * must stay before the block, so the chunk goes out in two halves. */
static void repair_sse_split_finish(repair_sse_t *s, json_t *chunk, json_t *choice, textbuf_t *out)
{
    json_t *finish = json_incref(json_object_get(choice, "finish_reason"));
    json_t *usage = json_incref(json_object_get(chunk, "usage"));
    json_object_set_new(choice, "finish_reason", json_null());
    json_object_del(chunk, "usage");
    repair_sse_emit_json(s, chunk, out);
    repair_sse_emit_block(s, out);
    json_object_set_new(choice, "delta", json_object());
    json_object_set_new(choice, "finish_reason", finish);
    if (usage)
        json_object_set_new(chunk, "usage", usage);
    repair_sse_emit_json(s, chunk, out);
}

/* One complete event (ev, n bytes, ending in its blank line).  It is long
 * because it is one state machine step over the event's lines (data,
 * [DONE], a chunk with content, a chunk with the finish) with the stream's
 * state kept in s; each branch is a few lines. */
static void repair_sse_event(repair_sse_t *s, const char *ev, size_t n, textbuf_t *out)
{
    if (s->off) {
        textbuf_append(out, ev, n);
        return;
    }
    textbuf_t data;
    textbuf_init(&data);
    bool has_data = false;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(ev + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - ev) : n;
        size_t ll = end - i;
        if (ll && ev[i + ll - 1] == '\r') {
            ll--;
            s->eol = "\r\n";
        }
        if (ll >= 5 && memcmp(ev + i, "data:", 5) == 0) {
            const char *v = ev + i + 5;
            size_t vl = ll - 5;
            if (vl && *v == ' ') {
                v++;
                vl--;
            }
            if (has_data)
                textbuf_puts(&data, "\n");
            textbuf_append(&data, v, vl);
            has_data = true;
        }
        i = end + 1;
    }
    if (!has_data || data.oom) {
        textbuf_free(&data);
        textbuf_append(out, ev, n);
        return;
    }
    if (strcmp(data.buf, "[DONE]") == 0) {
        /* No chunk carried finish_reason: the block goes before [DONE]. */
        if (!repair_has_fence(s->content.buf ? s->content.buf : "", s->content.len))
            repair_sse_emit_block(s, out);
        s->off = true;
        textbuf_free(&data);
        textbuf_append(out, ev, n);
        return;
    }
    json_t *chunk = json_loadb(data.buf, data.len, 0, NULL);
    textbuf_free(&data);
    if (!json_is_object(chunk) || json_object_get(chunk, "error")) {
        s->off = true; /* unreadable or an error: not ours to change */
        json_decref(chunk);
        textbuf_append(out, ev, n);
        return;
    }
    if (json_object_get(chunk, "choices"))
        repair_sse_keep_meta(s, chunk);
    json_t *choice = repair_sse_choice0(chunk);
    json_t *delta = json_object_get(choice, "delta");
    json_t *finish = json_object_get(choice, "finish_reason");
    if (repair_has_calls(delta) || repair_has_calls(json_object_get(choice, "message")) ||
        repair_is_tool_finish(finish)) {
        s->off = true;
        json_decref(chunk);
        textbuf_append(out, ev, n);
        return;
    }
    json_t *content = json_object_get(delta, "content");
    size_t added = json_is_string(content) ? json_string_length(content) : 0;
    if (added) {
        size_t old = s->content.len;
        textbuf_append(&s->content, json_string_value(content), added);
        /* Look again only at the new text and the line it continues. */
        size_t from = old > 3 ? old - 3 : 0;
        while (from > 0 && s->content.buf[from - 1] != '\n')
            from--;
        if (s->content.oom || repair_has_fence(s->content.buf + from, s->content.len - from)) {
            s->off = true;
            json_decref(chunk);
            textbuf_append(out, ev, n);
            return;
        }
    }
    if (json_is_string(finish)) {
        if (added)
            repair_sse_split_finish(s, chunk, choice, out);
        else {
            repair_sse_emit_block(s, out);
            textbuf_append(out, ev, n);
        }
        s->off = true;
        json_decref(chunk);
        return;
    }
    json_decref(chunk);
    textbuf_append(out, ev, n);
}

void repair_sse_feed(repair_sse_t *s, const char *data, size_t len, textbuf_t *out)
{
    if (s->off && s->pending.len == 0) {
        textbuf_append(out, data, len);
        return;
    }
    textbuf_append(&s->pending, data, len);
    size_t consumed = 0;
    size_t pos = s->line_start;
    for (;;) {
        char *pl = s->pending.buf;
        const char *nl = memchr(pl + pos, '\n', s->pending.len - pos);
        if (!nl)
            break;
        size_t line_end = (size_t)(nl - pl) + 1;
        size_t ll = line_end - pos - 1;
        bool empty = ll == 0 || (ll == 1 && pl[pos] == '\r');
        pos = line_end;
        if (empty) {
            repair_sse_event(s, pl + consumed, pos - consumed, out);
            consumed = pos;
        }
    }
    if (consumed) {
        memmove(s->pending.buf, s->pending.buf + consumed, s->pending.len - consumed);
        s->pending.len -= consumed;
        s->pending.buf[s->pending.len] = '\0';
    }
    s->line_start = pos - consumed;
    if (s->off && s->pending.len) {
        /* Nothing left to decide: the rest goes out as it comes. */
        textbuf_append(out, s->pending.buf, s->pending.len);
        s->pending.len = 0;
        s->pending.buf[0] = '\0';
        s->line_start = 0;
    }
}

void repair_sse_end(repair_sse_t *s, textbuf_t *out)
{
    if (s->pending.len)
        textbuf_append(out, s->pending.buf, s->pending.len);
    s->pending.len = 0;
    s->line_start = 0;
    s->off = true;
}
