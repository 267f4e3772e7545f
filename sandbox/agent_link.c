/* agent.c -- links to the agents inside sandboxes (see agent.h).
 *
 * A link is one Docker attach connection and one reader thread.  Callers
 * write whole frames under the link's write lock; the reader demuxes
 * Docker's framing and hands each frame to the call with its id, under the
 * link's lock.  A call waits on the link's condition variable in steps of
 * 100 ms, so it polls its cancel check as often as the exec path does.
 *
 * Opening a link: attach, then HELLO with a random nonce until READY with
 * that nonce comes back.  Until then the reader skips whatever is not a
 * frame (attach starts mid-stream: half a frame of an earlier link, or
 * bytes something in the sandbox wrote to the container's stdout); from
 * then on one byte out of place ends the link.
 *
 * What ends a link: the stream ends or fails (the sandbox stopped), a
 * malformed frame or an unexpected READY (a restarted worker), a frame
 * header whose payload does not follow within agent_frame_deadline (root
 * in the sandbox can write a valid header into
 * the agent's stdout: its announced payload would swallow every frame
 * after it), no answer to a command within AGENT_ACK_MS, or the agent not
 * reading.  Its calls are woken and told: one whose command had started
 * ends with a text saying the link broke, one whose start was not heard
 * of is killed by its marker and run through exec; the sandbox's table
 * entry keeps the link until a later call replaces it.  Attaching again
 * is tried at once, then with a growing delay while it keeps failing: a
 * sandbox whose agent is gone costs one failed attach per delay.
 */
#include "sandbox/agent_link.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/list.h"
#include "common/log.h"
#include "proto/frame.h"
#include "sandbox/jobs.h"
#include "proto/proto.h"

/* How long a command may wait for the agent's STARTED (or FAIL). */
#define AGENT_ACK_MS         10000
/* How long a KILL, a WRITE or LIMITS may wait for the answer. */
#define AGENT_KILL_WAIT_MS   5000
#define AGENT_WRITE_WAIT_MS  30000
#define AGENT_LIMITS_WAIT_MS 2000
/* Opening a link: HELLO every AGENT_HELLO_EVERY_MS for AGENT_HELLO_MS, or
 * for AGENT_HELLO_START_MS right after a start (a sandbox just started on
 * a busy host may take seconds to run the agent).  A call that attaches
 * on its own way waits the shorter time, then runs through exec. */
#define AGENT_HELLO_MS       1500
#define AGENT_HELLO_START_MS 5000
#define AGENT_HELLO_EVERY_MS 400
/* Sending a frame may wait this long for the agent to read. */
#define AGENT_SEND_MS        30000
/* Attach retries while they fail: 1 s doubling up to 60 s. */
#define AGENT_RETRY_MIN_MS   1000
#define AGENT_RETRY_MAX_MS   60000
/* After the stream ended (the sandbox stopped), attach again only when the
 * manager starts it (agent_note), or after this long. */
#define AGENT_EOF_RETRY_MS   30000
/* How often a waiting call polls its cancel check. */
#define AGENT_POLL_MS        100
/* The agent's own stderr (its init's warnings) is logged, this much. */
#define AGENT_STDERR_LOG     256

typedef enum { C_RUN, C_WRITE, C_KILL, C_LIMITS } call_kind_t;

typedef struct call {
    uint64_t id;
    call_kind_t kind;
    bool started, done, failed, muted;
    bool killed; /* the agent's DONE to our KILL */
    int status;
    int64_t cpu_ms, rss_kb; /* -1: not told */
    bool limited;           /* killed at the output limit */
    icap_report_t wd;       /* what the agent's watchdog killed (EXIT) */
    bgr_t bg;               /* what it left running (EXIT: background.h) */
    int job;                /* DETACHED: its job number (-1: not asked, 0: refused) */
    char *jobs;             /* EXIT: ends of earlier jobs (jobs.h) */
    size_t jobs_len;
    agent_limits_t lim;
    docker_output_fn on_output;
    void *ctx;
    list_node_t link; /* on its link's calls */
} call_t;

struct agent_link {
    agent_pool_t *pool;
    char id[72];
    int fd;
    pthread_t reader;
    bool reader_started;
    pthread_mutex_t mu; /* calls, dead, ready */
    pthread_cond_t cv;
    pthread_mutex_t wmu; /* one frame at a time on the socket */
    int refs;            /* guarded by the pool's lock */
    bool dead, ready;
    bool misbehaved;     /* restart the worker before attaching again */
    bool eof;            /* the stream ended */
    uint64_t frames;     /* frames dispatched so far */
    int64_t deadline_ms; /* agent_frame_deadline */
    int64_t opened_ms;   /* when its attach began (proto_mono_ms) */
    int64_t nonce;
    long agent_pid;
    uint64_t next_id;
    list_t calls;
    docker_demux_t dm;
    frame_reader_t fr;
    char *early; /* stream bytes that came with the attach answer */
    size_t early_len;
};

typedef struct entry {
    strmap_node_t node; /* keyed by id */
    char id[72];
    agent_link_t *link;
    bool has_agent, attaching;
    bool restart; /* kill the worker before attaching */
    int fails;
    int64_t retry_at;
} entry_t;

struct agent_pool {
    docker_t *d;
    char *bin; /* the agent program, read once */
    size_t bin_len;
    int64_t deadline_ms; /* agent_frame_deadline */
    char version[17];    /* a hash of it (agent_version) */
    pthread_mutex_t mu;
    strmap_t entries; /* by container id */
};

/* ---- the binary ----------------------------------------------------------- */

bool agent_pool_enabled(const agent_pool_t *p)
{
    return p && p->bin;
}

const char *agent_pool_version(const agent_pool_t *p)
{
    return agent_pool_enabled(p) ? p->version : "";
}

docker_err_t agent_install(agent_pool_t *p, const char *id)
{
    if (!agent_pool_enabled(p))
        return DOCKER_EARG;
    long st;
    json_t *ans = NULL;
    docker_err_t e =
        docker_put_file(p->d, id, AGENT_CMD_PATH, p->bin, p->bin_len, 0755, 0, &st, &ans);
    if (e != DOCKER_OK)
        log_warn("could not copy the agent into %.12s: %s", id, docker_message(ans));
    json_decref(ans);
    return e;
}

/* ---- links: sending ------------------------------------------------------- */

static void link_die(agent_link_t *l, bool misbehaved, const char *why)
{
    /* Called with l->mu held. */
    if (!l->dead) {
        l->dead = true;
        l->misbehaved = misbehaved;
        log_info("agent link to %.12s closed: %s", l->id, why);
        shutdown(l->fd, SHUT_RDWR);
    }
    pthread_cond_broadcast(&l->cv);
}

static void link_kill(agent_link_t *l, bool misbehaved, const char *why)
{
    pthread_mutex_lock(&l->mu);
    link_die(l, misbehaved, why);
    pthread_mutex_unlock(&l->mu);
}

static bool link_dead(agent_link_t *l)
{
    pthread_mutex_lock(&l->mu);
    bool dead = l->dead;
    pthread_mutex_unlock(&l->mu);
    return dead;
}

/* Send one message as a frame, stamped with the link's nonce (the agent
 * acts only on frames of the link it last said READY to).  0, or -1 (the
 * link is then dead). */
static int link_send(agent_link_t *l, const frame_msg_t *m)
{
    textbuf_t b = { 0 };
    frame_msg_t stamped = *m;
    frame_set_num(&stamped, FN_NONCE, l->nonce);
    if (frame_encode(&stamped, &b) != 0)
        return -1;
    int rc = 0;
    int64_t deadline = proto_mono_ms() + AGENT_SEND_MS;
    pthread_mutex_lock(&l->wmu);
    size_t off = 0;
    while (off < b.len) {
        if (link_dead(l)) {
            rc = -1;
            break;
        }
        ssize_t n = send(l->fd, b.buf + off, b.len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            link_kill(l, false, "the connection failed");
            rc = -1;
            break;
        }
        if (proto_mono_ms() >= deadline) {
            link_kill(l, true, "the agent does not read");
            rc = -1;
            break;
        }
        struct pollfd p = { l->fd, POLLOUT, 0 };
        poll(&p, 1, AGENT_POLL_MS);
    }
    pthread_mutex_unlock(&l->wmu);
    textbuf_free(&b);
    return rc;
}

/* ---- links: the reader ------------------------------------------------------ */

static call_t *call_find(agent_link_t *l, uint64_t id)
{
    list_for_each_item(c, &l->calls, call_t, link) {
        if (c->id == id)
            return c;
    }
    return NULL;
}

/* CPU time and peak memory from an EXIT or a KILL's DONE (not negative). */
static void take_usage(call_t *c, const frame_msg_t *m)
{
    int64_t cpu = frame_num(m, FN_CPU_MS, -1), rss = frame_num(m, FN_RSS_KB, -1);
    if (cpu >= 0 && rss >= 0) {
        c->cpu_ms = cpu;
        c->rss_kb = rss;
    }
}

/* One frame from the agent, with l->mu held.  False: the link must end. */
static bool dispatch(agent_link_t *l, const frame_msg_t *m)
{
    l->frames++;
    if (m->type == FRAME_READY) {
        if (!l->ready) {
            if (frame_num(m, FN_NONCE, 0) == l->nonce &&
                frame_num(m, FN_VERSION, 0) == FRAME_VERSION) {
                l->ready = true;
                l->agent_pid = (long)frame_num(m, FN_PID, 0);
                l->fr.resync = false; /* aligned: from now on, strict */
                pthread_cond_broadcast(&l->cv);
            }
            return true;
        }
        /* A READY nobody asked for: a new worker, the old one is gone. */
        return frame_num(m, FN_NONCE, 0) == l->nonce;
    }
    if (!l->ready)
        return true; /* a frame of an earlier link */
    call_t *c = call_find(l, m->id);
    if (!c)
        return m->type >= FRAME_READY; /* a late answer to a call that gave up */
    switch (m->type) {
    case FRAME_STARTED: c->started = true; break;
    case FRAME_OUT:
        if (c->kind != C_RUN || !frame_has_str(m, FS_DATA))
            return false;
        if (!c->muted && c->on_output)
            c->on_output(c->ctx, (int)frame_num(m, FN_STREAM, 1) == 2 ? 2 : 1, m->str[FS_DATA],
                         m->str_len[FS_DATA]);
        return true;
    case FRAME_EXIT:
        c->done = true;
        c->status = (int)frame_num(m, FN_STATUS, -1);
        c->limited = frame_num(m, FN_LIMITED, 0) != 0;
        icap_take(&c->wd, m);
        bgr_take(&c->bg, m);
        free(c->jobs);
        c->jobs = jobs_take(m, &c->jobs_len);
        take_usage(c, m);
        if (!c->muted && c->on_output && frame_has_str(m, FS_IMAGES)) /* images.c's list */
            c->on_output(c->ctx, FRAME_STREAM_IMAGES, m->str[FS_IMAGES], m->str_len[FS_IMAGES]);
        break;
    case FRAME_DONE:
        if (c->kind == C_RUN) {
            c->killed = true;
            take_usage(c, m);
        } else {
            c->done = true;
        }
        break;
    case FRAME_DETACHED:
        c->job = (int)frame_num(m, FN_JOB, 0);
        c->done = c->job > 0;
        break;
    case FRAME_FAIL:
        c->failed = true;
        c->done = true;
        break;
    case FRAME_LIMITS_OK:
        c->lim.memory = frame_num(m, FN_MEM, -1);
        c->lim.memory_swap = frame_num(m, FN_SWAP, -1);
        c->lim.pids = frame_num(m, FN_PIDS, -1);
        c->lim.cpu_quota = frame_num(m, FN_CPU_QUOTA, -1);
        c->lim.cpu_period = frame_num(m, FN_CPU_PERIOD, -1);
        c->done = true;
        break;
    default: return false; /* a manager -> agent type coming back */
    }
    pthread_cond_broadcast(&l->cv);
    return true;
}

typedef struct {
    agent_link_t *l;
    bool oom;
    size_t stderr_logged;
} demux_ctx_t;

static void on_stream(void *ctx, int stream, const char *data, size_t len)
{
    demux_ctx_t *dc = ctx;
    if (stream == 1) {
        if (frame_reader_feed(&dc->l->fr, data, len) != 0)
            dc->oom = true;
    } else if (dc->stderr_logged < AGENT_STDERR_LOG) {
        size_t n =
            len < AGENT_STDERR_LOG - dc->stderr_logged ? len : AGENT_STDERR_LOG - dc->stderr_logged;
        dc->stderr_logged += n;
        log_debug("agent %.12s stderr: %.*s", dc->l->id, (int)n, data);
    }
}

/* Feed stream bytes and handle every complete frame.  False: end. */
static bool link_feed(agent_link_t *l, demux_ctx_t *dc, const char *buf, size_t n, const char **why)
{
    if (!docker_demux_feed(&l->dm, buf, n, on_stream, dc)) {
        *why = "Docker's stream framing broke";
        return false;
    }
    if (dc->oom) {
        *why = "out of memory";
        return false;
    }
    pthread_mutex_lock(&l->mu);
    frame_msg_t m;
    int r;
    bool ok = true;
    while (ok && (r = frame_reader_next(&l->fr, &m)) == 1)
        ok = dispatch(l, &m);
    if (ok && r < 0)
        ok = false;
    if (!ok)
        *why = "a malformed or unexpected frame (the agent restarted, or something in the sandbox "
               "wrote "
               "to its stdout)";
    pthread_mutex_unlock(&l->mu);
    frame_reader_trim(&l->fr);
    return ok;
}

/* When the half frame the reader holds started, or 0 when it holds none.
 * Counted from its start, not from its last byte: after a forged header
 * the agent's own frames keep coming and are swallowed as its payload. */
static int64_t partial_clock(agent_link_t *l, uint64_t *seen, int64_t since)
{
    pthread_mutex_lock(&l->mu);
    bool progressed = l->frames != *seen;
    *seen = l->frames;
    pthread_mutex_unlock(&l->mu);
    if (!frame_reader_partial(&l->fr))
        return 0;
    return progressed || !since ? proto_mono_ms() : since;
}

/* A half frame outlived the deadline.  Before the handshake it is skipped
 * (attach starts mid-stream); after it, the link ends: a frame is written
 * in one go, so a header whose payload does not follow was not written by
 * the agent.  False: the link must end. */
static bool partial_expired(agent_link_t *l, demux_ctx_t *dc, const char **why)
{
    pthread_mutex_lock(&l->mu);
    bool ready = l->ready;
    pthread_mutex_unlock(&l->mu);
    if (ready) {
        *why = "a frame header whose payload did not follow in time (something in the sandbox "
               "wrote to the "
               "agent's stdout)";
        return false;
    }
    frame_reader_skip(&l->fr);
    return link_feed(l, dc, NULL, 0, why);
}

static void *reader_main(void *arg)
{
    agent_link_t *l = arg;
    demux_ctx_t dc = { .l = l };
    const char *why = "the stream ended (the sandbox stopped)";
    bool malformed = false;
    uint64_t seen = 0;
    int64_t since = 0; /* partial_clock */
    char *buf = malloc(65536);
    if (!buf) {
        link_kill(l, false, "out of memory");
        return NULL;
    }
    if (l->early_len && !link_feed(l, &dc, l->early, l->early_len, &why)) {
        malformed = true;
        goto out;
    }
    since = partial_clock(l, &seen, since);
    for (;;) {
        struct pollfd p = { l->fd, POLLIN, 0 };
        int64_t left = since ? since + l->deadline_ms - proto_mono_ms() : -1;
        int r = poll(&p, 1, since ? (left > 0 ? (int)left : 0) : -1);
        if (r < 0 && errno != EINTR)
            break;
        if (r == 0 && since) {
            if (!partial_expired(l, &dc, &why)) {
                malformed = true;
                break;
            }
            since = partial_clock(l, &seen, 0);
            continue;
        }
        if (r <= 0)
            continue;
        ssize_t n = recv(l->fd, buf, 65536, 0);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            why = "the connection failed";
            break;
        }
        if (!link_feed(l, &dc, buf, (size_t)n, &why)) {
            malformed = true;
            break;
        }
        since = partial_clock(l, &seen, since);
    }
out:
    free(buf);
    pthread_mutex_lock(&l->mu);
    /* A malformed stream is realigned by attaching again; a worker that
     * died wrote the padding that made it malformed, and its supervisor
     * has started the next one, so neither needs a restart. */
    l->eof = !malformed && !l->dead;
    link_die(l, false, why);
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ---- links: open and close ------------------------------------------------------ */

static void link_free(agent_link_t *l)
{
    if (!l)
        return;
    if (l->reader_started) {
        link_kill(l, false, "closed by talkback");
        pthread_join(l->reader, NULL);
    }
    if (l->fd >= 0)
        close(l->fd);
    frame_reader_free(&l->fr);
    free(l->early);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->wmu);
    free(l);
}

static int64_t random_nonce(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
            v = 0;
        close(fd);
    }
    v ^= (uint64_t)proto_mono_ms() * 0x9e3779b97f4a7c15ull;
    int64_t n = (int64_t)(v >> 2);
    return n ? n : 1;
}

/* Wait on the link's condition variable for at most ms. */
static void link_wait(agent_link_t *l, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

/* Attach to container id and shake hands; NULL when that fails (*gone:
 * the container does not exist). */
static agent_link_t *link_open(agent_pool_t *p, const char *id, bool *gone, int64_t hello_ms)
{
    *gone = false;
    agent_link_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->pool = p;
    l->fd = -1;
    snprintf(l->id, sizeof l->id, "%s", id);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    pthread_mutex_init(&l->wmu, NULL);
    docker_demux_init(&l->dm);
    frame_reader_init(&l->fr, FRAME_AGENT_MAX, true);
    l->deadline_ms = p->deadline_ms;
    if (l->deadline_ms <= 0)
        l->deadline_ms = 2000;
    l->nonce = random_nonce();
    /* Request ids start at random: the agent may still run commands of an
     * earlier link or an earlier manager, and their late frames must never
     * match a call of this one. */
    l->next_id = (uint64_t)random_nonce() << 1;

    int64_t t0 = proto_mono_ms();
    l->opened_ms = t0;
    docker_err_t e = docker_attach(p->d, id, &l->fd, &l->early, &l->early_len);
    if (e != DOCKER_OK) {
        *gone = e == DOCKER_ENOTFOUND;
        log_debug("attach to %.12s: %s", id, docker_strerror(e));
        link_free(l);
        return NULL;
    }
    if (pthread_create(&l->reader, NULL, reader_main, l) != 0) {
        link_free(l);
        return NULL;
    }
    l->reader_started = true;
    frame_msg_t hello = { .type = FRAME_HELLO };
    frame_set_num(&hello, FN_NONCE, l->nonce);
    icap_hello(&hello); /* the watchdog's caps */
    int64_t next_hello = 0;
    bool ready = false;
    for (;;) {
        int64_t now = proto_mono_ms();
        if (now - t0 >= hello_ms)
            break;
        if (now >= next_hello) {
            if (link_send(l, &hello) != 0)
                break;
            next_hello = now + AGENT_HELLO_EVERY_MS;
        }
        pthread_mutex_lock(&l->mu);
        if (!l->ready && !l->dead)
            link_wait(l, AGENT_POLL_MS);
        ready = l->ready;
        bool dead = l->dead;
        pthread_mutex_unlock(&l->mu);
        if (ready || dead)
            break;
    }
    if (!ready || link_dead(l)) {
        log_info("the agent of %.12s did not answer; using Docker exec for now", id);
        link_free(l);
        return NULL;
    }
    log_debug("agent link to %.12s up in %" PRId64 " ms (agent pid %ld)", id, proto_mono_ms() - t0,
              l->agent_pid);
    return l;
}

/* ---- the pool ------------------------------------------------------------------- */

agent_pool_t *agent_pool_new(docker_t *d, const char *binary, int64_t frame_deadline_s)
{
    agent_pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->d = d;
    p->deadline_ms = frame_deadline_s * 1000;
    pthread_mutex_init(&p->mu, NULL);
    if (binary && *binary) {
        p->bin = agent_binary_read(binary, &p->bin_len);
        if (p->bin)
            agent_version(p->bin, p->bin_len, p->version);
        if (p->bin)
            log_info("in-sandbox agent: %s (%zu bytes, version %s)", binary, p->bin_len,
                     p->version);
        else
            log_warn("cannot read the agent %s: new sandboxes run commands through Docker exec",
                     binary);
    } else {
        log_info("no in-sandbox agent: new sandboxes run commands through Docker exec");
    }
    return p;
}

static void link_unref(agent_pool_t *p, agent_link_t *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&p->mu);
    bool last = --l->refs == 0;
    pthread_mutex_unlock(&p->mu);
    if (last)
        link_free(l);
}

void agent_pool_destroy(agent_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    agent_pool_t *p = *self_p;
    strmap_for_each_safe(n, &p->entries) {
        entry_t *e = STRMAP_ITEM(n, entry_t, node);
        strmap_del(&p->entries, n);
        link_unref(p, e->link);
        free(e);
    }
    strmap_free(&p->entries);
    pthread_mutex_destroy(&p->mu);
    free(p->bin);
    free(p);
    *self_p = NULL;
}

/* With p->mu held. */
static entry_t *entry_get(agent_pool_t *p, const char *id, bool create)
{
    entry_t *e = STRMAP_ITEM(strmap_get(&p->entries, id), entry_t, node);
    if (e || !create || !(e = calloc(1, sizeof *e)))
        return e;
    snprintf(e->id, sizeof e->id, "%s", id);
    strmap_put(&p->entries, &e->node, e->id); /* none was there */
    return e;
}

static void entry_remove(agent_pool_t *p, const char *id)
{
    agent_link_t *old = NULL;
    pthread_mutex_lock(&p->mu);
    entry_t *e = STRMAP_ITEM(strmap_get(&p->entries, id), entry_t, node);
    if (e) {
        strmap_del(&p->entries, &e->node);
        old = e->link;
        free(e);
    }
    pthread_mutex_unlock(&p->mu);
    link_unref(p, old);
}

static agent_link_t *get_link(agent_pool_t *p, const char *id, int64_t hello_ms)
{
    if (!p || !id)
        return NULL;
    pthread_mutex_lock(&p->mu);
    entry_t *e = entry_get(p, id, false);
    if (!e || !e->has_agent) {
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    agent_link_t *old = e->link;
    if (old && !link_dead(old)) {
        old->refs++;
        pthread_mutex_unlock(&p->mu);
        return old;
    }
    int64_t now = proto_mono_ms();
    if (e->attaching || now < e->retry_at) {
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    e->link = NULL;
    if (old) {
        pthread_mutex_lock(&old->mu);
        bool eof = old->eof;
        if (old->misbehaved)
            e->restart = true;
        pthread_mutex_unlock(&old->mu);
        if (eof) {
            e->retry_at = now + AGENT_EOF_RETRY_MS;
            pthread_mutex_unlock(&p->mu);
            link_unref(p, old);
            return NULL;
        }
    }
    e->attaching = true;
    bool restart = e->restart;
    pthread_mutex_unlock(&p->mu);
    link_unref(p, old);

    if (restart)
        agent_restart_worker(p->d, id);
    bool gone = false;
    agent_link_t *l = link_open(p, id, &gone, hello_ms);
    if (gone) {
        entry_remove(p, id);
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    e = entry_get(p, id, false);
    if (!e) {
        pthread_mutex_unlock(&p->mu);
        if (l)
            link_free(l);
        return NULL;
    }
    e->attaching = false;
    if (l) {
        l->refs = 2; /* the table's and the caller's */
        e->link = l;
        e->fails = 0;
        e->retry_at = 0;
        e->restart = false;
    } else {
        int64_t delay = AGENT_RETRY_MIN_MS;
        for (int i = 0; i < e->fails && delay < AGENT_RETRY_MAX_MS; i++)
            delay *= 2;
        e->fails++;
        e->retry_at = proto_mono_ms() + (delay < AGENT_RETRY_MAX_MS ? delay : AGENT_RETRY_MAX_MS);
        /* No answer twice running: maybe a hung worker. */
        e->restart = e->fails >= 2;
    }
    pthread_mutex_unlock(&p->mu);
    return l;
}

agent_link_t *agent_get(agent_pool_t *p, const char *id)
{
    return get_link(p, id, AGENT_HELLO_MS);
}

void agent_release(agent_link_t **lp)
{
    if (!lp || !*lp)
        return;
    agent_link_t *l = *lp;
    link_unref(l->pool, l);
    *lp = NULL;
}

void agent_note(agent_pool_t *p, const char *id, bool has_agent, int64_t started_ms)
{
    if (!p || !id || !*id)
        return;
    agent_link_t *old = NULL;
    pthread_mutex_lock(&p->mu);
    entry_t *e = entry_get(p, id, true);
    if (!e) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    e->has_agent = has_agent && agent_pool_enabled(p);
    if (started_ms || !e->has_agent) {
        /* A link opened after this start is a racing call's: keep it. */
        if (!e->attaching && !(e->has_agent && e->link && e->link->opened_ms >= started_ms)) {
            old = e->link;
            e->link = NULL;
        }
        e->fails = 0;
        e->retry_at = 0;
        e->restart = false;
    }
    bool attach = e->has_agent;
    pthread_mutex_unlock(&p->mu);
    link_unref(p, old);
    if (attach) {
        agent_link_t *l = get_link(p, id, started_ms ? AGENT_HELLO_START_MS : AGENT_HELLO_MS);
        agent_release(&l);
    }
}

/* ---- calls ---------------------------------------------------------------------- */

static void call_add(agent_link_t *l, call_t *c)
{
    c->id = ++l->next_id;
    list_push_front(&l->calls, &c->link);
}

static void call_remove(agent_link_t *l, call_t *c)
{
    list_remove(&l->calls, &c->link);
}

/* Send KILL for call c and wait for the agent's DONE, which comes once its
 * kill pass is over.  With l->mu held; true when confirmed. */
static bool kill_call(agent_link_t *l, call_t *c, const char *marker)
{
    c->muted = true;
    pthread_mutex_unlock(&l->mu);
    frame_msg_t m = { .type = FRAME_KILL, .id = c->id };
    if (marker)
        frame_set_str(&m, FS_MARKER, marker, strlen(marker));
    int sent = link_send(l, &m);
    pthread_mutex_lock(&l->mu);
    if (sent != 0)
        return false;
    int64_t until = proto_mono_ms() + AGENT_KILL_WAIT_MS;
    while (!c->killed && !l->dead && proto_mono_ms() < until)
        link_wait(l, AGENT_POLL_MS);
    if (!c->killed && !l->dead)
        link_die(l, true, "the agent did not confirm a kill");
    return c->killed;
}

/* The call must answer and the command goes on: ask the agent to keep it
 * as a job (with l->mu held).  Its answer is c->job; none comes from an
 * older agent, and the cancel check then ends it at the deadline. */
static void detach_asked(agent_link_t *l, const agent_run_t *r, call_t *c)
{
    if (!r->detach_due || !r->detach_due(r->ctx))
        return;
    c->job = -2; /* asked once */
    pthread_mutex_unlock(&l->mu);
    frame_msg_t m = { .type = FRAME_DETACH, .id = c->id };
    link_send(l, &m);
    pthread_mutex_lock(&l->mu);
}

/* One command through the link (agent_link.h).  It is long because it
 * builds the RUN frame from the request's optional fields (one line each),
 * sends it, and waits for its EXIT with the cancel, deadline and job checks
 * in one loop under the link's lock; cut, the call's state would cross
 * the lock. */
agent_err_t agent_run(agent_link_t *l, const agent_run_t *r, agent_exit_t *ex)
{
    *ex = (agent_exit_t){ .exit_code = -1, .cpu_ms = -1, .max_rss_kb = -1 };
    size_t argv_len = 0, env_len = 0;
    char *argv = frame_join_list(r->argv, &argv_len);
    char *env = frame_join_list(r->env, &env_len);
    if (!argv || !env) {
        free(argv);
        free(env);
        return AGENT_NOT_STARTED;
    }
    call_t c = {
        .kind = C_RUN, .on_output = r->on_output, .ctx = r->ctx, .cpu_ms = -1, .rss_kb = -1
    };
    c.job = -1;
    pthread_mutex_lock(&l->mu);
    call_add(l, &c);
    pthread_mutex_unlock(&l->mu);

    frame_msg_t m = { .type = FRAME_RUN, .id = c.id };
    frame_set_str(&m, FS_ARGV, argv, argv_len);
    frame_set_str(&m, FS_ENV, env, env_len);
    if (r->workdir)
        frame_set_str(&m, FS_CWD, r->workdir, strlen(r->workdir));
    if (r->stdin_data)
        frame_set_str(&m, FS_STDIN, r->stdin_data, r->stdin_len);
    if (r->marker)
        frame_set_str(&m, FS_MARKER, r->marker, strlen(r->marker));
    if (r->timeout_ms > 0)
        frame_set_num(&m, FN_TIMEOUT, r->timeout_ms);
    if (r->merge_stderr)
        frame_set_num(&m, FN_MERGE, 1);
    if (r->no_shepherd)
        frame_set_num(&m, FN_SHEPHERD, 0);
    if (r->output_limit > 0)
        frame_set_num(&m, FN_OUTPUT_LIMIT, r->output_limit);
    icap_run(&m, r->watchdog_report);
    bgr_run(&m, r->bg_watch_ms);
    if (r->job_cap > 0)
        frame_set_num(&m, FN_JOB_CAP, r->job_cap);
    int sent = link_send(l, &m);
    free(argv);
    free(env);

    agent_err_t rc;
    pthread_mutex_lock(&l->mu);
    if (sent != 0) {
        rc = AGENT_NOT_STARTED;
        goto out;
    }
    int64_t t0 = proto_mono_ms(), last_check = t0;
    for (;;) {
        if (c.done) {
            rc = c.failed ? AGENT_NOT_STARTED : c.job > 0 ? AGENT_DETACHED : AGENT_OK;
            ex->job = c.job; /* a job now: no EXIT comes */
            ex->exit_code = c.status;
            ex->output_limited = c.limited;
            ex->wd = c.wd;
            break;
        }
        if (l->dead) {
            /* Sent but no word back: the agent may have run it (a forged
             * header may have swallowed its STARTED). */
            rc = c.started ? AGENT_LOST : AGENT_UNKNOWN;
            break;
        }
        int64_t now = proto_mono_ms();
        if (!c.started && now - t0 >= AGENT_ACK_MS) {
            link_die(l, true, "no answer to a command");
            rc = AGENT_UNKNOWN;
            break;
        }
        if (now - last_check >= AGENT_POLL_MS) {
            last_check = now;
            pthread_mutex_unlock(&l->mu);
            bool stop = r->cancelled && r->cancelled(r->ctx);
            pthread_mutex_lock(&l->mu);
            if (stop) {
                rc = kill_call(l, &c, r->marker) ? AGENT_CANCELLED
                     : c.started                 ? AGENT_LOST
                                                 : AGENT_UNKNOWN;
                break;
            }
            if (c.job == -1 && c.started)
                detach_asked(l, r, &c);
            continue;
        }
        link_wait(l, AGENT_POLL_MS - (now - last_check));
    }
out:
    ex->cpu_ms = c.cpu_ms;
    ex->max_rss_kb = c.rss_kb;
    ex->bg = c.bg; /* the caller's now */
    ex->jobs = c.jobs;
    ex->jobs_len = c.jobs_len;
    call_remove(l, &c);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* A request answered by DONE/FAIL/LIMITS_OK within ms.  0 when answered
 * without FAIL. */
static int simple_call(agent_link_t *l, call_t *c, frame_msg_t *m, int64_t ms)
{
    pthread_mutex_lock(&l->mu);
    call_add(l, c);
    m->id = c->id;
    pthread_mutex_unlock(&l->mu);
    int sent = link_send(l, m);
    pthread_mutex_lock(&l->mu);
    int64_t until = proto_mono_ms() + ms;
    while (sent == 0 && !c->done && !l->dead && proto_mono_ms() < until)
        link_wait(l, AGENT_POLL_MS);
    if (sent == 0 && !c->done && !l->dead)
        link_die(l, true, "no answer to a request");
    int rc = c->done && !c->failed ? 0 : -1;
    call_remove(l, c);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int agent_write(agent_link_t *l, const char *abspath, const void *data, size_t len, unsigned mode,
                int64_t mtime)
{
    if (len > FRAME_MAX - 4096)
        return -1;
    call_t c = { .kind = C_WRITE };
    frame_msg_t m = { .type = FRAME_WRITE };
    frame_set_str(&m, FS_PATH, abspath, strlen(abspath));
    frame_set_str(&m, FS_DATA, data, len);
    frame_set_num(&m, FN_MODE, mode);
    frame_set_num(&m, FN_MTIME, mtime);
    return simple_call(l, &c, &m, AGENT_WRITE_WAIT_MS);
}

int agent_limits(agent_link_t *l, agent_limits_t *out)
{
    call_t c = { .kind = C_LIMITS };
    frame_msg_t m = { .type = FRAME_LIMITS };
    int rc = simple_call(l, &c, &m, AGENT_LIMITS_WAIT_MS);
    if (rc == 0)
        *out = c.lim;
    return rc;
}
