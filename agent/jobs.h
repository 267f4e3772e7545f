/* jobs.h -- a `run` that outlives its call goes on as job N (docs/jobs.md).
 *
 * A RUN sent with jcap (frame.h FN_JOB_CAP) may become a job: its output
 * is spooled to a file as it comes (opened on the first byte, so a command
 * that prints nothing costs nothing), and when the manager's call must
 * answer before the command ended it sends DETACH: the agent numbers the
 * job (1, 2, 3... per sandbox), moves the spool to JOBS_DIR/N/out and
 * keeps writing there instead of sending OUT frames.  The command keeps
 * its timeout and its shepherd.  Its end is written to JOBS_DIR/N/end and
 * told once, in the EXIT of the chat's next RUN with jcap (FS_JOBS),
 * unless `talkback job N` (tbcli.c) told it first (JOBS_DIR/N/told).
 *
 * A job's folder, every file one short line but out:
 *   cmd      the command (bash source)
 *   start    its start, seconds since the epoch
 *   timeout  its timeout in seconds
 *   out      its output, at most jcap bytes
 *   shown    how many bytes of out a result showed so far
 *   end      "STATUS SIGNAL TIMEDOUT ELAPSED_MS END" once it ended
 *            (STATUS 128+SIGNAL when killed; END in epoch seconds), or
 *            "lost" when the agent's worker or the sandbox stopped under it
 *   told     present once its end was told
 *
 * An FS_JOBS item: "N US STATUS US SIGNAL US TIMEDOUT US ELAPSED_MS US CMD"
 * (US the byte 0x1f), CMD at most JOBS_CMD_MAX bytes.  Everything in the
 * sandbox can write these files and items: the manager reads them as
 * hostile bytes (sandbox/jobs.c).
 */
#ifndef TALKBACK_AGENT_JOBS_H
#define TALKBACK_AGENT_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/frame.h"

#define JOBS_DIR      "/run/talkback/jobs"
#define JOBS_SEP      '\x1f'
#define JOBS_CMD_MAX  200 /* bytes of the command an item carries */
#define JOBS_PENDING  16  /* ends waiting to be told, at most */
#define JOBS_ITEM_MAX (JOBS_CMD_MAX + 96)
/* Where `talkback` is put on PATH (a link to the agent's own binary). */
#define JOBS_CLI_LINK "/usr/local/bin/talkback"

typedef struct {
    int64_t cap;      /* bytes its file keeps; 0: never a job */
    int fd;           /* the spool, then the job's out file; -1: none */
    int64_t bytes;    /* written to it */
    bool cut;         /* past cap: the rest was dropped */
    int no;           /* its number once detached; 0 before */
    int64_t start_s;  /* wall clock, seconds */
    int64_t start_ms; /* monotonic */
    bool timed_out;   /* its timeout killed it */
    char *cmd;
    char spool[64];
} jobs_run_t;

/* A run that may become a job when cap > 0; cmd is copied. */
void jobs_run_init(jobs_run_t *r, int64_t cap, const char *cmd, int64_t now_ms);
/* Output of the run: into its spool or job file (bounded by cap). */
void jobs_run_out(jobs_run_t *r, const char *p, size_t n);
/* DETACH: number it and move its spool into the job's folder.  The job's
 * number (its output file's path in path), or -1. */
int jobs_detach(jobs_run_t *r, int64_t timeout_ms, char *path, size_t cap);
/* The command ended with wait status st: a job's end is written and
 * queued to be told; a run's spool is removed. */
void jobs_run_end(jobs_run_t *r, int st, int64_t now_ms);
void jobs_run_free(jobs_run_t *r);
/* The ends not told yet, as FS_JOBS of m (valid until the next call);
 * those told by `talkback job N` are dropped unsaid. */
void jobs_attach(frame_msg_t *m);
/* A worker starts: jobs of an earlier worker or an earlier start of the
 * sandbox are gone (their shepherds died with it): mark them lost; put
 * `talkback` on PATH. */
void jobs_boot(void);

/* `talkback job N` and `talkback jobs` (tbcli.c): the exit status. */
int tbcli_main(int argc, char **argv);

#endif
