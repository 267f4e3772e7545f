/* record.c -- append-only recordings of queued requests and replies (see
 * record.h).  Each event is written with one fwrite and flushed, so a
 * recording read after a crash holds every event but maybe a torn last
 * one, which record_read skips.
 */
#include "hub/record.h"

#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct record {
    FILE *f;
};

record_t *record_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    record_t *r = calloc(1, sizeof *r);
    if (!r || !(r->f = fdopen(fd, "a"))) {
        close(fd);
        free(r);
        return NULL;
    }
    return r;
}

int record_write(record_t *r, const char *dir, const proto_msg_t *m)
{
    char *frame;
    size_t flen;
    if (proto_encode(m, &frame, &flen) != PROTO_OK)
        return -1;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_int64(&pk, proto_now_ms());
    msgpack_pack_str(&pk, strlen(dir));
    msgpack_pack_str_body(&pk, dir, strlen(dir));
    msgpack_pack_bin(&pk, flen);
    msgpack_pack_bin_body(&pk, frame, flen);
    free(frame);
    int rc = (sb.data && fwrite(sb.data, 1, sb.size, r->f) == sb.size && fflush(r->f) == 0) ? 0
                                                                                            : -1;
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

void record_close(record_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fclose((*self_p)->f);
    free(*self_p);
    *self_p = NULL;
}

int record_read(const char *path, record_fn fn, void *ctx)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    msgpack_unpacker up;
    if (!msgpack_unpacker_init(&up, 1 << 16)) {
        fclose(f);
        return -1;
    }
    msgpack_unpacked ev;
    msgpack_unpacked_init(&ev);
    int count = 0, rc = 0;
    for (;;) {
        if (msgpack_unpacker_buffer_capacity(&up) < 4096 &&
            !msgpack_unpacker_reserve_buffer(&up, 1 << 16)) {
            rc = -1;
            break;
        }
        size_t n = fread(msgpack_unpacker_buffer(&up), 1, msgpack_unpacker_buffer_capacity(&up), f);
        if (n == 0)
            break;
        msgpack_unpacker_buffer_consumed(&up, n);
        msgpack_unpack_return ur;
        while ((ur = msgpack_unpacker_next(&up, &ev)) == MSGPACK_UNPACK_SUCCESS) {
            const msgpack_object *o = &ev.data;
            if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3 ||
                o->via.array.ptr[1].type != MSGPACK_OBJECT_STR ||
                o->via.array.ptr[2].type != MSGPACK_OBJECT_BIN) {
                rc = -1;
                goto out;
            }
            const msgpack_object *a = o->via.array.ptr;
            int64_t ts = a[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER ? (int64_t)a[0].via.u64 : 0;
            char dir[8] = "";
            size_t dl = a[1].via.str.size < sizeof dir - 1 ? a[1].via.str.size : sizeof dir - 1;
            memcpy(dir, a[1].via.str.ptr, dl);
            proto_msg_t *m;
            if (proto_decode(a[2].via.bin.ptr, a[2].via.bin.size, &m) != PROTO_OK) {
                rc = -1;
                goto out;
            }
            count++;
            if (fn(ctx, ts, dir, m))
                goto out;
        }
        if (ur == MSGPACK_UNPACK_PARSE_ERROR || ur == MSGPACK_UNPACK_NOMEM_ERROR) {
            rc = -1;
            break;
        }
    }
out:
    msgpack_unpacked_destroy(&ev);
    msgpack_unpacker_destroy(&up);
    fclose(f);
    return rc ? -1 : count;
}
