/* proto.h -- the one wire contract between talkback processes.
 *
 * Every message that crosses ZeroMQ between the gateway (the hub), the
 * sandbox manager, the judges and the reaper is one msgpack map in one
 * ZeroMQ frame, encoded and decoded here and nowhere else.  The map carries
 * a version field ("v"); a peer speaking another version is refused at
 * decode time with PROTO_EVERSION rather than misread.
 *
 * Message flow (see docs/layout.md):
 *
 *   worker  --HELLO{kind,name,data}-->  hub  every heartbeat interval; the
 *                                           hub learns and keeps workers alive,
 *                                           and keeps each one's last data
 *                                           (its host, and a sandbox
 *                                           manager's capacity)
 *   client  --REQUEST-->  hub  --REQUEST-->  worker of that kind
 *   worker  --REPLY-->    hub  --REPLY-->    client
 *   hub     --CANCEL{id}-->  worker          the request must stop now
 *
 * "Clients" are the gateway's HTTP front and the judges (which ask the
 * sandbox manager to write and exec).  The hub rewrites request ids so each
 * client may number its own requests freely.
 *
 * Keys on the wire (short, stable; unknown keys are ignored):
 *   v  version      t  type         id  request id     k  worker kind
 *   n  tool/op name c  conversation u   user id        dl deadline (unix ms)
 *   a  arguments    e  is_error     x   text           d  data
 *   s  status       w  worker name    i   images (REPLY)
 *   h  host (REQUEST: serve it on a worker of this host only)
 *
 * HELLO's data ("d", as a reply's) says where the worker runs and, for a
 * sandbox manager, how full its host is: host, version, running, kept,
 * spares, max_running, keep_max_count, mem_free_kb, disk_free_kb,
 * draining.  Every kind sends at least host.
 *
 * Which kinds, operations and argument/data keys exist, who serves them
 * and what their replies carry: ops.h.
 *
 * This module depends on msgpack-c only.  It does no I/O.
 */
#ifndef TALKBACK_PROTO_H
#define TALKBACK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1

/* Hard ceilings for decoding untrusted frames.  A frame bigger than this is
 * refused before msgpack sees it. */
#define PROTO_MAX_FRAME  (32u * 1024u * 1024u)
#define PROTO_MAX_FIELDS 256u
/* Most images one reply carries (see proto_image_t). */
#define PROTO_MAX_IMAGES 16u

typedef enum {
    PROTO_HELLO = 1,   /* worker -> hub: I am alive, kind k, name w */
    PROTO_REQUEST = 2, /* client -> hub -> worker */
    PROTO_REPLY = 3,   /* worker -> hub -> client */
    PROTO_CANCEL = 4   /* hub -> worker: stop request id */
} proto_type_t;

/* Status of a reply as seen by the transport.  PROTO_ST_OK means the worker
 * handled the request (the result itself may still be an error for the
 * model: see is_error). */
typedef enum {
    PROTO_ST_OK = 0,
    PROTO_ST_NO_WORKER,   /* no live worker of that kind */
    PROTO_ST_WORKER_LOST, /* the worker died while holding the request */
    PROTO_ST_DEADLINE,    /* the deadline passed with no reply */
    PROTO_ST_BAD_REQUEST, /* the worker could not understand the request */
    PROTO_ST_INTERNAL     /* the worker failed in a way it could describe */
} proto_status_t;

typedef enum {
    PROTO_OK = 0,
    PROTO_ENOMEM,
    PROTO_ETOOBIG,  /* frame over PROTO_MAX_FRAME */
    PROTO_EFORMAT,  /* not a msgpack map of the expected shape */
    PROTO_EVERSION, /* "v" missing or not PROTO_VERSION */
    PROTO_ETYPE     /* "t" missing or unknown */
} proto_err_t;

/* Return a static English string for an error code. */
const char *proto_strerror(proto_err_t err);

/* A small ordered map of string keys to scalar values: the arguments of a
 * request and the structured data of a reply.  Strings are byte strings
 * with a length (they may hold any byte) and are always NUL-terminated in
 * memory for convenience. */
typedef enum { PROTO_V_NIL, PROTO_V_INT, PROTO_V_BOOL, PROTO_V_STR } proto_vtype_t;

typedef struct {
    char *key;
    proto_vtype_t type;
    int64_t i;  /* PROTO_V_INT, PROTO_V_BOOL (0/1) */
    char *s;    /* PROTO_V_STR */
    size_t len; /* PROTO_V_STR */
} proto_kv_t;

typedef struct {
    proto_kv_t *kv;
    size_t n, cap;
} proto_map_t;

/* Setters replace an existing key.  They return 0, or -1 when out of
 * memory. */
int proto_map_set_str(proto_map_t *m, const char *key, const char *s, size_t len);
int proto_map_set_cstr(proto_map_t *m, const char *key, const char *s);
int proto_map_set_int(proto_map_t *m, const char *key, int64_t v);
int proto_map_set_bool(proto_map_t *m, const char *key, bool v);
/* Lookup; NULL when absent. */
const proto_kv_t *proto_map_get(const proto_map_t *m, const char *key);
/* The string under key, or NULL when absent or not a string.  *len may be
 * NULL. */
const char *proto_map_str(const proto_map_t *m, const char *key, size_t *len);
/* The integer under key, or dflt when absent or not an integer/bool. */
int64_t proto_map_int(const proto_map_t *m, const char *key, int64_t dflt);
/* Whether key is present with the given type. */
bool proto_map_has(const proto_map_t *m, const char *key, proto_vtype_t type);
void proto_map_clear(proto_map_t *m);
int proto_map_copy(proto_map_t *dst, const proto_map_t *src);

/* An image a command drew, returned with its reply (the gateway turns it
 * into an MCP image content block).  On the wire, "i" is one array of
 * three byte strings per image: path, MIME type, the file's bytes. */
typedef struct {
    char *path; /* where it is in the sandbox, e.g. /work/plot.png */
    char *mime; /* image/png, image/jpeg, image/gif or image/webp */
    char *data; /* the file's bytes */
    size_t len;
} proto_image_t;

/* One message.  Fields not used by a type stay zero/NULL.  All strings are
 * owned by the message. */
typedef struct {
    proto_type_t type;
    uint64_t id;           /* REQUEST, REPLY, CANCEL */
    char *kind;            /* HELLO: worker kind; REQUEST: which kind serves it */
    char *name;            /* HELLO: worker name; REQUEST: tool or operation */
    char *conv;            /* REQUEST: conversation id */
    char *user;            /* REQUEST: user id, may be "" */
    char *host;            /* REQUEST: only a worker on this host serves it; NULL = any */
    int64_t deadline_ms;   /* REQUEST: absolute, unix milliseconds; 0 = none */
    proto_map_t args;      /* REQUEST: arguments */
    proto_status_t status; /* REPLY */
    bool is_error;         /* REPLY: the result is an error for the model */
    char *text;            /* REPLY: what the model reads */
    size_t text_len;
    proto_map_t data;      /* REPLY: structured fields for programs; HELLO: the
                           * worker's host and capacity */
    proto_image_t *images; /* REPLY: images, in the order they were written */
    size_t n_images;
} proto_msg_t;

/* Allocate a zeroed message of a type.  NULL when out of memory. */
proto_msg_t *proto_msg_new(proto_type_t type);
/* Free a message and NULL the caller's pointer; NULL-safe. */
void proto_msg_destroy(proto_msg_t **self_p);
/* Deep copy; NULL when out of memory. */
proto_msg_t *proto_msg_dup(const proto_msg_t *src);

/* Field setters that copy their argument (NULL clears).  0 or -1. */
int proto_msg_set_kind(proto_msg_t *m, const char *s);
int proto_msg_set_name(proto_msg_t *m, const char *s);
int proto_msg_set_conv(proto_msg_t *m, const char *s);
int proto_msg_set_user(proto_msg_t *m, const char *s);
int proto_msg_set_host(proto_msg_t *m, const char *s);
int proto_msg_set_text(proto_msg_t *m, const char *s, size_t len);
/* Append a copy of an image (at most PROTO_MAX_IMAGES).  0 or -1. */
int proto_msg_add_image(proto_msg_t *m, const char *path, const char *mime, const void *data,
                        size_t len);
/* Move src's images to the end of dst (as many as fit); src keeps none. */
void proto_msg_take_images(proto_msg_t *dst, proto_msg_t *src);

/* Build a reply to req carrying the same id: status, is_error and a
 * NUL-terminated text.  NULL when out of memory. */
proto_msg_t *proto_reply_new(const proto_msg_t *req, proto_status_t st, bool is_error,
                             const char *text);

/* Encode into a malloc'ed buffer the caller frees. */
proto_err_t proto_encode(const proto_msg_t *m, char **buf, size_t *len);
/* Decode one frame.  On success *out is a new message the caller
 * destroys.  Never reads past len; safe on hostile input. */
proto_err_t proto_decode(const void *buf, size_t len, proto_msg_t **out);

/* Wall clock in unix milliseconds, and a monotonic clock in milliseconds. */
int64_t proto_now_ms(void);
int64_t proto_mono_ms(void);

#endif
