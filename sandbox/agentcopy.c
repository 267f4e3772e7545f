/* agentcopy.c -- the agent copied into a sandbox (see agentcopy.h). */
#include "sandbox/agentcopy.h"

#include "common/log.h"
#include "kept/kept.h"

bool agent_copy(agent_pool_t *p, const kept_t *k, const char *id)
{
    const char *version = agent_pool_version(p);
    if (!agent_pool_enabled(p) || kept_agent_is(k, id, version))
        return false;
    if (agent_install(p, id) == DOCKER_OK && kept_agent_set(k, id, version) != 0)
        log_warn("cannot write the agent record of %.12s in %s", id, kept_state_dir(k));
    return true;
}
