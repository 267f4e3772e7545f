/* chatname.h -- the name of a chat's container in Docker.
 *
 * A chat's container is named from its conversation id
 * (convid_container_name: SHA-256).  Sandboxes made before carry the name
 * of the 64-bit FNV-1a scheme (convid_container_name_v1); they keep it --
 * the Docker guard renames only spares -- and are found under it, only
 * when nothing carries the new name and the old-named container is the
 * chat's own (its label, or its claim record).  Another chat's container under the old name (two
 * ids that shared it) is not the chat's: the chat gets its sandbox under
 * the new name.
 */
#ifndef TALKBACK_CHATNAME_H
#define TALKBACK_CHATNAME_H

#include "common/convid.h"
#include "docker/docker.h"
#include "kept/kept.h"

/* The name conv's container goes by, into name (CONVID_NAME_MAX bytes):
 * the new one, unless no container has it and conv's own sandbox has the
 * old one.  One inspect when the new name is there (two when not). */
void chatname_of(docker_t *d, const kept_t *k, const char *conv, char *name);
/* The same, and the inspect of the container under that name, which the
 * caller would ask for next anyway (a new JSON object; NULL when there is
 * none or Docker did not answer: then inspect again to find out). */
json_t *chatname_find(docker_t *d, const kept_t *k, const char *conv, char *name);

#endif
