/* zap.h -- the hub's ZAP handler: which CURVE keys may complete a
 * handshake, and a log line for each one refused.
 *
 * libzmq asks a ZAP handler (RFC 27, inproc://zeromq.zap.01) about every
 * handshake of a CURVE server socket; with none bound, it lets every key
 * in.  This one answers from the certificates in the allow list folder
 * (HUB_KEYS/allowed/, read again when it changes): a known key gets 200
 * with its Z85 text as the User-Id (what hubauth.c finds its certificate
 * by), any other 400, and the log says which key from which address was
 * refused -- at most one line per key per refusal_log_ms, so one peer that
 * keeps dialling hides no other.  One handler per process at a time: the
 * endpoint is process-wide.
 */
#ifndef TALKBACK_ZAP_H
#define TALKBACK_ZAP_H

#include <czmq.h>
#include <stdint.h>

/* Start the handler on the allow list folder allowed; it is bound when
 * this returns.  NULL when it cannot start. */
zactor_t *zap_new(const char *allowed, int64_t refusal_log_ms);

#endif
