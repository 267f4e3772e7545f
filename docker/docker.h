/* docker.h -- the Docker Engine API over libcurl.
 *
 * Used by the sandbox manager and the reaper only; the gateway and the
 * judges never link it.  One docker_t per process holds the daemon address
 * and the API version negotiated once with GET /_ping (never hard-coded:
 * Debian's dockerd speaks 1.41, Docker 29 refuses anything below 1.44).
 * Calls are thread-safe: each call uses a curl easy handle of its own
 * thread.
 *
 * Also here, as pure functions with unit tests: the demultiplexer of
 * Docker's 8-byte-header stdout/stderr stream (docker_demux_*) and a
 * one-file tar writer for PUT /containers/{id}/archive (docker_tar_file).
 */
#ifndef TALKBACK_DOCKER_H
#define TALKBACK_DOCKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

typedef enum {
    DOCKER_OK = 0,
    DOCKER_ECONNECT,  /* could not reach the daemon */
    DOCKER_EHTTP,     /* the daemon answered with an error status */
    DOCKER_ENOTFOUND, /* 404 */
    DOCKER_ECONFLICT, /* 409 */
    DOCKER_EPROTO,    /* an answer we could not parse */
    DOCKER_ENOMEM,
    DOCKER_ECANCELLED, /* the caller's cancel check said stop */
    DOCKER_EARG        /* bad argument */
} docker_err_t;

/* Static English text for an error code. */
const char *docker_strerror(docker_err_t err);

typedef struct docker docker_t;

/* Connect to host ("unix:///var/run/docker.sock" or "tcp://H:P"; NULL
 * means $DOCKER_HOST, else the unix default) and negotiate the API version
 * with GET /_ping.  Returns NULL with *err set (and a message in errbuf of
 * errlen bytes) when the daemon cannot be reached. */
docker_t *docker_new(const char *host, docker_err_t *err, char *errbuf, size_t errlen);
void docker_destroy(docker_t **self_p);
/* The negotiated version, e.g. "1.41". */
const char *docker_api_version(const docker_t *d);

/* One API call.  method "GET"/"POST"/"PUT"/"DELETE"; path without the
 * version prefix ("/containers/json?all=1"); body is JSON to send or NULL.
 * *status gets the HTTP status (0 when not reached).  *out (may be NULL)
 * gets the parsed JSON answer, or NULL for an empty/non-JSON answer; for
 * error statuses *out holds Docker's {"message": ...}.  Returns DOCKER_OK
 * for 2xx/304, DOCKER_ENOTFOUND for 404, DOCKER_ECONFLICT for 409,
 * DOCKER_EHTTP for other statuses. */
docker_err_t docker_call(docker_t *d, const char *method, const char *path, json_t *body,
                         long *status, json_t **out);

/* Like docker_call with a raw body of a content type (used for tar). */
docker_err_t docker_call_raw(docker_t *d, const char *method, const char *path, const char *ctype,
                             const void *body, size_t len, long *status, json_t **out);

/* The "message" of a Docker error answer, or "" -- never NULL. */
const char *docker_message(const json_t *answer);

/* Output of an exec arrives through this callback as it is produced:
 * stream 1 = stdout, 2 = stderr.  Return 0 to go on. */
typedef void (*docker_output_fn)(void *ctx, int stream, const char *data, size_t len);
/* Polled about every 100 ms while an exec runs: return true to abandon
 * the exec's stream (the process inside keeps running: the caller kills
 * it, see sandbox/manager.c). */
typedef bool (*docker_cancel_fn)(void *ctx);

typedef struct {
    const char *const *argv; /* NULL-terminated */
    const char *const *env;  /* NULL-terminated "K=V", or NULL */
    const char *workdir;     /* or NULL */
    const char *user;        /* or NULL */
    const void *stdin_data;  /* bytes for stdin, or NULL for none */
    size_t stdin_len;
    docker_output_fn on_output;
    docker_cancel_fn cancelled;
    void *ctx;
} docker_exec_t;

/* Create and start an exec in container id, stream its output, then read
 * its exit code.  Returns DOCKER_OK with *exit_code set (-1 if Docker did
 * not say), DOCKER_ECANCELLED when the cancel check fired, or an error
 * (DOCKER_ECONFLICT when the container is not running, DOCKER_ENOTFOUND
 * when it does not exist). */
docker_err_t docker_exec(docker_t *d, const char *id, const docker_exec_t *x, int *exit_code);

/* Attach to a running container's stdin, stdout and stderr (POST
 * /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1, upgraded to
 * a raw stream; used by the sandbox manager to reach the agent, see
 * sandbox/agent_link.c).  On DOCKER_OK *fd is the connected non-blocking socket,
 * which the caller owns: what it writes is the container's stdin, what it
 * reads is the 8-byte-header stream (docker_demux_*).  *early (malloc'ed,
 * or NULL) holds stream bytes that came with the response head.  Gives up
 * with DOCKER_ECONNECT when the daemon does not answer within 5 s. */
docker_err_t docker_attach(docker_t *d, const char *id, int *fd, char **early, size_t *early_len);

/* Write one regular file into a container through PUT .../archive?path=/.
 * abspath is an absolute, already-normalised path inside the container;
 * missing parent folders are created by Docker (0755, root).  mtime is the
 * file's modification time (unix seconds; 0 = now).  Works on stopped
 * containers too. */
docker_err_t docker_put_file(docker_t *d, const char *id, const char *abspath, const void *data,
                             size_t len, unsigned mode, int64_t mtime, long *status, json_t **out);

/* Read one regular file of at most max bytes from a container through GET
 * .../archive?path=ABSPATH (works on stopped containers too).  On DOCKER_OK
 * *data is a malloc'ed, NUL-terminated copy of the content, *len its
 * length and *mtime (may be NULL) its modification time.  DOCKER_ENOTFOUND
 * when the container or the file does not exist. */
docker_err_t docker_get_file(docker_t *d, const char *id, const char *abspath, size_t max,
                             char **data, size_t *len, int64_t *mtime);

/* ---- pure helpers (unit-tested) ---------------------------------------- */

/* Streaming demultiplexer of Docker's attach/exec framing: an 8-byte
 * header {stream, 0, 0, 0, size as big-endian uint32} then payload.
 * Frames may be split across feeds at any byte. */
typedef struct {
    unsigned char hdr[8];
    size_t hdr_have; /* header bytes collected */
    uint32_t left;   /* payload bytes left in the current frame */
    int stream;      /* stream of the current frame */
    bool bad;        /* a header with an unknown stream was seen */
} docker_demux_t;

void docker_demux_init(docker_demux_t *dm);
/* Feed bytes; calls out(ctx, stream, ptr, n) for each payload piece.
 * Returns false once the stream is malformed (stream byte not 0..2, or
 * nonzero padding); it then stays false. */
bool docker_demux_feed(docker_demux_t *dm, const char *buf, size_t len, docker_output_fn out,
                       void *ctx);

/* Build a ustar archive holding one regular file at name (relative, no
 * leading '/', at most 255 bytes in the prefix/name split, or longer via a
 * PAX header).  Returns a malloc'ed buffer and its length in *out_len, or
 * NULL when out of memory or name is unusable. */
char *docker_tar_file(const char *name, const void *data, size_t len, unsigned mode, int64_t mtime,
                      size_t *out_len);

/* Find the first regular file of a tar archive: its content (pointing into
 * buf) and its mtime.  False when buf holds no complete regular file. */
bool docker_tar_first(const char *buf, size_t len, const char **data, size_t *size, int64_t *mtime);

#endif
