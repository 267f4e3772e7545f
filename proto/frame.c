/* frame.c -- the manager <-> agent framing and its small msgpack codec
 * (see frame.h for the format and why it is shaped this way).
 *
 * Only the msgpack this contract needs is here: a top-level map with
 * string keys whose values are nil, booleans, integers, str or bin.
 * Encoding always picks the shortest form; decoding accepts every form of
 * those types.  No allocation while decoding: strings are views into the
 * caller's buffer.  libc only, because the static agent compiles it too.
 */
#include "proto/frame.h"

#include <stdlib.h>
#include <string.h>

static const char frame_magic[4] = { 'T', 'B', 'A', FRAME_VERSION };

static const char *const num_keys[FN__COUNT] = {
    "v",    "n",   "pid", "st",  "sig",   "err", "s",    "mode", "mt",  "mem",  "swap",
    "pids", "cq",  "cp",  "tmo", "merge", "ol",  "olim", "cpu",  "rss", "shep", "iw",
    "ii",   "wdn", "wdp", "wdw", "wdi",   "wdr", "bgw",  "jcap", "job",
};
_Static_assert(FN__COUNT <= 32 && FS__COUNT <= 32, "has_num and has_str are 32-bit masks");
static const char *const str_keys[FS__COUNT] = {
    "argv", "env", "cwd", "in", "d", "path", "msg", "mk", "img", "wdc", "bgl", "bgd", "bga", "jobs",
};

/* ---- fields ------------------------------------------------------------- */

void frame_set_num(frame_msg_t *m, frame_num_t f, int64_t v)
{
    m->num[f] = v;
    m->has_num |= 1u << f;
}

void frame_set_str(frame_msg_t *m, frame_str_t f, const void *p, size_t len)
{
    m->str[f] = p ? p : "";
    m->str_len[f] = len;
    m->has_str |= 1u << f;
}

bool frame_has_num(const frame_msg_t *m, frame_num_t f)
{
    return (m->has_num >> f) & 1u;
}

bool frame_has_str(const frame_msg_t *m, frame_str_t f)
{
    return (m->has_str >> f) & 1u;
}

int64_t frame_num(const frame_msg_t *m, frame_num_t f, int64_t dflt)
{
    return frame_has_num(m, f) ? m->num[f] : dflt;
}

bool frame_type_known(uint32_t t)
{
    return (t >= FRAME_HELLO && t <= FRAME_DETACH) || (t >= FRAME_READY && t <= FRAME_DETACHED);
}

/* ---- CRC-32 ------------------------------------------------------------- */

static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u,
    0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu,
    0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u, 0xf3b97148u, 0x84be41deu, 0x1adad47du,
    0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u, 0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu,
    0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u,
    0xa2677172u, 0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u, 0x26d930acu,
    0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, 0xcfba9599u, 0xb8bda50fu,
    0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu,
    0xb6662d3du, 0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu,
    0x9fbfe4a5u, 0xe8b8d433u, 0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu,
    0x086d3d2du, 0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u, 0x8bbeb8eau,
    0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u, 0x4db26158u, 0x3ab551ceu,
    0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au,
    0x346ed9fcu, 0xad678846u, 0xda60b8d0u, 0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u,
    0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u,
    0xce61e49fu, 0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u,
    0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u,
    0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u, 0xf00f9344u, 0x8708a3d2u, 0x1e01f268u,
    0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u,
    0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u,
    0xa1d1937eu, 0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu,
    0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, 0xcc0c7795u, 0xbb0b4703u,
    0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u,
    0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du, 0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au,
    0x9c0906a9u, 0xeb0e363fu, 0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu,
    0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u, 0x88085ae6u,
    0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u,
    0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du,
    0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu, 0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u,
    0x47b2cf7fu, 0x30b5ffe9u, 0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u,
    0xcdd70693u, 0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t frame_crc32(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint32_t c = 0xffffffffu;
    while (len--)
        c = crc_table[(c ^ *s++) & 0xffu] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/* ---- encoding ----------------------------------------------------------- */

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xffu);
        v >>= 8;
    }
}

static uint64_t get_be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Worst case per value is 9 bytes of integer or 5 of string header; the
 * caller reserved room. */
static size_t enc_uint(unsigned char *p, uint64_t v)
{
    if (v < 128) {
        p[0] = (unsigned char)v;
        return 1;
    }
    if (v <= 0xffu) {
        p[0] = 0xcc;
        p[1] = (unsigned char)v;
        return 2;
    }
    if (v <= 0xffffu) {
        p[0] = 0xcd;
        put_be(p + 1, v, 2);
        return 3;
    }
    if (v <= 0xffffffffu) {
        p[0] = 0xce;
        put_be(p + 1, v, 4);
        return 5;
    }
    p[0] = 0xcf;
    put_be(p + 1, v, 8);
    return 9;
}

static size_t enc_int(unsigned char *p, int64_t v)
{
    if (v >= 0)
        return enc_uint(p, (uint64_t)v);
    if (v >= -32) {
        p[0] = (unsigned char)(0xe0 | (v + 32));
        return 1;
    }
    if (v >= INT8_MIN) {
        p[0] = 0xd0;
        p[1] = (unsigned char)(uint8_t)(int8_t)v;
        return 2;
    }
    if (v >= INT16_MIN) {
        p[0] = 0xd1;
        put_be(p + 1, (uint16_t)(int16_t)v, 2);
        return 3;
    }
    if (v >= INT32_MIN) {
        p[0] = 0xd2;
        put_be(p + 1, (uint32_t)(int32_t)v, 4);
        return 5;
    }
    p[0] = 0xd3;
    put_be(p + 1, (uint64_t)v, 8);
    return 9;
}

/* A str header (keys) or bin header (values: any bytes). */
static size_t enc_strhdr(unsigned char *p, size_t n, bool bin)
{
    if (!bin && n < 32) {
        p[0] = (unsigned char)(0xa0 | n);
        return 1;
    }
    if (n <= 0xffu) {
        p[0] = bin ? 0xc4 : 0xd9;
        p[1] = (unsigned char)n;
        return 2;
    }
    if (n <= 0xffffu) {
        p[0] = bin ? 0xc5 : 0xda;
        put_be(p + 1, n, 2);
        return 3;
    }
    p[0] = bin ? 0xc6 : 0xdb;
    put_be(p + 1, n, 4);
    return 5;
}

/* A writer into room reserved in a textbuf_t: the bytes go to p[n...]. */
typedef struct {
    unsigned char *p;
    size_t n;
} wr_t;

static void put_key(wr_t *w, const char *k)
{
    size_t n = strlen(k);
    w->n += enc_strhdr(w->p + w->n, n, false);
    memcpy(w->p + w->n, k, n);
    w->n += n;
}

/* The bytes one frame of m takes at most, or 0 when a value is past
 * FRAME_MAX; *keys gets the map's size. */
static size_t frame_need(const frame_msg_t *m, unsigned *keys)
{
    size_t need = FRAME_HDR + 3 + 2 * 16; /* header, map, t, id */
    *keys = 1 + (m->id != 0);
    for (int f = 0; f < FN__COUNT; f++)
        if (frame_has_num(m, (frame_num_t)f)) {
            need += 16;
            (*keys)++;
        }
    for (int f = 0; f < FS__COUNT; f++)
        if (frame_has_str(m, (frame_str_t)f)) {
            if (m->str_len[f] > FRAME_MAX)
                return 0;
            need += 16 + m->str_len[f];
            (*keys)++;
        }
    return need - FRAME_HDR > FRAME_MAX ? 0 : need;
}

int frame_encode(const frame_msg_t *m, textbuf_t *out)
{
    unsigned keys;
    size_t need = frame_need(m, &keys);
    if (!need || textbuf_reserve(out, need))
        return -1;
    wr_t w = { (unsigned char *)out->buf + out->len, FRAME_HDR };
    if (keys < 16) {
        w.p[w.n++] = (unsigned char)(0x80 | keys);
    } else {
        w.p[w.n++] = 0xde;
        put_be(w.p + w.n, keys, 2);
        w.n += 2;
    }
    put_key(&w, "t");
    w.n += enc_uint(w.p + w.n, m->type);
    if (m->id) {
        put_key(&w, "id");
        w.n += enc_uint(w.p + w.n, m->id);
    }
    for (int f = 0; f < FN__COUNT; f++)
        if (frame_has_num(m, (frame_num_t)f)) {
            put_key(&w, num_keys[f]);
            w.n += enc_int(w.p + w.n, m->num[f]);
        }
    for (int f = 0; f < FS__COUNT; f++)
        if (frame_has_str(m, (frame_str_t)f)) {
            put_key(&w, str_keys[f]);
            w.n += enc_strhdr(w.p + w.n, m->str_len[f], true);
            if (m->str_len[f])
                memcpy(w.p + w.n, m->str[f], m->str_len[f]);
            w.n += m->str_len[f];
        }
    size_t plen = w.n - FRAME_HDR;
    memcpy(w.p, frame_magic, 4);
    put_be(w.p + 4, plen, 4);
    put_be(w.p + 8, frame_crc32(w.p + FRAME_HDR, plen), 4);
    put_be(w.p + 12, frame_crc32(w.p, 12), 4);
    textbuf_setlen(out, out->len + w.n);
    return 0;
}

/* ---- decoding ----------------------------------------------------------- */

typedef struct {
    const unsigned char *p, *end;
} cur_t;

static bool need(const cur_t *c, size_t n)
{
    return (size_t)(c->end - c->p) >= n;
}

/* A str or bin: *s and *n.  False on any other type or short input. */
static bool dec_bytes(cur_t *c, const char **s, size_t *n)
{
    if (!need(c, 1))
        return false;
    unsigned char t = *c->p++;
    size_t len;
    if ((t & 0xe0) == 0xa0) {
        len = t & 0x1fu;
    } else {
        int w;
        switch (t) {
        case 0xd9:
        case 0xc4: w = 1; break;
        case 0xda:
        case 0xc5: w = 2; break;
        case 0xdb:
        case 0xc6: w = 4; break;
        default: return false;
        }
        if (!need(c, (size_t)w))
            return false;
        len = (size_t)get_be(c->p, w);
        c->p += w;
    }
    if (!need(c, len))
        return false;
    *s = (const char *)c->p;
    *n = len;
    c->p += len;
    return true;
}

typedef enum { V_NIL, V_BOOL, V_INT, V_UINT_BIG, V_BYTES } vkind_t;

typedef struct {
    vkind_t kind;
    int64_t i;  /* V_BOOL, V_INT */
    uint64_t u; /* V_UINT_BIG: above INT64_MAX */
    const char *s;
    size_t n;
} val_t;

static bool dec_value(cur_t *c, val_t *v)
{
    if (!need(c, 1))
        return false;
    unsigned char t = *c->p;
    if (t <= 0x7f || t >= 0xe0) {
        c->p++;
        v->kind = V_INT;
        v->i = t <= 0x7f ? t : (int64_t)(int8_t)t;
        return true;
    }
    if ((t & 0xe0) == 0xa0 || t == 0xd9 || t == 0xda || t == 0xdb || t == 0xc4 || t == 0xc5 ||
        t == 0xc6) {
        v->kind = V_BYTES;
        return dec_bytes(c, &v->s, &v->n);
    }
    c->p++;
    int w;
    switch (t) {
    case 0xc0: v->kind = V_NIL; return true;
    case 0xc2:
    case 0xc3:
        v->kind = V_BOOL;
        v->i = t == 0xc3;
        return true;
    case 0xcc:
    case 0xd0: w = 1; break;
    case 0xcd:
    case 0xd1: w = 2; break;
    case 0xce:
    case 0xd2: w = 4; break;
    case 0xcf:
    case 0xd3: w = 8; break;
    default: return false; /* arrays, maps, floats, ext: not in this contract */
    }
    if (!need(c, (size_t)w))
        return false;
    uint64_t raw = get_be(c->p, w);
    c->p += w;
    v->kind = V_INT;
    if (t >= 0xcc && t <= 0xcf) {
        if (raw > (uint64_t)INT64_MAX) {
            v->kind = V_UINT_BIG;
            v->u = raw;
        } else {
            v->i = (int64_t)raw;
        }
    } else if (w == 1) {
        v->i = (int8_t)(uint8_t)raw;
    } else if (w == 2) {
        v->i = (int16_t)(uint16_t)raw;
    } else if (w == 4) {
        v->i = (int32_t)(uint32_t)raw;
    } else {
        v->i = (int64_t)raw;
    }
    return true;
}

static bool key_is(const char *k, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(k, want, n) == 0;
}

int frame_decode(const void *p, size_t len, frame_msg_t *m)
{
    memset(m, 0, sizeof *m);
    cur_t c = { p, (const unsigned char *)p + len };
    if (!need(&c, 1))
        return -1;
    unsigned char t = *c.p++;
    size_t keys;
    if ((t & 0xf0) == 0x80) {
        keys = t & 0x0fu;
    } else if (t == 0xde || t == 0xdf) {
        int w = t == 0xde ? 2 : 4;
        if (!need(&c, (size_t)w))
            return -1;
        keys = (size_t)get_be(c.p, w);
        c.p += w;
    } else {
        return -1;
    }
    if (keys > FRAME_MAX_KEYS)
        return -1;
    bool have_type = false;
    for (size_t i = 0; i < keys; i++) {
        const char *k;
        size_t kn;
        val_t v;
        /* Keys are str, never bin. */
        if (!need(&c, 1) || *c.p == 0xc4 || *c.p == 0xc5 || *c.p == 0xc6 ||
            !dec_bytes(&c, &k, &kn) || !dec_value(&c, &v))
            return -1;
        if (key_is(k, kn, "t")) {
            if (v.kind != V_INT || v.i < 0 || v.i > UINT32_MAX)
                return -1;
            m->type = (uint32_t)v.i;
            have_type = true;
            continue;
        }
        if (key_is(k, kn, "id")) {
            if (v.kind == V_UINT_BIG)
                m->id = v.u;
            else if (v.kind == V_INT && v.i >= 0)
                m->id = (uint64_t)v.i;
            else
                return -1;
            continue;
        }
        bool known = false;
        for (int f = 0; f < FN__COUNT && !known; f++)
            if (key_is(k, kn, num_keys[f])) {
                known = true;
                if (v.kind != V_INT && v.kind != V_BOOL)
                    return -1;
                frame_set_num(m, (frame_num_t)f, v.i);
            }
        for (int f = 0; f < FS__COUNT && !known; f++)
            if (key_is(k, kn, str_keys[f])) {
                known = true;
                if (v.kind != V_BYTES)
                    return -1;
                frame_set_str(m, (frame_str_t)f, v.s, v.n);
            }
        /* Unknown keys: skipped (their value was read above). */
    }
    if (c.p != c.end || !have_type || !frame_type_known(m->type))
        return -1;
    return 0;
}

/* ---- streaming reader --------------------------------------------------- */

void frame_reader_init(frame_reader_t *r, size_t max, bool resync)
{
    memset(r, 0, sizeof *r);
    r->max = max > FRAME_MAX ? FRAME_MAX : max;
    r->resync = resync;
}

void frame_reader_free(frame_reader_t *r)
{
    free(r->buf);
    r->buf = NULL;
    r->pos = r->have = r->cap = 0;
}

static void compact(frame_reader_t *r)
{
    if (r->pos == 0)
        return;
    memmove(r->buf, r->buf + r->pos, r->have - r->pos);
    r->have -= r->pos;
    r->pos = 0;
}

int frame_reader_feed(frame_reader_t *r, const void *p, size_t len)
{
    if (r->bad)
        return -1;
    compact(r);
    if (len > SIZE_MAX / 2 - r->have)
        return -1;
    if (r->have + len > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->have + len)
            cap *= 2;
        unsigned char *n = realloc(r->buf, cap);
        if (!n)
            return -1;
        r->buf = n;
        r->cap = cap;
    }
    if (len)
        memcpy(r->buf + r->have, p, len);
    r->have += len;
    return 0;
}

/* In resync mode: drop bytes until the buffer starts with what could be a
 * magic (a full one, or a prefix of one at the very end). */
static void scan(frame_reader_t *r)
{
    while (r->pos < r->have) {
        size_t avail = r->have - r->pos;
        size_t n = avail < 4 ? avail : 4;
        if (memcmp(r->buf + r->pos, frame_magic, n) == 0)
            return;
        const unsigned char *hit = memchr(r->buf + r->pos + 1, frame_magic[0], avail - 1);
        size_t drop = hit ? (size_t)(hit - (r->buf + r->pos)) : avail;
        r->pos += drop;
        r->skipped += drop;
    }
}

static int reject(frame_reader_t *r)
{
    if (!r->resync) {
        r->bad = true;
        return -1;
    }
    r->pos++;
    r->skipped++;
    return 0;
}

int frame_reader_next(frame_reader_t *r, frame_msg_t *m)
{
    if (r->bad)
        return -1;
    for (;;) {
        if (r->resync)
            scan(r);
        size_t avail = r->have - r->pos;
        if (avail < 4) {
            if (!r->resync && avail > 0 && memcmp(r->buf + r->pos, frame_magic, avail) != 0)
                return reject(r);
            return 0;
        }
        const unsigned char *h = r->buf + r->pos;
        if (memcmp(h, frame_magic, 4) != 0) {
            if (reject(r))
                return -1;
            continue;
        }
        if (avail < FRAME_HDR)
            return 0;
        uint64_t plen = get_be(h + 4, 4);
        if (get_be(h + 12, 4) != frame_crc32(h, 12) || plen > r->max) {
            if (reject(r))
                return -1;
            continue;
        }
        if (avail - FRAME_HDR < plen)
            return 0;
        if (get_be(h + 8, 4) != frame_crc32(h + FRAME_HDR, (size_t)plen) ||
            frame_decode(h + FRAME_HDR, (size_t)plen, m) != 0) {
            if (reject(r))
                return -1;
            continue;
        }
        r->pos += FRAME_HDR + (size_t)plen;
        return 1;
    }
}

bool frame_reader_partial(const frame_reader_t *r)
{
    return !r->bad && r->have > r->pos;
}

void frame_reader_skip(frame_reader_t *r)
{
    if (r->have > r->pos) {
        r->pos++;
        r->skipped++;
    }
}

void frame_reader_trim(frame_reader_t *r)
{
    if (r->have == r->pos) {
        free(r->buf);
        r->buf = NULL;
        r->pos = r->have = r->cap = 0;
    }
}

int frame_list_each(const char *p, size_t len, void (*fn)(void *ctx, const char *item), void *ctx)
{
    if (len > 0 && p[len - 1] != '\0')
        return -1;
    int n = 0;
    for (size_t i = 0; i < len; n++) {
        const char *item = p + i;
        size_t l = strlen(item);
        if (fn)
            fn(ctx, item);
        i += l + 1;
    }
    return n;
}

/* See frame.h. */
char *frame_join_list(const char *const *items, size_t *len)
{
    size_t n = 0;
    for (size_t i = 0; items && items[i]; i++)
        n += strlen(items[i]) + 1;
    char *s = malloc(n ? n : 1);
    if (!s)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; items && items[i]; i++) {
        size_t k = strlen(items[i]) + 1;
        memcpy(s + o, items[i], k);
        o += k;
    }
    *len = n;
    return s;
}
