/* upstream.h -- one request to the model server, in its own thread.
 *
 * upstream_start sends the client's request with libcurl from a worker
 * thread; the answer comes back through a byte queue that the HTTP side
 * (server.c) reads from libmicrohttpd's content-reader callback.  Waiting
 * happens on a wake-up descriptor (a mailbox) and on the client's socket
 * at once, so a client that hangs up is noticed while the model server is
 * still thinking, and the transfer is aborted.
 *
 * The answer is read in one of three modes, chosen when its headers are
 * in: passed through as it is; an SSE stream filtered by repair_sse_*
 * (events go out as soon as they are complete); or a whole JSON answer,
 * held until it is complete and then given to repair_json.  Repair happens
 * only for a 2xx answer to a chat-completions request whose turn ran a
 * program (upstream_decide); everything else is passed through untouched.
 *
 * Lifetime: reference counted.  upstream_start returns one reference for
 * the caller (the worker holds its own); upstream_ref adds one, e.g. for a
 * response object; the last upstream_release frees it.
 */
#ifndef TALKBACK_PROXY_UPSTREAM_H
#define TALKBACK_PROXY_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proxy/repair.h"

struct curl_slist;

typedef enum { UPSTREAM_PASS, UPSTREAM_SSE, UPSTREAM_JSON } upstream_mode_t;

typedef struct upstream upstream_t;

typedef struct {
    char *url;                  /* taken */
    const char *method;         /* copied */
    struct curl_slist *headers; /* taken */
    char *body;                 /* taken; may be NULL */
    size_t body_len;
    long connect_timeout_s;
} upstream_req_t;

/* Why upstream_url refused a request-target. */
typedef enum {
    UPSTREAM_URL_OK,
    UPSTREAM_URL_NOT_ORIGIN,  /* does not start with "/" (absolute-form, "@host", "*", ...) */
    UPSTREAM_URL_BAD_BYTE,    /* a control byte, space, '#', '\\' or a non-ASCII byte */
    UPSTREAM_URL_DOT_SEGMENT, /* a "." or ".." path segment */
    UPSTREAM_URL_NOMEM        /* out of memory, or curl refused the URL */
} upstream_url_err_t;

/* The URL to ask the model server for a client's request-target: only an
 * origin-form target ("/path[?query]") is taken, and it is put on the
 * configured root with curl's URL API (CURLUPART_PATH / CURLUPART_QUERY),
 * so the scheme, host and port are always the root's -- "@otherhost/x"
 * or "http://otherhost/x" never become another host.  The root's own
 * path is kept as a prefix.  *out is malloc'ed on UPSTREAM_URL_OK. */
upstream_url_err_t upstream_url(const char *root, const char *target, char **out);
/* A sentence for a refusal ("the request-target must start with /"). */
const char *upstream_url_strerror(upstream_url_err_t e);

/* Process-wide set-up (curl_global_init, the shared connection cache) and
 * its end.  upstream_shutdown makes every wait give up within a second. */
int upstream_global_init(void);
void upstream_shutdown(void);
void upstream_global_cleanup(void);

/* Start the transfer; req's owned fields are taken (and zeroed) either
 * way.  NULL when out of memory or no thread could start. */
upstream_t *upstream_start(upstream_req_t *req);
upstream_t *upstream_ref(upstream_t *u);
void upstream_release(upstream_t **u);

/* The program to append (taken; NULL: nothing to repair).  Must be called
 * exactly once: the answer's body waits for it. */
void upstream_decide(upstream_t *u, repair_program_t *p);

/* Wait until the answer's status and headers are in (in JSON mode: until
 * the whole answer is in).  client_fd is watched for a hang-up.
 * 0: ready; -1: no answer (upstream_error says why); -2: the client left. */
int upstream_wait_head(upstream_t *u, int client_fd);
long upstream_status(const upstream_t *u);
upstream_mode_t upstream_mode(const upstream_t *u);
const char *upstream_error(const upstream_t *u);
/* Headers of the answer, i = 0, 1, ...; false past the end. */
bool upstream_header(const upstream_t *u, size_t i, const char **name, const char **value);
/* JSON mode, after upstream_wait_head: the whole (repaired) answer. */
const char *upstream_body(const upstream_t *u, size_t *len);

/* Streaming modes: up to max bytes of the answer, blocking until some are
 * there.  >0: bytes; 0: the answer is complete; -1: the transfer broke
 * off or the client left (the transfer is then aborted). */
ssize_t upstream_read(upstream_t *u, char *buf, size_t max);

/* Abort the transfer if it is still running (idempotent). */
void upstream_cancel(upstream_t *u);

#endif
