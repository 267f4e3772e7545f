/* repair.h -- the reply repair of talkback-proxy, as pure functions.
 *
 * A chat-completions request already holds the whole turn: the messages
 * after the last `user` message are the model's tool calls (their
 * arguments carry the code) and the tool results (run_code's verdict).
 * From those, repair_find picks the program the reply should end with:
 * the last one that passed, or if none did, the last one that ran.
 *
 * When the model server's answer is a final reply (no tool calls) with no
 * fenced code block, the proxy appends that program, labelled, as a fenced
 * block: repair_json does it to a whole JSON answer, repair_sse_... to an
 * SSE stream as it passes by (every complete event goes out at once; the
 * extra content chunk goes just before the chunk carrying finish_reason,
 * or before [DONE] when no chunk carried one).  Anything these functions
 * cannot read is passed on unchanged and is never repaired.
 *
 * No I/O, no globals, no locks: unit-tested in tests/unit/test_repair.c.
 */
#ifndef TALKBACK_PROXY_REPAIR_H
#define TALKBACK_PROXY_REPAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "common/textbuf.h"

/* The tool names to look for.  Each is a comma-separated list; a tool
 * matches a name exactly or as name + "_mcp_" + server (LibreChat's way
 * of naming MCP tools, e.g. run_code_mcp_sandbox). */
typedef struct {
    const char *run_code;
    const char *write_file;
    const char *run;
} repair_tools_t;

typedef enum {
    REPAIR_PASS,          /* run_code said PASS */
    REPAIR_FAIL,          /* FAIL, CRASH, TIMEOUT or OUTPUT LIMIT */
    REPAIR_COMPILE_ERROR, /* it did not compile */
    REPAIR_RAN,           /* ran without an expected output: no verdict */
    REPAIR_NOT_RUN,       /* refused or failed before anything ran */
} repair_verdict_t;

/* The program a reply gets, owned by the struct (repair_program_free). */
typedef struct {
    repair_verdict_t verdict;
    char *tag; /* fence language tag, "" when unknown */
    char *code;
    char *path;    /* a written file that `run` executed; NULL for run_code */
    char *command; /* the `run` command that executed it; NULL for run_code */
} repair_program_t;

/* Does `tool` (as sent, e.g. "run_code_mcp_sandbox") match one of the
 * comma-separated `names`? */
bool repair_tool_matches(const char *names, const char *tool);

/* Fence tag of a run_code language ("c++" -> "cpp", "py" -> "python", ...);
 * an unknown but tidy name is lower-cased and kept, anything else is "".
 * Writes into out (at least 24 bytes). */
void repair_lang_tag(const char *language, char *out, size_t outlen);
/* Fence tag from a file name's extension ("x.py" -> "python"); NULL when
 * the extension names no programming language. */
const char *repair_ext_tag(const char *path);

/* Does the command name the file `base` as a whole word ("python3 x.py",
 * "./x.py", "bash /work/x.sh"), not as part of another name ("data.csv"
 * does not name "a.c")? */
bool repair_command_names(const char *command, const char *base);

/* Verdict of a run_code result text (proxy/verdict.c).  compared: the
 * call carried `expected` or a non-empty `tests`.  A PASS is only ever the
 * result's last line, and only for a call that compared: the judge writes
 * nothing after a PASS, writes a verdict after the program's output
 * whenever it compares, and never says PASS otherwise, so no output of the
 * program can pass for one.  Otherwise the last FAIL, CRASH, TIMEOUT,
 * OUTPUT LIMIT, cancelled or COMPILE ERROR line wins. */
repair_verdict_t repair_code_verdict(const char *text, bool compared);
/* Verdict of a `run` result: did the command finish cleanly? */
repair_verdict_t repair_run_verdict(const char *text);
/* Is this one of talkback's own "[talkback: ... nothing ran ...]" refusals? */
bool repair_nothing_ran(const char *text);

/* Does this Markdown text hold a fenced code block (``` anywhere, or ~~~
 * at the start of a line)? */
bool repair_has_fence(const char *text, size_t len);

/* Find the program this turn's reply should end with.  Returns 1 and fills
 * *out when there is one, 0 when the turn ran no program, -1 when the body
 * is not a chat-completions request this can read. */
int repair_find(const char *body, size_t len, const repair_tools_t *tools, repair_program_t *out);
void repair_program_free(repair_program_t *p);

/* The text appended to a reply whose content so far is `reply`: a blank
 * line when needed, the label, and the fenced program.  Caller frees. */
char *repair_render(const repair_program_t *p, const char *reply, size_t reply_len);

/* Non-streaming: repair a whole chat.completion JSON answer.  Returns 1 and
 * sets *out and *outlen (caller frees) when the answer was changed; 0 when it is
 * to go out untouched (has code, has tool calls, or is not readable). */
int repair_json(const char *body, size_t len, const repair_program_t *p, char **out,
                size_t *outlen);

/* Streaming: one filter per SSE answer.  feed() takes bytes as they come
 * and appends to `out` every complete event (and the extra chunk when its
 * place is reached); end() flushes what is left of an unfinished event. */
typedef struct repair_sse repair_sse_t;

repair_sse_t *repair_sse_new(const repair_program_t *p);
void repair_sse_feed(repair_sse_t *s, const char *data, size_t len, textbuf_t *out);
void repair_sse_end(repair_sse_t *s, textbuf_t *out);
/* Was the program appended? */
bool repair_sse_repaired(const repair_sse_t *s);
void repair_sse_free(repair_sse_t **s);

#endif
