/* docker_int.h -- what docker.c and exec.c share, and nothing outside
 * docker/ may use: the docker_t layout, the limits of both and the few
 * helpers both call (answers go into common/textbuf.h's bounded buffer).
 * The public API is docker.h.
 */
#ifndef TALKBACK_DOCKER_INT_H
#define TALKBACK_DOCKER_INT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/textbuf.h"
#include "docker/docker.h"

#define DOCKER_DEFAULT_HOST  "unix:///var/run/docker.sock"
#define DOCKER_DEFAULT_PORT  "2375"
/* Connecting to a local daemon is instant; 10 s covers a slow tcp peer. */
#define DOCKER_CONNECT_S     10L
/* A normal call may be slow (create, stop with a grace period, a large
 * archive) but never endless. */
#define DOCKER_CALL_S        120L
/* Largest answer kept in memory (a container list with sizes is the
 * biggest thing we ask for). */
#define DOCKER_ANSWER_MAX    ((size_t)64 << 20)
/* Error text kept from a failed exec start. */
#define DOCKER_ERRTEXT_MAX   4096
/* How often the cancel check runs while an exec streams. */
#define DOCKER_CANCEL_MS     100
/* Waiting for ExitCode after the stream ended: 1 ms doubling, ~1 s total. */
#define DOCKER_EXIT_FIRST_US 1000L
#define DOCKER_EXIT_TOTAL_US 1000000L
/* Response head of a hand-made exec start. */
#define DOCKER_HEAD_MAX      16384
#define DOCKER_IO_CHUNK      65536
#define DOCKER_VERSION_MAX   16

struct docker {
    char *sock_path; /* unix socket path, or NULL for tcp */
    char *tcp_node;  /* tcp host (no brackets) */
    char *tcp_port;
    char *base_url; /* "http://localhost" or "http://H:P" */
    char *host_hdr; /* Host: header of hand-made requests */
    char version[DOCKER_VERSION_MAX];
    char prefix[DOCKER_VERSION_MAX + 2]; /* "/v1.41" */
};

/* A malloc'd printf, NULL when out of memory. */
char *docker_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Percent-encode an id or name for a path (malloc'd, NULL on OOM). */
char *docker_path_escape(const char *s);
/* The result an HTTP status stands for. */
docker_err_t docker_status_err(long status);
/* curl and the per-thread handle key, set up once; false when that failed. */
bool docker_global_init(void);
/* Options every request shares: address, no signals, connect timeout. */
docker_err_t docker_base_setup(const docker_t *d, CURL *h, const char *url, char *curl_err);

#endif
