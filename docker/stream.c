/* stream.c -- the demultiplexer of Docker's exec/attach output stream.
 *
 * With Tty false, Docker sends stdout and stderr over one connection as
 * frames: an 8-byte header {stream, 0, 0, 0, size as big-endian uint32}
 * then size bytes of payload.  The network cuts this stream anywhere, so
 * the demultiplexer is a small state machine fed arbitrary slices: it keeps
 * the header bytes it has seen so far and how much payload of the current
 * frame is still due, and hands each payload piece out as soon as it
 * arrives (no buffering, so a long-running command streams live).
 *
 * Pure code with no I/O, unit-tested in tests/unit/test_docker.c and meant
 * to survive hostile input: it only reads inside the slice it is given, and
 * a header with an unknown stream or nonzero padding poisons the state for
 * good (the rest of such a stream cannot be trusted to be framed).
 */
#include "docker/docker.h"

#include <string.h>

/* Header layout, see the comment above. */
#define DEMUX_HDR_LEN    8
#define DEMUX_STREAM_MAX 2 /* 0 stdin, 1 stdout, 2 stderr */

void docker_demux_init(docker_demux_t *dm)
{
    memset(dm, 0, sizeof *dm);
}

/* Check a complete header and start its frame; false if it is malformed. */
static bool demux_take_header(docker_demux_t *dm)
{
    const unsigned char *h = dm->hdr;

    if (h[0] > DEMUX_STREAM_MAX || h[1] != 0 || h[2] != 0 || h[3] != 0)
        return false;
    /* Docker's own client copies stream 0 (stdin echo) to stdout; so do we,
     * so that callers only ever see 1 and 2. */
    dm->stream = h[0] == 0 ? 1 : h[0];
    dm->left = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | (uint32_t)h[7];
    dm->hdr_have = 0;
    return true;
}

bool docker_demux_feed(docker_demux_t *dm, const char *buf, size_t len, docker_output_fn out,
                       void *ctx)
{
    size_t pos = 0;

    if (dm->bad)
        return false;
    if (buf == NULL)
        return len == 0;

    while (pos < len) {
        if (dm->left == 0) {
            /* Between frames: collect header bytes. */
            size_t want = DEMUX_HDR_LEN - dm->hdr_have;
            size_t take = len - pos < want ? len - pos : want;

            memcpy(dm->hdr + dm->hdr_have, buf + pos, take);
            dm->hdr_have += take;
            pos += take;
            if (dm->hdr_have == DEMUX_HDR_LEN && !demux_take_header(dm)) {
                dm->bad = true;
                return false;
            }
            /* A zero-length frame leaves left at 0: the next byte starts
             * the next header. */
            continue;
        }
        /* Inside a frame: pass on as much payload as this slice holds. */
        size_t take = len - pos < dm->left ? len - pos : dm->left;
        if (out != NULL)
            out(ctx, dm->stream, buf + pos, take);
        dm->left -= (uint32_t)take;
        pos += take;
    }
    return true;
}
