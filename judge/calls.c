/* calls.c -- the judge's requests to the sandbox manager (see calls.h). */
#include "judge/calls.h"

#include <inttypes.h>

#include "proto/ops.h"
#include "talk/texts.h"

/* A request to the sandbox manager for the conversation of req. */
static proto_msg_t *judge_request(const proto_msg_t *req, const char *op, int64_t deadline_ms)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    if (!m)
        return NULL;
    if (proto_msg_set_kind(m, KIND_SANDBOX) || proto_msg_set_name(m, op) ||
        proto_msg_set_conv(m, req->conv) || proto_msg_set_user(m, req->user ? req->user : "")) {
        proto_msg_destroy(&m);
        return NULL;
    }
    m->deadline_ms = deadline_ms;
    return m;
}

/* put path content: one file, folders made as needed. */
proto_msg_t *judge_put(worker_job_t *job, const char *path, const char *content, size_t len)
{
    proto_msg_t *m = judge_request(job->req, OP_PUT, proto_now_ms() + 60000);
    if (!m || proto_map_set_cstr(&m->args, ARG_PATH, path) ||
        proto_map_set_str(&m->args, ARG_CONTENT, content, len)) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return worker_call(job->worker, m, job);
}

/* exec command: its own timeout, plus call_grace for the round trip;
 * program: it runs the model's program (ARG_PROGRAM). */
static proto_msg_t *judge_exec_as(worker_job_t *job, const judge_opts_t *o, const char *command,
                                  int timeout_s, bool separate_stderr, int64_t output_limit,
                                  bool program)
{
    int64_t grace = o->call_grace * 1000;
    proto_msg_t *m = judge_request(job->req, OP_EXEC, proto_now_ms() + timeout_s * 1000LL + grace);
    if (!m || proto_map_set_cstr(&m->args, ARG_COMMAND, command) ||
        proto_map_set_int(&m->args, ARG_TIMEOUT, timeout_s) ||
        (separate_stderr && proto_map_set_bool(&m->args, ARG_SEPARATE_STDERR, true)) ||
        (output_limit > 0 && proto_map_set_int(&m->args, ARG_OUTPUT_LIMIT, output_limit)) ||
        (program && proto_map_set_int(&m->args, ARG_PROGRAM, (int64_t)job->req->id))) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return worker_call(job->worker, m, job);
}

proto_msg_t *judge_exec(worker_job_t *job, const judge_opts_t *o, const char *command,
                        int timeout_s, bool separate_stderr, int64_t output_limit)
{
    return judge_exec_as(job, o, command, timeout_s, separate_stderr, output_limit, false);
}

proto_msg_t *judge_exec_program(worker_job_t *job, const judge_opts_t *o, const char *command,
                                int timeout_s, bool separate_stderr, int64_t output_limit)
{
    return judge_exec_as(job, o, command, timeout_s, separate_stderr, output_limit, true);
}

/* A reply that is not a usable result of the sandbox manager: its text
 * already says what happened and what to do. */
bool judge_failed(const proto_msg_t *r)
{
    return !r || r->status != PROTO_ST_OK ||
           (r->is_error && !proto_map_has(&r->data, DATA_EXIT_CODE, PROTO_V_INT));
}

/* The model's text for a failed call, by status: a call before the
 * program's run (the file, the input, the compile). */
void judge_failure_text(const proto_msg_t *r, textbuf_t *t)
{
    if (!r)
        textbuf_puts(t, TX_JG_NO_MEMORY_SAY);
    else if (r->status == PROTO_ST_NO_WORKER)
        textbuf_puts(t, TX_JG_MANAGER_DOWN);
    else if (r->status == PROTO_ST_WORKER_LOST)
        textbuf_puts(t, TX_JG_MANAGER_LOST_BEFORE);
    else if (r->status == PROTO_ST_DEADLINE)
        textbuf_puts(t, TX_JG_SANDBOX_SLOW_BEFORE);
    else if (r->text)
        textbuf_append(t, r->text, r->text_len);
}

void judge_program_failure_text(const proto_msg_t *r, textbuf_t *t)
{
    if (r && r->status == PROTO_ST_WORKER_LOST)
        textbuf_puts(t, TX_JG_MANAGER_LOST_RUNNING);
    else if (r && r->status == PROTO_ST_DEADLINE)
        textbuf_puts(t, TX_JG_SANDBOX_SLOW_RUNNING);
    else
        judge_failure_text(r, t);
}

/* The "woke up your sandbox" notice is said once per call. */
void judge_take_notice(textbuf_t *t, const proto_msg_t *r, bool *noticed)
{
    size_t nl;
    const char *n = r ? proto_map_str(&r->data, DATA_NOTICE, &nl) : NULL;
    if (n && nl && !*noticed) {
        textbuf_append(t, n, nl);
        *noticed = true;
    }
}

void judge_say_memory(textbuf_t *t, const ops_exec_t *x, int64_t memory)
{
    if (x->memory && x->memory_len)
        textbuf_append(t, x->memory, x->memory_len);
    else
        textbuf_printf(t, "%" PRId64 " MiB of memory", memory >> 20);
}
