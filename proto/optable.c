/* optable.c -- the operations table and the kinds table (see optable.h).
 *
 * What each operation does, with its arguments and reply, is in the
 * comments of ops.h; a row here says only what the hub and the workers
 * need to treat it right.  The lookups are linear: nineteen rows.
 */
#include "proto/optable.h"

#include <string.h>

#include "proto/ops.h"

static const ops_kind_t ops_kind_rows[] = {
    { KIND_SANDBOX, OPS_KIND_WORKER | OPS_KIND_KEY | OPS_KIND_PER_HOST | OPS_KIND_MANAGER,
      OPS_BY_SANDBOX, "sandbox manager" },
    { KIND_JUDGE, OPS_KIND_WORKER | OPS_KIND_KEY, OPS_BY_JUDGE, "judge" },
    { KIND_REAPER, OPS_KIND_WORKER | OPS_KIND_KEY | OPS_KIND_PER_HOST, OPS_BY_REAPER, "reaper" },
    { KIND_CTL, OPS_KIND_KEY, OPS_BY_CTL, "talkbackctl" },
    { KIND_HUB, OPS_KIND_HUB, 0, "hub" },
};

#define SBX   KIND_SANDBOX
#define CHAT  (OPS_CONV)
#define MAKES (OPS_CONV | OPS_PLACES)

static const ops_row_t ops_rows[] = {
    /* the sandbox manager: a chat's sandbox */
    { SBX, OP_RUN, MAKES, 0, "the model's run: a bash command in the chat's sandbox" },
    { SBX, OP_EXEC, MAKES, OPS_BY_JUDGE, "a judge's command line, its bare output in the data" },
    { SBX, OP_WRITE_FILE, MAKES, 0, "the model's write_file: a file written, with its hints" },
    { SBX, OP_PUT, MAKES, OPS_BY_JUDGE, "a judge's file: the same write, without hints" },
    { SBX, OP_RESET, CHAT, 0, "the model's reset: the chat's sandbox removed with its files" },
    { SBX, OP_BUSY, CHAT, OPS_BY_REAPER, "how many calls of the chat are in flight" },
    { SBX, OP_FORGET, CHAT, OPS_BY_REAPER, "drop what the manager keeps of a chat" },
    { SBX, OP_PAUSE, CHAT, OPS_BY_REAPER, "pause an idle chat's sandbox" },
    /* the sandbox manager: its host */
    { SBX, OP_LOCATE, CHAT, OPS_BY_CTL, "whether this host's Docker holds the chat's sandbox" },
    { SBX, OP_LIST, OPS_HOST, OPS_BY_CTL, "one line per chat's sandbox on the host" },
    { SBX, OP_DRAIN, OPS_HOST, OPS_BY_CTL, "place no new chat on the host" },
    { SBX, OP_UNDRAIN, OPS_HOST, OPS_BY_CTL, "place new chats on the host again" },
    { SBX, OP_STOP, CHAT, OPS_BY_CTL, "stop the chat's sandbox; its files stay" },
    { SBX, OP_RM, CHAT, OPS_BY_CTL, "remove the chat's sandbox with its files" },
    /* the judge */
    { KIND_JUDGE, OP_RUN_CODE, OPS_RETRY_UNTIL_STARTED, 0,
      "the model's run_code: save, compile, run, compare" },
    { KIND_JUDGE, OP_HISTORY, OPS_RETRY, 0, "the chat's last programs, read from its sandbox" },
    /* the reaper */
    { KIND_REAPER, OP_SWEEP, 0, 0, "run every sweep now (idle, eviction, disk cap)" },
    /* the hub itself */
    { KIND_HUB, OP_HOSTS, OPS_HUB, OPS_BY_CTL, "one line per host, from the workers' HELLOs" },
    { KIND_HUB, OP_FORGET_HOST, OPS_HUB | OPS_HOST, OPS_BY_CTL,
      "forget a host retired for good (argument host)" },
};

#define N_ROWS  (sizeof ops_rows / sizeof ops_rows[0])
#define N_KINDS (sizeof ops_kind_rows / sizeof ops_kind_rows[0])

const ops_row_t *ops_table(size_t *n)
{
    *n = N_ROWS;
    return ops_rows;
}

const ops_row_t *ops_find(const char *kind, const char *name)
{
    for (size_t i = 0; kind && name && i < N_ROWS; i++)
        if (strcmp(ops_rows[i].kind, kind) == 0 && strcmp(ops_rows[i].name, name) == 0)
            return &ops_rows[i];
    return NULL;
}

const ops_row_t *ops_named(const char *name)
{
    for (size_t i = 0; name && i < N_ROWS; i++)
        if (strcmp(ops_rows[i].name, name) == 0)
            return &ops_rows[i];
    return NULL;
}

bool ops_has(const char *kind, const char *name, unsigned flags)
{
    const ops_row_t *r = ops_find(kind, name);
    return r && (r->flags & flags) == flags;
}

const ops_kind_t *ops_kinds(size_t *n)
{
    *n = N_KINDS;
    return ops_kind_rows;
}

const ops_kind_t *ops_kind(const char *name)
{
    for (size_t i = 0; name && i < N_KINDS; i++)
        if (strcmp(ops_kind_rows[i].name, name) == 0)
            return &ops_kind_rows[i];
    return NULL;
}

bool ops_kind_has(const char *kind, unsigned flags)
{
    const ops_kind_t *k = ops_kind(kind);
    return k && (k->flags & flags) == flags;
}

unsigned ops_sender_bit(const char *kind)
{
    const ops_kind_t *k = ops_kind(kind);
    return k ? k->by : 0;
}

const char *ops_kind_label(const char *kind)
{
    const ops_kind_t *k = ops_kind(kind);
    return k ? k->label : "worker";
}
