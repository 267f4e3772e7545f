/* bgwatch.h -- what a command left running in the background, as its
 * shepherd sees it (shepherd.h).
 *
 * When a command ends and processes it started still run (a server
 * started with &, nohup, setsid, a daemon), its shepherd -- their
 * subreaper, so the one process that learns how each of them ends --
 * watches them for a short window after the command's end: half the
 * RUN's bgw milliseconds (bgw at most BG_WATCH_MAX_MS), up to twice bgw
 * only while one of them is still busy starting (it used CPU, or waited
 * for one, within BG_BUSY_MS: a server on a loaded machine); over early
 * once each of them has ended or listens on a port.  Then it says each one's fate in a
 * record (SHEP_BG_LEFT): ended with a status, killed by a signal, or
 * running and listening on which ports.  It keeps watching those still
 * running for the rest of their lives and says when one ends
 * (SHEP_BG_DIED), so the chat's next result can say it; one that starts
 * listening only later (within BG_LATE_MS) is said again with its ports
 * (SHEP_BG_PORTS), for the record the resume names.  A command that
 * left nothing costs nothing: its shepherd exits at its end, as before.
 *
 * "The programs" are the shepherd's own children once the command ended
 * (every orphan of the command is re-parented to it; a daemon that forks
 * again joins when its parent ends).  A shell among them (the subshell
 * of `cd x && prog &`, a fork of the command's shell) is named after its
 * child that is no shell; a shell started on its own (sh -c '...') after
 * its own words.
 * The file a program writes to (its stdout or stderr) is named, and its
 * last lines go with an end.
 *
 * One item on the wire (frame.h FS_BG_LEFT, FS_BG_DIED, FS_BG_ALIVE) is
 * seven fields separated by BG_SEP:
 *   pid  state  code  ports  label  log  tail
 * state "x" exited (code: its status), "k" killed (code: the signal), "r"
 * running ("X" and "K" in FS_BG_DIED: it ended while the command of
 * that EXIT ran, not between calls); ports "ADDR:PORT (comm, pid N); ..." of the sockets it and its
 * children listen on; label its command line; log the file it wrote to,
 * or ""; tail the last lines of that file (ended ones only).  Every field
 * is bounded and holds no NUL and no BG_SEP; the manager reads them as
 * hostile all the same (sandbox/background.c).
 */
#ifndef TALKBACK_AGENT_BGWATCH_H
#define TALKBACK_AGENT_BGWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BG_SEP           '\x1f'
#define BG_WATCH_MAX_MS  1500  /* the longest window the agent keeps */
#define BG_SCAN_MS       10    /* how often the window looks */
#define BG_EARLY_MS      100   /* ... but in its first 100 ms */
#define BG_EARLY_SCAN_MS 2     /* ... every 2 ms: a program that ends at once */
#define BG_BUSY_MS       200   /* CPU used this recently: still starting */
#define BG_FD_SCAN_MAX   64    /* processes whose sockets one look reads */
#define BG_LATE_MS       30000 /* after the window, a program said running */
#define BG_LATE_EVERY_MS 250   /* ... is looked at this often for its ports */
#define BG_PROCS_MAX     8     /* programs followed per command */
#define BG_LABEL_MAX     160
#define BG_LOG_MAX       200
#define BG_PORTS_MAX     240
#define BG_TAIL_MAX      700
#define BG_TAIL_LINES    8
/* One encoded item, at most. */
#define BG_ITEM_MAX      (32 + BG_PORTS_MAX + BG_LABEL_MAX + BG_LOG_MAX + BG_TAIL_MAX)

typedef struct {
    pid_t pid;
    bool dead;
    int status; /* its wait status, once dead */
    char label[BG_LABEL_MAX];
    char log[BG_LOG_MAX];
    char ports[BG_PORTS_MAX];
    unsigned long cpu; /* CPU ticks of its tree at the last look */
    int64_t grew;      /* when they last grew (monotonic ms) */
} bg_proc_t;

typedef struct {
    pid_t self;             /* the shepherd */
    int64_t until;          /* the window's end (monotonic ms); 0: no window */
    int64_t hard;           /* its end while a program is still starting */
    int64_t since;          /* when it opened */
    bool busy;              /* one that is neither ended nor listening used
                               CPU within BG_BUSY_MS: still starting up */
    char cmd[BG_LABEL_MAX]; /* the command's own words, as a label reads */
    size_t n;
    bg_proc_t p[BG_PROCS_MAX];
} bg_set_t;

/* An empty set for shepherd self, whose command is argv. */
void bg_init(bg_set_t *s, pid_t self, char *const *argv);
/* Open the window (now + ms / 2, monotonic) and take the first look.  A
 * program still starting (using CPU, neither ended nor listening: a
 * server on a loaded machine) keeps it open up to now + ms, so the
 * window never passes ms (BG_WATCH_MAX_MS at most). */
void bg_start(bg_set_t *s, int64_t now, int64_t ms);
/* Whether the window is open at now. */
bool bg_open(const bg_set_t *s, int64_t now);
/* Child pid of the shepherd ended with wait status st. */
void bg_ended(bg_set_t *s, pid_t pid, int st);
/* Look at the process table: children that are new join (up to
 * BG_PROCS_MAX), the living ones' names, files and ports are read again. */
void bg_scan(bg_set_t *s);
/* Every program has ended or listens: nothing to wait for. */
bool bg_settled(const bg_set_t *s);
/* Whether one of them still runs. */
bool bg_any_alive(const bg_set_t *s);
/* Encode p as one item into out (cap bytes, NUL-terminated; cap at least
 * BG_ITEM_MAX): its length. */
size_t bg_item(const bg_proc_t *p, char *out, size_t cap);

#endif
