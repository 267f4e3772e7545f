/* ops.c -- the helpers of ops.h: an exec reply's data read once, so that
 * every reader of that reply (the judge's build, runs, history and
 * notices) agrees on the names and the defaults.  Pure; depends on
 * proto.c only. */
#include "proto/ops.h"

#include <string.h>

/* Each key with the default its readers always used (ops.h). */
void ops_exec_read(const proto_msg_t *r, ops_exec_t *x)
{
    static const proto_map_t none = { 0 };
    const proto_map_t *d = r ? &r->data : &none;
    memset(x, 0, sizeof *x);
    x->has_exit_code = proto_map_has(d, DATA_EXIT_CODE, PROTO_V_INT);
    x->exit_code = proto_map_int(d, DATA_EXIT_CODE, -1);
    x->timed_out = proto_map_int(d, DATA_TIMED_OUT, 0) != 0;
    x->cancelled = proto_map_int(d, DATA_CANCELLED, 0) != 0;
    x->output_limited = proto_map_int(d, DATA_OUTPUT_LIMITED, 0) != 0;
    x->cut = proto_map_int(d, DATA_CUT, 0);
    x->elapsed_ms = proto_map_int(d, DATA_ELAPSED_MS, -1);
    x->cpu_ms = proto_map_int(d, DATA_CPU_MS, -1);
    x->max_rss_kb = proto_map_int(d, DATA_MAX_RSS_KB, -1);
    x->output = proto_map_str(d, DATA_OUTPUT, &x->output_len);
    x->err = proto_map_str(d, DATA_STDERR, &x->err_len);
    x->notice = proto_map_str(d, DATA_NOTICE, &x->notice_len);
    x->memory = proto_map_str(d, DATA_MEMORY, &x->memory_len);
    x->images = proto_map_str(d, DATA_IMAGES, &x->images_len);
}
