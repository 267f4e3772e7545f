/* agentcopy.h -- the agent copied into a sandbox before it starts, once
 * per agent version (its record in state_dir, kept/kept.h, says which
 * version is in there).  Used by ensure.c (a chat's sandbox) and pool.c
 * (a spare), so neither calls the other for it.
 */
#ifndef TALKBACK_SANDBOX_AGENTCOPY_H
#define TALKBACK_SANDBOX_AGENTCOPY_H

#include <stdbool.h>

#include "kept/kept.h"
#include "sandbox/agent_link.h"

/* Copy the agent into container id (created or stopped) unless its record
 * says this version is in there already; true when it was copied (or
 * tried). */
bool agent_copy(agent_pool_t *p, const kept_t *k, const char *id);

#endif
