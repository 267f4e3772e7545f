/* background.h -- what a command left running in the background, said in
 * its result; what ended between calls, said in the next one; what ran
 * before a stop, said at the resume.
 *
 * The agent's shepherd watches what each of the model's commands leaves
 * running (agent/bgwatch.h) for a short window after its end
 * (background_watch_ms), and its EXIT says each program's fate.  The
 * result then says, after the output and the hints:
 *
 *   [`python3 crash.py` (pid 14), started in the background, exited at
 *   once with status 3: it is not running. Its last lines, in
 *   /work/bg/crash.log: ...]
 *   [`python3 -m http.server 8124` (pid 31), started in the background,
 *   could not take its port: ... Port 8124 is held by python3 (pid 14),
 *   started earlier: ...]
 *   [Listening now, in the background: 0.0.0.0:8124 (python3, pid 31).
 *   ...]
 *
 * naming only what this command started.  A program of the chat that
 * ends later (between calls) is said once, at the top of the chat's next
 * result:
 *
 *   [Since the last call, `node app.js` (pid 20), which ran in the
 *   background, exited with status 1: it is not running now. ...]
 *
 * And the set of programs running, whenever it changes, is kept in
 * state_dir (kept/kept.h: <id>.background, outside the sandbox), so the
 * resume notice after any stop names them (notices.c).
 *
 * Everything here comes from the sandbox: every field is bounded, cleaned
 * of control bytes and backticks, and an item that does not parse is
 * dropped.  Nothing is said when nothing was left behind, when what was
 * left runs without listening, or ended with status 0 within the window.
 */
#ifndef TALKBACK_SANDBOX_BACKGROUND_H
#define TALKBACK_SANDBOX_BACKGROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "kept/kept.h"
#include "proto/frame.h"

/* What an EXIT said (malloc'ed copies of its lists; NULL: absent). */
typedef struct {
    char *left, *died, *alive;
    size_t left_len, died_len, alive_len;
    bool has_alive; /* the set running now was sent (it changed) */
} bgr_t;

/* Ask a RUN for the watch (watch_ms 0: none). */
void bgr_run(frame_msg_t *run, int64_t watch_ms);
/* Take an EXIT's lists into r (what r held is freed first). */
void bgr_take(bgr_t *r, const frame_msg_t *exit);
void bgr_free(bgr_t *r);

/* Bounds of what is said of one program. */
#define BGI_LABEL_MAX      120
#define BGI_LOG_MAX        160
#define BGI_PORTS_MAX      240
#define BGI_TAIL_MAX       700
#define BGI_TAIL_MAX_LINES 8
#define BGI_MAX            8 /* programs said per list */

/* One program, parsed and cleaned. */
typedef struct {
    long pid;
    char state;  /* 'x' exited, 'k' killed, 'r' running */
    bool during; /* it ended while this call's command ran ("X", "K") */
    int code;    /* exit status, or signal */
    char ports[BGI_PORTS_MAX];
    char label[BGI_LABEL_MAX];
    char log[BGI_LOG_MAX];
    char tail[BGI_TAIL_MAX];
} bgi_t;

/* Parse a list (NUL-terminated items) into out (at most max): how many. */
size_t bgi_parse(const char *list, size_t len, bgi_t *out, size_t max);

/* Run a read-only command in the sandbox (hints.h's probe), for who
 * holds a port; may be NULL. */
typedef int (*bg_probe_fn)(void *ctx, const char *command, textbuf_t *out);

/* The lines for this command's result: what it left that ended or
 * listens (output: the command's own output, which a program writing to
 * it shares). */
void bg_left_lines(const bgr_t *r, const char *output, size_t output_len, bg_probe_fn probe,
                   void *ctx, textbuf_t *t);
/* The lines for what ended between calls (during false: the top of the
 * result), or while this call's command ran (during true: after its
 * output, e.g. a server the command stopped). */
void bg_died_lines(const bgr_t *r, bool during, textbuf_t *t);

/* Keep the set running now in container id's record, when the EXIT sent
 * it (kept/kept.h). */
void bg_record(const kept_t *k, const char *id, const bgr_t *r);
/* The resume's words for what ran before the stop, from container id's
 * record (used up): "Running before the stop, in the background: ...";
 * nothing when there is no record. */
void bg_resume_words(const kept_t *k, const char *id, textbuf_t *t);

#endif
