/* frame.h -- the wire contract between the sandbox manager and the agent
 * inside each sandbox (agent/agent.c).
 *
 * The agent is a static program that runs as a sandbox's main process and
 * speaks over its stdin/stdout, which the manager reaches through one
 * Docker attach connection (sandbox/agent_link.c).  It cannot link msgpack-c
 * (static builds), so this file carries its own small codec and depends
 * on libc only (and on common/textbuf.c, libc only too): both sides
 * compile it.
 *
 * One frame:
 *
 *   offset  size  what
 *        0     4  magic "TBA" and FRAME_VERSION
 *        4     4  payload length, big-endian (at most the reader's max)
 *        8     4  CRC-32 of the payload, big-endian
 *       12     4  CRC-32 of bytes 0..11, big-endian
 *       16     n  payload: one msgpack map of short string keys to scalars
 *
 * Why more than a length prefix: both byte streams can lose alignment.
 * The agent's stdout is the sandbox's stdout, so anything in the sandbox
 * may write into it (/proc/1/fd/1); a manager killed mid-frame leaves half
 * a frame in the agent's stdin; an agent killed mid-frame leaves half a
 * frame in the manager's stream.  The header checksum lets a reader that
 * lost its place find the next real frame by scanning for the magic, and
 * the payload checksum makes garbage that happens to start with a valid
 * header fail instead of being read as a message.
 *
 * Payload values are nil, booleans, integers and byte strings (msgpack
 * str or bin); arrays and maps are refused.  Lists (argv, env) travel as
 * one byte string of NUL-terminated items.  Unknown keys are skipped, so
 * either side may add fields; a changed meaning takes a new version.
 *
 * The reader decodes from bytes anyone in the sandbox can write: it never
 * reads past what it was given, never allocates more than max + one
 * header + one feed, and a malformed stream is an error, not a crash
 * (fuzzed: tests/fuzz/fuzz_frame.c).
 */
#ifndef TALKBACK_FRAME_H
#define TALKBACK_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/textbuf.h"

#define FRAME_VERSION   1
#define FRAME_HDR       16u
/* Largest payload either side sends: a write_file of write_file_max plus
 * room, or a run's stdin.  The manager reads the agent with a far smaller
 * limit (sandbox/agent_link.c). */
#define FRAME_MAX       (64u * 1024u * 1024u)
/* Largest payload the agent sends (output travels in chunks of a few KiB):
 * what the manager's reader accepts from a sandbox. */
#define FRAME_AGENT_MAX (256u * 1024u)
/* Most keys in one payload (ours use fewer than 10). */
#define FRAME_MAX_KEYS  64u

typedef enum {
    /* manager -> agent.  Every one carries n, the nonce of its link (one
     * attach connection); the agent acts only on frames whose n is that of
     * the last HELLO it answered, so a request of a link given up on is
     * never run later by a restarted worker. */
    FRAME_HELLO = 1,  /* n: nonce, iw, ii.  Answer: READY with the same n */
    FRAME_RUN = 2,    /* id, argv, env, cwd, in (absent: stdin closed), mk,
                            tmo, merge, ol, shep, wdr, bgw */
    FRAME_KILL = 3,   /* id.  Answer: DONE id once everything is killed */
    FRAME_WRITE = 4,  /* id, path, d, mode, mt.  Answer: DONE or FAIL */
    FRAME_LIMITS = 5, /* id.  Answer: LIMITS_OK */
    FRAME_DETACH = 6, /* id: the RUN (sent with jcap) goes on as a job, its
                         output into the job's file.  Answer: DETACHED */
    /* agent -> manager */
    FRAME_READY = 16,     /* v, pid, n (0 when a new agent says hello unasked) */
    FRAME_STARTED = 17,   /* id, pid: the command runs */
    FRAME_OUT = 18,       /* id, s (1 stdout, 2 stderr), d */
    FRAME_EXIT = 19,      /* id, st (exit status; 128+signal), sig (0 or signal),
                            cpu, rss (when known), olim, img (the images the
                            command wrote, if any), wdn, wdp, wdw, wdi, wdc
                            (what the watchdog killed, if anything), bgl,
                            bgd, bga (programs left running: bgw) */
    FRAME_DONE = 20,      /* id: a WRITE or KILL is done (a KILL's: cpu, rss
                            when known) */
    FRAME_FAIL = 21,      /* id, err (errno), msg: nothing was done */
    FRAME_LIMITS_OK = 22, /* id, mem, swap, pids, cq, cp (-1: unlimited) */
    FRAME_DETACHED = 23   /* id, job (its number), path (its output's file):
                             no EXIT follows for this id; job 0: not
                             detached (it ended, or cannot be kept) */
} frame_type_t;

/* Integer fields, by their key on the wire. */
typedef enum {
    FN_VERSION,         /* "v" */
    FN_NONCE,           /* "n" */
    FN_PID,             /* "pid" */
    FN_STATUS,          /* "st" */
    FN_SIGNAL,          /* "sig" */
    FN_ERRNO,           /* "err" */
    FN_STREAM,          /* "s" */
    FN_MODE,            /* "mode" */
    FN_MTIME,           /* "mt" */
    FN_MEM,             /* "mem"  memory limit, bytes */
    FN_SWAP,            /* "swap" memory + the swap it can use (no more than the host has), bytes */
    FN_PIDS,            /* "pids" */
    FN_CPU_QUOTA,       /* "cq"   microseconds per period */
    FN_CPU_PERIOD,      /* "cp" */
    FN_TIMEOUT,         /* "tmo"   RUN: SIGKILL the command's group after this
                      many milliseconds (absent or 0: never) */
    FN_MERGE,           /* "merge" RUN: 1 = stderr is the stdout pipe (2>&1) */
    FN_OUTPUT_LIMIT,    /* "ol"  RUN: past this many bytes of output the
                        command and all it started are killed (0: none) */
    FN_LIMITED,         /* "olim"  EXIT: 1 = killed at the output limit */
    FN_CPU_MS,          /* "cpu"   EXIT, DONE of a KILL: CPU time of the command
                      and every process of it that ended, milliseconds */
    FN_RSS_KB,          /* "rss"   EXIT, DONE of a KILL: the largest peak RSS of
                      those processes, KiB */
    FN_SHEPHERD,        /* "shep"  RUN: 0 = run without the shepherd
                      (agent/shepherd.h), for measurements */
    FN_INOTIFY_WATCHES, /* "iw"  HELLO: inotify watches the sandbox's
                             processes may hold (agent/watchdog.h); 0: no cap */
    FN_INOTIFY_INSTANCES, /* "ii"  HELLO: inotify instances, the same way */
    FN_WD_KILLED,         /* "wdn" EXIT: processes the watchdog killed since
                             the last EXIT for holding past those caps */
    FN_WD_PID,            /* "wdp" EXIT: the biggest of them: its pid, */
    FN_WD_WATCHES,        /* "wdw"   the watches it held, */
    FN_WD_INSTANCES,      /* "wdi"   the instances it held */
    FN_WD_REPORT,         /* "wdr" RUN: 1 = this command's EXIT may carry
                             those fields (the model reads its result; a
                             probe's EXIT does not take them) */
    FN_BG_WATCH,          /* "bgw" RUN: watch what the command leaves
                             running this many ms after its end
                             (agent/bgwatch.h); its EXIT then carries
                             bgl, bgd and bga.  Absent or 0: no watch */
    FN_JOB_CAP,           /* "jcap" RUN: it may go on as a job (DETACH), whose
                             file keeps this many bytes of its output */
    FN_JOB,               /* "job" DETACHED: the job's number */
    FN__COUNT
} frame_num_t;

/* Byte-string fields, by their key on the wire. */
typedef enum {
    FS_ARGV,     /* "argv" NUL-terminated items */
    FS_ENV,      /* "env"  NUL-terminated K=V items */
    FS_CWD,      /* "cwd" */
    FS_STDIN,    /* "in" */
    FS_DATA,     /* "d" */
    FS_PATH,     /* "path" */
    FS_MSG,      /* "msg" */
    FS_MARKER,   /* "mk"   K=V every process of the command carries */
    FS_IMAGES,   /* "img"  EXIT: image files the command created or changed
                  under /work, in the order written, as NUL-terminated
                  items "BYTES WIDTHxHEIGHT KIND PATH", KIND one of
                  PNG JPEG GIF WebP (0x0: size unknown) */
    FS_WD_COMM,  /* "wdc"  EXIT: the name (comm) of the process FN_WD_PID */
    FS_BG_LEFT,  /* "bgl"  EXIT: what this command left running, one
                  NUL-terminated item per program (agent/bgwatch.h) */
    FS_BG_DIED,  /* "bgd"  EXIT: programs of earlier commands that ended since
                  the last EXIT that said so, items as bgl */
    FS_BG_ALIVE, /* "bga" EXIT: every watched program running now, items as
                  bgl; present only when that changed since it was last sent */
    FS_JOBS,     /* "jobs" EXIT of a RUN with jcap: jobs that ended and were
                  not told yet, one NUL-terminated item each (agent/jobs.h) */
    FS__COUNT
} frame_str_t;

/* One decoded or to-be-encoded message.  Byte strings are views: after
 * frame_decode they point into the decoded buffer. */
typedef struct {
    uint32_t type;    /* "t", a frame_type_t */
    uint64_t id;      /* "id", 0 when absent */
    uint32_t has_num; /* bit i: num[i] present */
    int64_t num[FN__COUNT];
    uint32_t has_str; /* bit i: str[i] present */
    const char *str[FS__COUNT];
    size_t str_len[FS__COUNT];
} frame_msg_t;

/* Setters and getters of the optional fields. */
void frame_set_num(frame_msg_t *m, frame_num_t f, int64_t v);
void frame_set_str(frame_msg_t *m, frame_str_t f, const void *p, size_t len);
bool frame_has_num(const frame_msg_t *m, frame_num_t f);
bool frame_has_str(const frame_msg_t *m, frame_str_t f);
/* The value, or dflt when absent. */
int64_t frame_num(const frame_msg_t *m, frame_num_t f, int64_t dflt);

/* Items (NULL-terminated) as one malloc'ed byte string of NUL-terminated
 * items, the form of argv and env; NULL when out of memory. */
char *frame_join_list(const char *const *items, size_t *len);

/* Whether t is one of frame_type_t. */
bool frame_type_known(uint32_t t);

/* The stream number under which the manager's side hands an EXIT's image
 * list to a run's output callback (1 and 2 are stdout and stderr). */
#define FRAME_STREAM_IMAGES 3

/* Append one whole frame (header and payload) holding m to out (the one
 * growable buffer, common/textbuf.h).  0, or -1 when out of memory, past
 * out's bound, or the payload would exceed FRAME_MAX; then out holds no
 * part of the frame. */
int frame_encode(const frame_msg_t *m, textbuf_t *out);

/* Decode one payload (no header).  0 with *m filled, -1 when it is not a
 * map of the expected shape, holds trailing bytes, or names an unknown
 * type.  Views in *m point into p. */
int frame_decode(const void *p, size_t len, frame_msg_t *m);

/* CRC-32 (IEEE 802.3, the zlib one). */
uint32_t frame_crc32(const void *p, size_t len);

/* Streaming reader: feed bytes as they come, take frames out. */
typedef struct {
    size_t max;  /* largest payload accepted */
    bool resync; /* on a bad frame: skip a byte and look for the
                           next magic (true), or stop for good (false) */
    bool bad;    /* stopped: the stream is malformed */
    unsigned char *buf;
    size_t pos, have, cap; /* unread bytes are buf[pos..have) */
    uint64_t skipped;      /* bytes dropped while looking for a frame */
} frame_reader_t;

void frame_reader_init(frame_reader_t *r, size_t max, bool resync);
void frame_reader_free(frame_reader_t *r);
/* Append bytes.  0, or -1 when out of memory or already bad. */
int frame_reader_feed(frame_reader_t *r, const void *p, size_t len);
/* The next complete frame: 1 with *m filled (views valid until the next
 * feed or next call), 0 when more bytes are needed, -1 when the stream is
 * malformed and resync is off (then it stays -1). */
int frame_reader_next(frame_reader_t *r, frame_msg_t *m);
/* Whether part of a frame is buffered. */
bool frame_reader_partial(const frame_reader_t *r);
/* Give up on the buffered partial frame: drop one byte and scan again
 * (a writer that died mid-frame will never send the rest). */
void frame_reader_skip(frame_reader_t *r);

/* Release the reader's buffer when nothing is buffered (after a large
 * frame, so an idle reader holds no memory). */
void frame_reader_trim(frame_reader_t *r);

/* Split a NUL-terminated list (argv, env) in place of an array: calls
 * fn(ctx, item) for each item; items must end in NUL.  Returns the item
 * count, or -1 when the last item is not terminated. */
int frame_list_each(const char *p, size_t len, void (*fn)(void *ctx, const char *item), void *ctx);

#endif
