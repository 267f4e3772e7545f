/* proto.c -- encode and decode the one wire contract (see proto.h).
 *
 * Encoding writes a msgpack map with only the keys a message uses.
 * Decoding unpacks with msgpack's zone allocator into a temporary object
 * tree, checks every type before it copies a value out, and copies into
 * the message's own memory, so no msgpack object outlives this file.  A
 * frame from another process is untrusted: sizes are bounded and every
 * unexpected shape is PROTO_EFORMAT, never a crash.
 */
#include "proto/proto.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *proto_strerror(proto_err_t err)
{
    switch (err) {
    case PROTO_OK: return "ok";
    case PROTO_ENOMEM: return "out of memory";
    case PROTO_ETOOBIG: return "frame too big";
    case PROTO_EFORMAT: return "malformed message";
    case PROTO_EVERSION: return "unsupported protocol version";
    case PROTO_ETYPE: return "unknown message type";
    }
    return "unknown error";
}

int64_t proto_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t proto_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- maps ------------------------------------------------------------- */

static char *dup_bytes(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

static proto_kv_t *map_slot(proto_map_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->kv[i].key, key) == 0) {
            free(m->kv[i].s);
            m->kv[i].s = NULL;
            m->kv[i].len = 0;
            m->kv[i].i = 0;
            return &m->kv[i];
        }
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 8;
        proto_kv_t *nkv = realloc(m->kv, ncap * sizeof *nkv);
        if (!nkv)
            return NULL;
        m->kv = nkv;
        m->cap = ncap;
    }
    proto_kv_t *kv = &m->kv[m->n];
    memset(kv, 0, sizeof *kv);
    kv->key = strdup(key);
    if (!kv->key)
        return NULL;
    m->n++;
    return kv;
}

int proto_map_set_str(proto_map_t *m, const char *key, const char *s, size_t len)
{
    char *copy = dup_bytes(s ? s : "", s ? len : 0);
    if (!copy)
        return -1;
    proto_kv_t *kv = map_slot(m, key);
    if (!kv) {
        free(copy);
        return -1;
    }
    kv->type = PROTO_V_STR;
    kv->s = copy;
    kv->len = s ? len : 0;
    return 0;
}

int proto_map_set_cstr(proto_map_t *m, const char *key, const char *s)
{
    return proto_map_set_str(m, key, s ? s : "", s ? strlen(s) : 0);
}

int proto_map_set_int(proto_map_t *m, const char *key, int64_t v)
{
    proto_kv_t *kv = map_slot(m, key);
    if (!kv)
        return -1;
    kv->type = PROTO_V_INT;
    kv->i = v;
    return 0;
}

int proto_map_set_bool(proto_map_t *m, const char *key, bool v)
{
    proto_kv_t *kv = map_slot(m, key);
    if (!kv)
        return -1;
    kv->type = PROTO_V_BOOL;
    kv->i = v ? 1 : 0;
    return 0;
}

const proto_kv_t *proto_map_get(const proto_map_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->kv[i].key, key) == 0)
            return &m->kv[i];
    return NULL;
}

const char *proto_map_str(const proto_map_t *m, const char *key, size_t *len)
{
    const proto_kv_t *kv = proto_map_get(m, key);
    if (!kv || kv->type != PROTO_V_STR)
        return NULL;
    if (len)
        *len = kv->len;
    return kv->s;
}

int64_t proto_map_int(const proto_map_t *m, const char *key, int64_t dflt)
{
    const proto_kv_t *kv = proto_map_get(m, key);
    if (!kv || (kv->type != PROTO_V_INT && kv->type != PROTO_V_BOOL))
        return dflt;
    return kv->i;
}

bool proto_map_has(const proto_map_t *m, const char *key, proto_vtype_t type)
{
    const proto_kv_t *kv = proto_map_get(m, key);
    return kv && kv->type == type;
}

void proto_map_clear(proto_map_t *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].s);
    }
    free(m->kv);
    memset(m, 0, sizeof *m);
}

int proto_map_copy(proto_map_t *dst, const proto_map_t *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const proto_kv_t *kv = &src->kv[i];
        int rc = 0;
        switch (kv->type) {
        case PROTO_V_STR: rc = proto_map_set_str(dst, kv->key, kv->s, kv->len); break;
        case PROTO_V_INT: rc = proto_map_set_int(dst, kv->key, kv->i); break;
        case PROTO_V_BOOL: rc = proto_map_set_bool(dst, kv->key, kv->i != 0); break;
        case PROTO_V_NIL: {
            proto_kv_t *slot = map_slot(dst, kv->key);
            if (!slot)
                rc = -1;
            else
                slot->type = PROTO_V_NIL;
            break;
        }
        }
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- messages ------------------------------------------------------------ */

proto_msg_t *proto_msg_new(proto_type_t type)
{
    proto_msg_t *m = calloc(1, sizeof *m);
    if (m)
        m->type = type;
    return m;
}

void proto_msg_destroy(proto_msg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    proto_msg_t *m = *self_p;
    free(m->kind);
    free(m->name);
    free(m->conv);
    free(m->user);
    free(m->host);
    free(m->text);
    proto_map_clear(&m->args);
    proto_map_clear(&m->data);
    for (size_t i = 0; i < m->n_images; i++) {
        free(m->images[i].path);
        free(m->images[i].mime);
        free(m->images[i].data);
    }
    free(m->images);
    free(m);
    *self_p = NULL;
}

static int set_field(char **field, const char *s)
{
    char *copy = NULL;
    if (s && !(copy = strdup(s)))
        return -1;
    free(*field);
    *field = copy;
    return 0;
}

int proto_msg_set_kind(proto_msg_t *m, const char *s)
{
    return set_field(&m->kind, s);
}
int proto_msg_set_name(proto_msg_t *m, const char *s)
{
    return set_field(&m->name, s);
}
int proto_msg_set_conv(proto_msg_t *m, const char *s)
{
    return set_field(&m->conv, s);
}
int proto_msg_set_user(proto_msg_t *m, const char *s)
{
    return set_field(&m->user, s);
}
int proto_msg_set_host(proto_msg_t *m, const char *s)
{
    return set_field(&m->host, s);
}

int proto_msg_set_text(proto_msg_t *m, const char *s, size_t len)
{
    char *copy = NULL;
    if (s && !(copy = dup_bytes(s, len)))
        return -1;
    free(m->text);
    m->text = copy;
    m->text_len = s ? len : 0;
    return 0;
}

int proto_msg_add_image(proto_msg_t *m, const char *path, const char *mime, const void *data,
                        size_t len)
{
    if (!path || !mime || (!data && len) || m->n_images >= PROTO_MAX_IMAGES)
        return -1;
    if (!m->images && !(m->images = calloc(PROTO_MAX_IMAGES, sizeof *m->images)))
        return -1;
    proto_image_t *im = &m->images[m->n_images];
    im->path = strdup(path);
    im->mime = strdup(mime);
    im->data = dup_bytes(data ? data : "", len);
    im->len = len;
    if (!im->path || !im->mime || !im->data) {
        free(im->path);
        free(im->mime);
        free(im->data);
        memset(im, 0, sizeof *im);
        return -1;
    }
    m->n_images++;
    return 0;
}

void proto_msg_take_images(proto_msg_t *dst, proto_msg_t *src)
{
    for (size_t i = 0; i < src->n_images; i++) {
        proto_image_t *im = &src->images[i];
        if (!dst->images && !(dst->images = calloc(PROTO_MAX_IMAGES, sizeof *dst->images)))
            break;
        if (dst->n_images >= PROTO_MAX_IMAGES)
            break;
        dst->images[dst->n_images++] = *im;
        memset(im, 0, sizeof *im);
    }
    for (size_t i = 0; i < src->n_images; i++) {
        free(src->images[i].path);
        free(src->images[i].mime);
        free(src->images[i].data);
    }
    free(src->images);
    src->images = NULL;
    src->n_images = 0;
}

proto_msg_t *proto_msg_dup(const proto_msg_t *src)
{
    proto_msg_t *m = proto_msg_new(src->type);
    if (!m)
        return NULL;
    m->id = src->id;
    m->deadline_ms = src->deadline_ms;
    m->status = src->status;
    m->is_error = src->is_error;
    if (proto_msg_set_kind(m, src->kind) || proto_msg_set_name(m, src->name) ||
        proto_msg_set_conv(m, src->conv) || proto_msg_set_user(m, src->user) ||
        proto_msg_set_host(m, src->host) || proto_msg_set_text(m, src->text, src->text_len) ||
        proto_map_copy(&m->args, &src->args) || proto_map_copy(&m->data, &src->data)) {
        proto_msg_destroy(&m);
        return NULL;
    }
    for (size_t i = 0; i < src->n_images; i++) {
        const proto_image_t *im = &src->images[i];
        if (proto_msg_add_image(m, im->path, im->mime, im->data, im->len) != 0) {
            proto_msg_destroy(&m);
            return NULL;
        }
    }
    return m;
}

proto_msg_t *proto_reply_new(const proto_msg_t *req, proto_status_t st, bool is_error,
                             const char *text)
{
    proto_msg_t *m = proto_msg_new(PROTO_REPLY);
    if (!m)
        return NULL;
    m->id = req ? req->id : 0;
    m->status = st;
    m->is_error = is_error;
    if (text && proto_msg_set_text(m, text, strlen(text))) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return m;
}

/* ---- encoding -------------------------------------------------------------- */

static void pack_key(msgpack_packer *pk, const char *key)
{
    size_t n = strlen(key);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, key, n);
}

static void pack_str(msgpack_packer *pk, const char *key, const char *s, size_t len)
{
    pack_key(pk, key);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, s, len);
}

static void pack_map(msgpack_packer *pk, const char *key, const proto_map_t *m)
{
    pack_key(pk, key);
    msgpack_pack_map(pk, m->n);
    for (size_t i = 0; i < m->n; i++) {
        const proto_kv_t *kv = &m->kv[i];
        size_t kn = strlen(kv->key);
        msgpack_pack_str(pk, kn);
        msgpack_pack_str_body(pk, kv->key, kn);
        switch (kv->type) {
        case PROTO_V_NIL: msgpack_pack_nil(pk); break;
        case PROTO_V_INT: msgpack_pack_int64(pk, kv->i); break;
        case PROTO_V_BOOL:
            if (kv->i)
                msgpack_pack_true(pk);
            else
                msgpack_pack_false(pk);
            break;
        case PROTO_V_STR:
            /* bin, not str: values are arbitrary bytes (program output,
             * file content) and need not be UTF-8. */
            msgpack_pack_bin(pk, kv->len);
            msgpack_pack_bin_body(pk, kv->s, kv->len);
            break;
        }
    }
}

/* One message as msgpack (proto.h).  It is long because it writes the
 * wire map's fields in their fixed order, one short block each, as the
 * decoder reads them; the order is the contract and reads best in one
 * place. */
proto_err_t proto_encode(const proto_msg_t *m, char **buf, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);

    size_t n = 3; /* v, t, id */
    if (m->kind)
        n++;
    if (m->name)
        n++;
    if (m->conv)
        n++;
    if (m->user)
        n++;
    if (m->host)
        n++;
    if (m->deadline_ms)
        n++;
    if (m->args.n)
        n++;
    if (m->type == PROTO_REPLY)
        n += 2; /* s, e */
    if (m->text)
        n++;
    if (m->data.n)
        n++;
    if (m->n_images)
        n++;

    msgpack_pack_map(&pk, n);
    pack_key(&pk, "v");
    msgpack_pack_int(&pk, PROTO_VERSION);
    pack_key(&pk, "t");
    msgpack_pack_int(&pk, (int)m->type);
    pack_key(&pk, "id");
    msgpack_pack_uint64(&pk, m->id);
    if (m->kind)
        pack_str(&pk, "k", m->kind, strlen(m->kind));
    if (m->name)
        pack_str(&pk, "n", m->name, strlen(m->name));
    if (m->conv)
        pack_str(&pk, "c", m->conv, strlen(m->conv));
    if (m->user)
        pack_str(&pk, "u", m->user, strlen(m->user));
    if (m->host)
        pack_str(&pk, "h", m->host, strlen(m->host));
    if (m->deadline_ms) {
        pack_key(&pk, "dl");
        msgpack_pack_int64(&pk, m->deadline_ms);
    }
    if (m->args.n)
        pack_map(&pk, "a", &m->args);
    if (m->type == PROTO_REPLY) {
        pack_key(&pk, "s");
        msgpack_pack_int(&pk, (int)m->status);
        pack_key(&pk, "e");
        if (m->is_error)
            msgpack_pack_true(&pk);
        else
            msgpack_pack_false(&pk);
    }
    if (m->text) {
        pack_key(&pk, "x");
        msgpack_pack_bin(&pk, m->text_len);
        msgpack_pack_bin_body(&pk, m->text, m->text_len);
    }
    if (m->data.n)
        pack_map(&pk, "d", &m->data);
    if (m->n_images) {
        pack_key(&pk, "i");
        msgpack_pack_array(&pk, 3 * m->n_images);
        for (size_t i = 0; i < m->n_images; i++) {
            const proto_image_t *im = &m->images[i];
            msgpack_pack_bin(&pk, strlen(im->path));
            msgpack_pack_bin_body(&pk, im->path, strlen(im->path));
            msgpack_pack_bin(&pk, strlen(im->mime));
            msgpack_pack_bin_body(&pk, im->mime, strlen(im->mime));
            msgpack_pack_bin(&pk, im->len);
            msgpack_pack_bin_body(&pk, im->data, im->len);
        }
    }

    if (!sb.data) {
        msgpack_sbuffer_destroy(&sb);
        return PROTO_ENOMEM;
    }
    *len = sb.size;
    *buf = msgpack_sbuffer_release(&sb);
    msgpack_sbuffer_destroy(&sb);
    return *buf ? PROTO_OK : PROTO_ENOMEM;
}

/* ---- decoding -------------------------------------------------------------- */

static bool obj_key_is(const msgpack_object *k, const char *key)
{
    size_t n = strlen(key);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           memcmp(k->via.str.ptr, key, n) == 0;
}

/* A string or bin object as bytes. */
static bool obj_bytes(const msgpack_object *o, const char **p, size_t *n)
{
    if (o->type == MSGPACK_OBJECT_STR) {
        *p = o->via.str.ptr;
        *n = o->via.str.size;
        return true;
    }
    if (o->type == MSGPACK_OBJECT_BIN) {
        *p = o->via.bin.ptr;
        *n = o->via.bin.size;
        return true;
    }
    return false;
}

static bool obj_int(const msgpack_object *o, int64_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (o->via.u64 > (uint64_t)INT64_MAX)
            return false;
        *v = (int64_t)o->via.u64;
        return true;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *v = o->via.i64;
        return true;
    }
    return false;
}

/* Copy a string field; strings holding NUL are refused (they are names). */
static proto_err_t take_cstr(const msgpack_object *o, char **field)
{
    const char *p;
    size_t n;
    if (!obj_bytes(o, &p, &n) || memchr(p, '\0', n))
        return PROTO_EFORMAT;
    char *copy = dup_bytes(p, n);
    if (!copy)
        return PROTO_ENOMEM;
    free(*field);
    *field = copy;
    return PROTO_OK;
}

static proto_err_t take_map(const msgpack_object *o, proto_map_t *m)
{
    if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size > PROTO_MAX_FIELDS)
        return PROTO_EFORMAT;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        const msgpack_object *v = &o->via.map.ptr[i].val;
        const char *kp;
        size_t kn;
        if (!obj_bytes(k, &kp, &kn) || kn == 0 || kn > 256 || memchr(kp, '\0', kn))
            return PROTO_EFORMAT;
        char key[257];
        memcpy(key, kp, kn);
        key[kn] = '\0';
        int rc;
        const char *sp;
        size_t sn;
        int64_t iv;
        if (v->type == MSGPACK_OBJECT_NIL) {
            proto_kv_t *slot = map_slot(m, key);
            if (!slot)
                return PROTO_ENOMEM;
            slot->type = PROTO_V_NIL;
            rc = 0;
        } else if (v->type == MSGPACK_OBJECT_BOOLEAN) {
            rc = proto_map_set_bool(m, key, v->via.boolean);
        } else if (obj_int(v, &iv)) {
            rc = proto_map_set_int(m, key, iv);
        } else if (obj_bytes(v, &sp, &sn)) {
            rc = proto_map_set_str(m, key, sp, sn);
        } else {
            return PROTO_EFORMAT;
        }
        if (rc)
            return PROTO_ENOMEM;
    }
    return PROTO_OK;
}

/* "i": path, MIME type and bytes of each image; names may not hold NUL. */
static proto_err_t take_images(const msgpack_object *o, proto_msg_t *m)
{
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size % 3 ||
        o->via.array.size > 3 * PROTO_MAX_IMAGES || m->n_images)
        return PROTO_EFORMAT;
    for (uint32_t i = 0; i < o->via.array.size; i += 3) {
        const char *pp, *mp, *dp;
        size_t pn, mn, dn;
        if (!obj_bytes(&o->via.array.ptr[i], &pp, &pn) ||
            !obj_bytes(&o->via.array.ptr[i + 1], &mp, &mn) ||
            !obj_bytes(&o->via.array.ptr[i + 2], &dp, &dn) || pn == 0 || pn > 4096 || mn == 0 ||
            mn > 64 || memchr(pp, '\0', pn) || memchr(mp, '\0', mn))
            return PROTO_EFORMAT;
        char path[4097], mime[65];
        memcpy(path, pp, pn);
        path[pn] = '\0';
        memcpy(mime, mp, mn);
        mime[mn] = '\0';
        if (proto_msg_add_image(m, path, mime, dp, dn) != 0)
            return PROTO_ENOMEM;
    }
    return PROTO_OK;
}

static proto_err_t decode_obj(const msgpack_object *root, proto_msg_t *m)
{
    if (root->type != MSGPACK_OBJECT_MAP)
        return PROTO_EFORMAT;
    bool have_v = false, have_t = false;
    proto_err_t err = PROTO_OK;
    for (uint32_t i = 0; i < root->via.map.size && err == PROTO_OK; i++) {
        const msgpack_object *k = &root->via.map.ptr[i].key;
        const msgpack_object *v = &root->via.map.ptr[i].val;
        int64_t iv;
        if (obj_key_is(k, "v")) {
            if (!obj_int(v, &iv) || iv != PROTO_VERSION)
                return PROTO_EVERSION;
            have_v = true;
        } else if (obj_key_is(k, "t")) {
            if (!obj_int(v, &iv) || iv < PROTO_HELLO || iv > PROTO_CANCEL)
                return PROTO_ETYPE;
            m->type = (proto_type_t)iv;
            have_t = true;
        } else if (obj_key_is(k, "id")) {
            if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                return PROTO_EFORMAT;
            m->id = v->via.u64;
        } else if (obj_key_is(k, "k")) {
            err = take_cstr(v, &m->kind);
        } else if (obj_key_is(k, "n")) {
            err = take_cstr(v, &m->name);
        } else if (obj_key_is(k, "c")) {
            err = take_cstr(v, &m->conv);
        } else if (obj_key_is(k, "u")) {
            err = take_cstr(v, &m->user);
        } else if (obj_key_is(k, "h")) {
            err = take_cstr(v, &m->host);
        } else if (obj_key_is(k, "dl")) {
            if (!obj_int(v, &iv))
                return PROTO_EFORMAT;
            m->deadline_ms = iv;
        } else if (obj_key_is(k, "a")) {
            err = take_map(v, &m->args);
        } else if (obj_key_is(k, "d")) {
            err = take_map(v, &m->data);
        } else if (obj_key_is(k, "i")) {
            err = take_images(v, m);
        } else if (obj_key_is(k, "s")) {
            if (!obj_int(v, &iv) || iv < 0 || iv > PROTO_ST_INTERNAL)
                return PROTO_EFORMAT;
            m->status = (proto_status_t)iv;
        } else if (obj_key_is(k, "e")) {
            if (v->type != MSGPACK_OBJECT_BOOLEAN)
                return PROTO_EFORMAT;
            m->is_error = v->via.boolean;
        } else if (obj_key_is(k, "x")) {
            const char *p;
            size_t n;
            if (!obj_bytes(v, &p, &n))
                return PROTO_EFORMAT;
            if (proto_msg_set_text(m, p, n))
                return PROTO_ENOMEM;
        }
        /* unknown keys: ignored, for forward compatibility */
    }
    if (err != PROTO_OK)
        return err;
    if (!have_v)
        return PROTO_EVERSION;
    if (!have_t)
        return PROTO_ETYPE;
    return PROTO_OK;
}

/* Walk a msgpack frame without allocating, before msgpack-c sees it: the
 * unpacker allocates for a map or array as soon as it reads its header, so
 * a 5-byte frame claiming 268 million entries would cost gigabytes.  A
 * talkback message is a few small maps, so the walk refuses any frame with
 * more than PROTO_MAX_CONTAINERS maps/arrays, any map or array over
 * PROTO_MAX_FIELDS entries, and any count the remaining bytes cannot hold.
 * Fuzzed (tests/fuzz/fuzz_proto.c). */
#define PROTO_MAX_CONTAINERS 16

static uint64_t be(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* The walk described above.  It is long because it is one switch over the
 * msgpack type bytes with one short case each; a case cut out would need
 * the walk's stack and position as arguments. */
static bool proto_frame_sane(const unsigned char *p, size_t len)
{
    size_t pos = 0;
    uint64_t pending = 1; /* objects still to read */
    unsigned containers = 0;
    while (pending) {
        if (pos >= len)
            return false;
        unsigned char b = p[pos++];
        pending--;
        uint64_t items = 0, skip = 0;
        size_t lenbytes = 0;
        if (b <= 0x7f || b >= 0xe0) {
            /* fixint */
        } else if ((b & 0xf0) == 0x80) {
            items = 2u * (b & 0x0fu);
            containers++;
        } else if ((b & 0xf0) == 0x90) {
            items = b & 0x0fu;
            containers++;
        } else if ((b & 0xe0) == 0xa0) {
            skip = b & 0x1fu;
        } else {
            switch (b) {
            case 0xc0:
            case 0xc2:
            case 0xc3: break;
            case 0xc4:
            case 0xd9: lenbytes = 1; break;
            case 0xc5:
            case 0xda: lenbytes = 2; break;
            case 0xc6:
            case 0xdb: lenbytes = 4; break;
            case 0xc7:
                lenbytes = 1;
                skip = 1;
                break; /* ext 8: + type */
            case 0xc8:
                lenbytes = 2;
                skip = 1;
                break;
            case 0xc9:
                lenbytes = 4;
                skip = 1;
                break;
            case 0xca: skip = 4; break;
            case 0xcb: skip = 8; break;
            case 0xcc:
            case 0xd0: skip = 1; break;
            case 0xcd:
            case 0xd1: skip = 2; break;
            case 0xce:
            case 0xd2: skip = 4; break;
            case 0xcf:
            case 0xd3: skip = 8; break;
            case 0xd4: skip = 2; break;
            case 0xd5: skip = 3; break;
            case 0xd6: skip = 5; break;
            case 0xd7: skip = 9; break;
            case 0xd8: skip = 17; break;
            case 0xdc:
            case 0xdd:
            case 0xde:
            case 0xdf: {
                size_t n = (b == 0xdc || b == 0xde) ? 2 : 4;
                if (n > len - pos)
                    return false;
                items = be(p + pos, n);
                pos += n;
                if (b >= 0xde)
                    items *= 2;
                containers++;
                break;
            }
            default: return false; /* 0xc1: never used */
            }
        }
        if (lenbytes) {
            if (lenbytes > len - pos)
                return false;
            skip += be(p + pos, lenbytes);
            pos += lenbytes;
        }
        if (skip > len - pos)
            return false;
        pos += (size_t)skip;
        if (containers > PROTO_MAX_CONTAINERS || items > 2u * PROTO_MAX_FIELDS)
            return false;
        pending += items;
        if (pending > len - pos)
            return false; /* every object takes at least one byte */
    }
    return pos == len;
}

proto_err_t proto_decode(const void *buf, size_t len, proto_msg_t **out)
{
    *out = NULL;
    if (len > PROTO_MAX_FRAME)
        return PROTO_ETOOBIG;
    if (len == 0 || !buf || !proto_frame_sane(buf, len))
        return PROTO_EFORMAT;

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    msgpack_unpack_return ur = msgpack_unpack_next(&up, buf, len, &off);
    if (ur == MSGPACK_UNPACK_NOMEM_ERROR) {
        msgpack_unpacked_destroy(&up);
        return PROTO_ENOMEM;
    }
    if (ur != MSGPACK_UNPACK_SUCCESS || off != len) {
        msgpack_unpacked_destroy(&up);
        return PROTO_EFORMAT;
    }
    proto_msg_t *m = proto_msg_new(PROTO_HELLO);
    if (!m) {
        msgpack_unpacked_destroy(&up);
        return PROTO_ENOMEM;
    }
    proto_err_t err = decode_obj(&up.data, m);
    msgpack_unpacked_destroy(&up);
    if (err != PROTO_OK) {
        proto_msg_destroy(&m);
        return err;
    }
    *out = m;
    return PROTO_OK;
}
