/* run.h -- one command inside a sandbox, with a timeout that kills what
 * the command started.
 *
 * Each command runs as `timeout -s KILL T+2 bash -c COMMAND` with a unique
 * marker TALKBACK_RUN=<hex> in its environment.  Every process it starts
 * inherits the marker -- even one that double-forks, calls setsid or
 * ignores SIGTERM -- so when the timeout passes or the call is cancelled, a
 * second exec walks /proc and SIGKILLs every process carrying it, using
 * bash builtins only (a fork bomb at the pids limit leaves no room for
 * helper processes).  The outer `timeout` kills the process group by
 * itself should the manager die mid-command.
 *
 * Output is kept with the head+tail cap (textbuf.h).
 */
#ifndef TALKBACK_RUN_H
#define TALKBACK_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "common/textbuf.h"
#include "hub/worker.h"
#include "docker/docker.h"
#include "sandbox/agent_link.h"

typedef struct {
    int exit_code; /* -1 when unknown (killed, cancelled) */
    bool timed_out;
    bool cancelled;
    docker_err_t err; /* DOCKER_OK, or why the exec could not run */
    capbuf_t out;     /* stdout and stderr interleaved, or stdout alone */
    capbuf_t errout;  /* stderr, when kept apart (separate_stderr) */
    int64_t elapsed_ms;
    int64_t cpu_ms;         /* CPU time of the command and what it started
                            (the agent's shepherd); -1 when unknown */
    int64_t max_rss_kb;     /* the largest peak RSS among them; -1 when unknown */
    bool output_limited;    /* killed at output_limit (exit code 137) */
    bool agent_lost;        /* the agent link broke while it ran: how it ended
                            is unknown, what was left of it was killed */
    icap_report_t watchdog; /* what the agent's inotify watchdog killed
                               (inotify_cap.h); killed 0: nothing */
    bool disk_capped;       /* stopped because the sandbox passed disk_cap
                               while it ran (disk.h) */
    bgr_t bg;               /* what it left running, what ended since, what
                               runs now (background.h); agent path only */
    int job;                /* it goes on as this job (sandbox/jobs.h); 0: not */
    bool unkept;            /* still running when the call had to answer, and
                               not kept as a job: killed */
    char *jobs;             /* ends of earlier jobs not told yet (FS_JOBS), or NULL */
    size_t jobs_len;
    char *images; /* the agent's list of images the command wrote
                            (frame.h FS_IMAGES), or NULL: see pictures.h */
    size_t images_len;
} run_result_t;

/* The way into sandboxes, chosen once by the manager and handed to every
 * call (no file-level setter): Docker, and the links to agents that are
 * tried first. */
typedef struct {
    docker_t *d;
    agent_pool_t *agents; /* NULL: Docker exec and archive only */
    bool shepherd;        /* agent_shepherd: the agent runs each command
                                under its shepherd */
} run_via_t;

typedef struct {
    const char *command; /* bash source */
    int timeout_s;
    const void *stdin_data; /* NULL: stdin closed */
    size_t stdin_len;
    size_t output_cap;
    int64_t output_limit; /* past this many bytes of output the command
                                and all it started are killed; 0: never */
    bool separate_stderr; /* keep stderr apart (judges compare stdout
                                only); else both share one pipe, so their
                                order is the order they were written in */
    worker_job_t *job;    /* cancel flag, or NULL */
    /* Polled with the cancel flag: true stops the command and all it
     * started, as a cancel does, with res->disk_capped set (its sandbox
     * passed disk_cap, disk.h).  NULL: never. */
    bool (*capped)(void *ctx);
    void *capped_ctx;
    bool watchdog_report; /* the result is read: it may say what the agent's
                             inotify watchdog killed (res->watchdog) */
    int64_t bg_watch_ms;  /* watch what it leaves running this long
                             (background.h, res->bg); 0: not */
    int64_t job_at_ms;    /* wall clock (proto_now_ms) when the call must
                             answer: a command still running then goes on as
                             a job (res->job); 0: never */
    int64_t job_log_cap;  /* what a job's file keeps of its output */
} run_opts_t;

/* Run a command in container id, through its agent when v has a live
 * link to it, else through a Docker exec.  Always fills res (free with
 * run_result_free).  Returns res->err. */
docker_err_t run_command(const run_via_t *v, const char *id, const run_opts_t *o,
                         run_result_t *res);
void run_result_free(run_result_t *res);

/* Kill every process of container id that carries marker.  Best effort. */
void run_kill_marker(docker_t *d, const char *id, const char *marker);

/* Write a file into container id: through its agent (atomic) when it has
 * a live one, else through Docker's archive API -- and through the archive
 * API too whenever the agent did not write it, so the unusual cases (a
 * folder in the way) end as they always did.  Same contract as
 * docker_put_file; mtime 0 means now. */
docker_err_t run_put_file(const run_via_t *v, const char *id, const char *abspath, const void *data,
                          size_t len, unsigned mode, int64_t mtime, long *status, json_t **out);

/* Read a regular file of at most max bytes from container id: through its
 * agent (`cat`, a fork in the sandbox) when it has a live one, else through
 * Docker's archive API, which costs about a hundred milliseconds.  0 with
 * *data malloc'ed (NUL-terminated) and *len set, or -1 (missing, not
 * readable, or over max). */
int run_read_file(const run_via_t *v, const char *id, const char *abspath, size_t max, char **data,
                  size_t *len);

/* The sandbox's cgroup limits as its agent reads them; -1 without one. */
int run_limits(const run_via_t *v, const char *id, agent_limits_t *out);

#endif
