/* pictures.h -- the images a command drew, back with its result.
 *
 * The agent names the image files a command created or changed under /work
 * (agent/images.c); here each is read from the sandbox, its kind and pixel
 * size taken from its own bytes, and it is named in the result's text with
 * its path, size and bytes.  Those within image_max_count, image_max_bytes
 * and image_max_call_bytes travel with the reply (proto_image_t) and reach
 * the chat as MCP image content blocks; the others are named with why they
 * were not shown and how to make them fit.
 *
 * A sandbox without the agent (the Docker exec path) returns no images.
 */
#ifndef TALKBACK_SANDBOX_PICTURES_H
#define TALKBACK_SANDBOX_PICTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/imagehdr.h"
#include "docker/docker.h"
#include "sandbox/run.h"
#include "proto/proto.h"

/* The most image bytes one reply carries, whatever image_max_call_bytes
 * says: well within what a proto frame and the hub take (16 MiB), with
 * room for the text. */
#define PICTURES_CALL_MAX ((int64_t)12 * 1024 * 1024)

typedef struct {
    int64_t max_count, max_bytes, max_call_bytes;
} pictures_limits_t;

/* One item of the agent's list, "BYTES WIDTHxHEIGHT KIND PATH" (frame.h).
 * False when it is not of that shape, the kind is unknown or the path is
 * not absolute. */
bool pictures_item(const char *item, int64_t *bytes, imagehdr_t *hd, const char **path);

/* Reads one image (at most max bytes) from the sandbox: 0 with *data
 * malloc'ed, or -1.  pictures_collect's way in, replaceable by tests. */
typedef int (*pictures_read_fn)(void *ctx, const char *path, size_t max, char **data, size_t *len);

/* The images of the agent's list (NUL-terminated items, len bytes): a
 * holder message whose images are the ones to show and whose text names
 * every one; NULL when the list names none. */
proto_msg_t *pictures_from_list(const char *list, size_t len, const pictures_limits_t *lim,
                                pictures_read_fn read, void *ctx);

/* The same, reading from container id through its agent or Docker (run.h),
 * with the configured limits lim (image_max_count, image_max_bytes,
 * image_max_call_bytes; bounded here by PICTURES_CALL_MAX).  NULL when
 * list is NULL. */
proto_msg_t *pictures_collect(const run_via_t *v, const pictures_limits_t *lim, const char *id,
                              const char *list, size_t len);

#endif
