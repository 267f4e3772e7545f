/* shepherd.h -- one command of the agent, and everything it starts.
 *
 * A command that leaves its process group (setsid), double-forks and
 * clears its environment (env -i) escapes both a group kill and the
 * TALKBACK_RUN marker.  So the agent runs each command under a shepherd:
 * a child of the agent's worker that makes itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER), forks the command and waits.  Every orphan of
 * the command, however it got away, is re-parented to the shepherd, so
 * "the processes of this command" is the shepherd's process tree, whatever
 * they did to their session or environment.  No cgroup is needed: the
 * sandboxes of a cgroup v1 host cannot make one.
 *
 * The worker talks to the shepherd with two signals and reads fixed-size
 * records (shep_rec_t) from a pipe:
 *   FAILED   the command could not be exec'd (nothing ran);
 *   EXITED   the command ended; with the CPU time and peak RSS of every
 *            process of it that ended so far (getrusage RUSAGE_CHILDREN),
 *            and err 1 when a watch of what it left follows (see below).
 *            When nothing of it is left the shepherd exits at once;
 *   ENDED    the shepherd killed what was left and is about to exit;
 *   BG_LEFT, BG_WATCHED, BG_DIED, BG_PORTS  what the command left
 *            running, watched when the RUN asked for it (bgwatch.h): one
 *            BG_LEFT per program at the end of the watch window, then
 *            BG_WATCHED; later one BG_DIED per program that ends, one
 *            BG_PORTS per program that started listening late.  Their item
 *            (bgwatch.h) follows the record in the same write.
 * SIGTERM (shep_stop: timeout, cancel, output limit, or the worker's
 * death) freezes the whole tree with SIGSTOP, walking it again while new
 * processes turn up, so a fork bomb cannot outrun it, then SIGKILLs it and
 * reaps everything.  SIGUSR1 (shep_release: the command ended normally
 * and its output is read) lets the shepherd exit and leave what is still
 * running alone -- a server the model started on purpose keeps running --
 * unless those processes fill half the sandbox's process limit: a fork
 * bomb the command left behind is killed then, not kept.  When the RUN
 * asked for a watch, the shepherd first watches what it left (bgwatch.h),
 * and stays, as their subreaper, while any of those programs runs, to say
 * when it ends; it no longer dies with the worker then (a server outlives
 * a restart of the agent's worker, as before).
 */
#ifndef TALKBACK_AGENT_SHEPHERD_H
#define TALKBACK_AGENT_SHEPHERD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum {
    SHEP_EXITED = 1, /* status, cpu_ms, rss_kb */
    SHEP_ENDED,      /* status (of the command, if it ended only now), cpu_ms, rss_kb */
    SHEP_FAILED,     /* err: why the command could not be exec'd */
    SHEP_BG_LEFT,    /* err: length of the item that follows */
    SHEP_BG_WATCHED, /* the window is over: no more BG_LEFT */
    SHEP_BG_DIED,    /* err: length of the item that follows */
    SHEP_BG_PORTS    /* err: the item of a program, running, that listens
                        now (it did not yet when it was said running) */
} shep_kind_t;

/* One record, written in one write (atomic: smaller than PIPE_BUF). */
typedef struct {
    int32_t kind;
    int32_t status; /* a wait status */
    int32_t pid;    /* the command's */
    int32_t err;    /* FAILED: an errno */
    int64_t cpu_ms;
    int64_t rss_kb;
} shep_rec_t;

/* What to run. */
typedef struct {
    char **argv;
    char **envp;
    const char *cwd;  /* NULL: the agent's */
    int in;           /* becomes stdin; -1: /dev/null */
    int out, err;     /* become stdout and stderr */
    int64_t watch_ms; /* watch what it leaves running this long after its
                         end (bgwatch.h); 0: leave it alone unwatched */
} shep_cmd_t;

/* Start cmd: under a shepherd when shepherd is true, else as a direct
 * child.  Returns the pid the caller waits for (the shepherd's, or the
 * command's), with *ctl the non-blocking read end of the record pipe (-1
 * without a shepherd); or -1 with *err set when nothing runs.  Without a
 * shepherd it waits until the command was exec'd; with one it does not
 * (an exec error then comes as FAILED). */
pid_t shep_spawn(const shep_cmd_t *cmd, bool shepherd, int *ctl, int *err);

/* Read one record; 1 when read, 0 when none is waiting, -1 at the end.
 * A BG_LEFT or BG_DIED record's item goes into item (cap bytes, at least
 * BG_ITEM_MAX + 1), NUL-terminated. */
int shep_read(int ctl, shep_rec_t *rec, char *item, size_t cap);

/* Kill the command and all it started (asynchronous: ENDED follows). */
void shep_stop(pid_t shepherd);

/* The command ended and its output is read: leave the rest running. */
void shep_release(pid_t shepherd);

/* SIGKILL every process whose environment holds the entry mk (K=V), by a
 * /proc scan repeated while any was found: for what a command left
 * running after its shepherd was gone, and commands run without one.
 * Needs no new process, so it works at the pids limit.  NULL: nothing. */
void shep_kill_marker(const char *mk);

/* Every signal back to its default and none blocked, as a Docker exec
 * starts a process. */
void shep_reset_signals(void);

#endif
