/* sha256.h -- SHA-256 (FIPS 180-4), for names that must not collide.
 *
 * The container name of a chat ends in a digest of its conversation id
 * (convid.h): a 64-bit FNV-1a there let two chosen ids share one name.
 * Small and self-contained, so every process can link it without a crypto
 * library.  Pure, unit-tested against the standard's vectors.
 */
#ifndef TALKBACK_SHA256_H
#define TALKBACK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

/* The digest of len bytes at data into out. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
