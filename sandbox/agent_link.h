/* agent.h -- the sandbox manager's side of the in-sandbox agent.
 *
 * A sandbox made with the agent (agent/agent.c) runs it as its main
 * process; the manager keeps one Docker attach connection to it per
 * running sandbox (a "link") and sends it commands, writes and limit
 * questions as frames (proto/frame.h), each with a request id, so any
 * number of calls share one link.  A command then costs a fork in the
 * sandbox instead of a runc exec.
 *
 * The Docker exec path stays, and is the fallback: a sandbox without the
 * agent (made from an older template, or with no agent binary on this
 * host), a link that cannot be made, or a call the agent could not start
 * all go through exec, and the chat reads the same text either way.  A
 * link that breaks (the agent died, hung, or wrote something that is not
 * a frame) is dropped at once; its calls that had not started run through
 * exec, and a later call attaches again -- first killing the agent's
 * worker when it misbehaved, so its supervisor starts a fresh one.  The
 * reader treats every byte from the sandbox as hostile: it is the model's
 * machine, and anything in it can write into the agent's stdout.
 */
#ifndef TALKBACK_SANDBOX_AGENT_H
#define TALKBACK_SANDBOX_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "docker/docker.h"
#include "spec/sandbox.h" /* AGENT_CMD_PATH */
#include "sandbox/background.h"
#include "sandbox/inotify_cap.h"

typedef struct agent_pool agent_pool_t;
typedef struct agent_link agent_link_t;

/* The pool of links of this manager.  binary is the agent program on this
 * host (see agent_find_binary); NULL or unreadable = no agent: sandboxes
 * are made the old way and everything runs through exec. */
agent_pool_t *agent_pool_new(docker_t *d, const char *binary, int64_t frame_deadline_s);
void agent_pool_destroy(agent_pool_t **self_p);

/* The agent binary to use: configured (a path, "" = the file
 * talkback-agent next to the running program).  Writes it into out and
 * returns true when that file exists. */
bool agent_find_binary(const char *configured, char *out, size_t outlen);

/* The agent program at path, read whole (malloc'ed), or NULL. */
char *agent_binary_read(const char *path, size_t *len);

/* Whether new sandboxes get the agent. */
bool agent_pool_enabled(const agent_pool_t *p);
/* The version of the agent this pool copies into sandboxes ("" without). */
const char *agent_pool_version(const agent_pool_t *p);
/* A version for an agent program: 16 hex digits of a hash of its bytes. */
void agent_version(const char *bin, size_t len, char out[17]);

/* Whether an inspected container (GET /containers/{id}/json) was made to
 * run the agent. */
bool agent_in_config(const json_t *info);

/* Copy the agent binary into container id (created or stopped: before a
 * start, so the sandbox always runs the agent of this manager). */
docker_err_t agent_install(agent_pool_t *p, const char *id);
/* Kill the agent's worker in container id so its supervisor starts a
 * fresh one (agentbin.c). */
void agent_restart_worker(docker_t *d, const char *id);

/* The manager found container id running.  has_agent: it runs the agent;
 * started_ms: when this manager's start of it began (proto_mono_ms), or 0
 * when it found it running: a link opened before that start is stale, one
 * opened after it (by a racing call of the same chat) is kept, for
 * Docker sends every attached link the agent's whole stdout, and a second
 * link's handshake would end the first one's calls.  With the agent,
 * attaches now when no live link exists. */
void agent_note(agent_pool_t *p, const char *id, bool has_agent, int64_t started_ms);

/* A live link to the agent of container id, or NULL (use exec).  May
 * attach now when none exists and an attempt is due.  Release with
 * agent_release. */
agent_link_t *agent_get(agent_pool_t *p, const char *id);
void agent_release(agent_link_t **l);

typedef enum {
    AGENT_OK = 0,      /* the command ran; *exit_code is its status */
    AGENT_CANCELLED,   /* the cancel check fired; the agent killed it */
    AGENT_NOT_STARTED, /* nothing ran: run it through exec */
    AGENT_UNKNOWN,     /* no answer: it may have started; kill its marker,
                           then run it through exec */
    AGENT_LOST,        /* the link broke after it started */
    AGENT_DETACHED     /* it goes on as a job (ex->job, jobs.h) */
} agent_err_t;

typedef struct {
    const char *const *argv; /* NULL-terminated */
    const char *const *env;  /* NULL-terminated K=V, replaced or appended */
    const char *workdir;
    const char *marker;     /* K=V the kill pass looks for */
    const void *stdin_data; /* NULL: stdin closed */
    int64_t timeout_ms;     /* the agent SIGKILLs the command after this; 0: never */
    bool merge_stderr;      /* stderr into the stdout pipe (2>&1) */
    bool no_shepherd;       /* run it without the agent's shepherd
                                  (agent_shepherd off: for measurements) */
    int64_t output_limit;   /* kill it past this many output bytes; 0: never */
    bool watchdog_report;   /* its EXIT may say what the inotify watchdog killed */
    int64_t bg_watch_ms;    /* watch what it leaves running (background.h); 0: not */
    size_t stdin_len;
    docker_output_fn on_output;  /* streams 1 and 2; FRAME_STREAM_IMAGES: the
                                    images the command wrote (frame.h) */
    docker_cancel_fn cancelled;  /* polled about every 100 ms */
    int64_t job_cap;             /* it may go on as a job whose file keeps this
                                   many bytes (jobs.h); 0: never */
    docker_cancel_fn detach_due; /* polled with cancelled: true asks the
                                    agent to keep it running as a job */
    void *ctx;
} agent_run_t;

/* How a command ended, as far as the agent said. */
typedef struct {
    int exit_code;       /* 128+signal when killed; -1: unknown */
    int64_t cpu_ms;      /* CPU time of it and all it started that ended; -1: unknown */
    int64_t max_rss_kb;  /* the largest peak RSS among them; -1: unknown */
    bool output_limited; /* killed at output_limit */
    icap_report_t wd;    /* what the agent's inotify watchdog killed */
    bgr_t bg;            /* what it left running, and more (background.h); the
                            caller frees it with bgr_free, whatever agent_run
                            returned */
    int job;             /* AGENT_DETACHED: its job number */
    char *jobs;          /* ends of earlier jobs not told yet (FS_JOBS, jobs.h),
                            or NULL; the caller frees it */
    size_t jobs_len;
} agent_exit_t;

/* Run a command through the link, streaming its output. */
agent_err_t agent_run(agent_link_t *l, const agent_run_t *r, agent_exit_t *ex);

/* Write a file atomically through the link.  0 when written; -1 when not
 * (then write through Docker's archive API: it decides the unusual cases,
 * such as a folder in the way, as it always did). */
int agent_write(agent_link_t *l, const char *abspath, const void *data, size_t len, unsigned mode,
                int64_t mtime);

/* The sandbox's limits as its cgroup says (-1: none). */
typedef struct {
    int64_t memory, memory_swap, pids, cpu_quota, cpu_period;
} agent_limits_t;

int agent_limits(agent_link_t *l, agent_limits_t *out);

#endif
