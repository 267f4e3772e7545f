/* tar.c -- a one-file tar writer for PUT /containers/{id}/archive.
 *
 * Docker's archive endpoint only takes tar, and talkback only ever needs to
 * drop one regular file into a container, so this is the smallest writer
 * that does that right: POSIX ustar blocks of 512 bytes, owner root:root,
 * the mode and mtime given, the data padded to a block, and two zero blocks
 * at the end.  Names up to 100 bytes go in the name field; up to 256 bytes
 * are split at a '/' into the ustar prefix (155) and name (100); anything
 * that does not fit (or a file of 8 GiB and more, which overflows the
 * 11-digit octal size field) gets a PAX extended header ('x') in front,
 * which Docker's Go archive/tar reader understands.
 *
 * Pure code with no I/O, unit-tested in tests/unit/test_docker.c (which
 * also lists the result with GNU tar).
 */
#include "docker/docker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAR_BLOCK       512
#define TAR_NAME_LEN    100             /* ustar name field */
#define TAR_PREFIX_LEN  155             /* ustar prefix field */
#define TAR_OCTAL11_MAX 077777777777ULL /* largest value of a 12-byte field */
#define TAR_MODE_MASK   07777u
#define TAR_PAX_NAME    "PaxHeaders.0/"

/* The ustar header; every member is a char array, so there is no padding. */
typedef struct {
    char name[100];
    char mode[8];
    char uid[8];
    char gid[8];
    char size[12];
    char mtime[12];
    char chksum[8];
    char typeflag;
    char linkname[100];
    char magic[6];
    char version[2];
    char uname[32];
    char gname[32];
    char devmajor[8];
    char devminor[8];
    char prefix[155];
    char pad[12];
} tar_header_t;

_Static_assert(sizeof(tar_header_t) == TAR_BLOCK, "ustar header is one block");

/* Write v as width-1 zero-padded octal digits and a NUL.  The caller makes
 * sure v fits. */
static void tar_octal(char *field, size_t width, uint64_t v)
{
    field[width - 1] = '\0';
    for (size_t i = width - 1; i > 0; i--) {
        field[i - 1] = (char)('0' + (v & 7));
        v >>= 3;
    }
}

static size_t tar_round(size_t n)
{
    return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/* Fill one header block (already zeroed) and its checksum. */
static void tar_header(tar_header_t *h, const char *name, size_t name_len, const char *prefix,
                       size_t prefix_len, unsigned mode, uint64_t size, uint64_t mtime, char type)
{
    unsigned sum = 0;

    memcpy(h->name, name, name_len);
    memcpy(h->prefix, prefix, prefix_len);
    tar_octal(h->mode, sizeof h->mode, mode & TAR_MODE_MASK);
    tar_octal(h->uid, sizeof h->uid, 0);
    tar_octal(h->gid, sizeof h->gid, 0);
    tar_octal(h->size, sizeof h->size, size);
    tar_octal(h->mtime, sizeof h->mtime, mtime);
    h->typeflag = type;
    memcpy(h->magic, "ustar", 6); /* with its NUL */
    memcpy(h->version, "00", 2);
    memcpy(h->uname, "root", 4);
    memcpy(h->gname, "root", 4);
    tar_octal(h->devmajor, sizeof h->devmajor, 0);
    tar_octal(h->devminor, sizeof h->devminor, 0);

    /* The checksum is taken with its own field read as eight spaces, and
     * written as six octal digits, a NUL and a space. */
    memset(h->chksum, ' ', sizeof h->chksum);
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += ((const unsigned char *)h)[i];
    tar_octal(h->chksum, 7, sum);
}

/* Find a '/' that splits name into prefix (<= 155) and name (<= 100, not
 * empty).  Returns its index, or 0 when there is none (index 0 would make
 * an empty prefix, which the caller never needs). */
static size_t tar_split(const char *name, size_t len)
{
    for (size_t i = 1; i < len && i <= TAR_PREFIX_LEN; i++) {
        if (name[i] == '/' && len - i - 1 <= TAR_NAME_LEN && len - i - 1 > 0)
            return i;
    }
    return 0;
}

static size_t tar_digits(size_t n)
{
    size_t d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Length of the PAX record "LEN key=value\n", where LEN counts itself. */
static size_t tar_pax_len(size_t key_len, size_t value_len)
{
    size_t base = key_len + value_len + 3; /* ' ', '=', '\n' */
    size_t digits = tar_digits(base + 1);

    while (tar_digits(base + digits) != digits)
        digits = tar_digits(base + digits);
    return base + digits;
}

/* Append one PAX record at p; returns the byte count written. */
static size_t tar_pax_put(char *p, const char *key, const char *value, size_t value_len)
{
    size_t key_len = strlen(key);
    size_t total = tar_pax_len(key_len, value_len);
    int n = snprintf(p, tar_digits(total) + 2, "%zu ", total);

    memcpy(p + n, key, key_len);
    p[n + key_len] = '=';
    memcpy(p + n + key_len + 1, value, value_len);
    p[total - 1] = '\n';
    return total;
}

/* A name we can write: not empty, relative, and naming a file (not a
 * folder) -- the two checks Docker's extractor would otherwise make for us
 * in surprising ways. */
static bool tar_name_ok(const char *name, size_t len)
{
    return len > 0 && name[0] != '/' && name[len - 1] != '/';
}

/* One file as a tar stream (docker.h says what it returns).  It is long
 * because a ustar header is a list of fields written in order, each a
 * line; cut, the header would be filled in two places. */
char *docker_tar_file(const char *name, const void *data, size_t len, unsigned mode, int64_t mtime,
                      size_t *out_len)
{
    size_t name_len, split = 0, pax_len = 0, total, at = 0;
    bool pax_path = false, pax_size = false;
    uint64_t mt;
    char size_text[24];
    char *buf = NULL;

    if (out_len != NULL)
        *out_len = 0;
    if (name == NULL || out_len == NULL || (data == NULL && len > 0))
        return NULL;
    name_len = strlen(name);
    if (!tar_name_ok(name, name_len))
        return NULL;

    if (name_len > TAR_NAME_LEN) {
        split = tar_split(name, name_len);
        pax_path = split == 0;
    }
    pax_size = (uint64_t)len > TAR_OCTAL11_MAX;
    mt = mtime < 0 ? 0 : (uint64_t)mtime > TAR_OCTAL11_MAX ? TAR_OCTAL11_MAX : (uint64_t)mtime;
    snprintf(size_text, sizeof size_text, "%zu", len);
    if (pax_path)
        pax_len += tar_pax_len(4, name_len);
    if (pax_size)
        pax_len += tar_pax_len(4, strlen(size_text));

    /* headers + data + two zero blocks, checked for overflow */
    total = (pax_len > 0 ? TAR_BLOCK + tar_round(pax_len) : 0) + 3 * TAR_BLOCK;
    if (len > SIZE_MAX - total - TAR_BLOCK)
        return NULL;
    total += tar_round(len);

    buf = calloc(1, total);
    if (buf == NULL)
        return NULL;

    /* The name the plain header carries: the whole name, or a split, or
     * (under a PAX path record) the last 100 bytes at most, for old
     * readers. */
    const char *hname = name, *hprefix = "";
    size_t hname_len = name_len, hprefix_len = 0;
    if (split > 0) {
        hprefix = name;
        hprefix_len = split;
        hname = name + split + 1;
        hname_len = name_len - split - 1;
    } else if (pax_path) {
        hname = name + name_len - TAR_NAME_LEN;
        hname_len = TAR_NAME_LEN;
    }

    if (pax_len > 0) {
        char pname[TAR_NAME_LEN];
        size_t plen = strlen(TAR_PAX_NAME);
        size_t base;
        const char *slash = memrchr(hname, '/', hname_len);
        const char *bname = slash ? slash + 1 : hname;

        base = hname_len - (size_t)(bname - hname);
        if (base > TAR_NAME_LEN - plen)
            base = TAR_NAME_LEN - plen;
        memcpy(pname, TAR_PAX_NAME, plen);
        memcpy(pname + plen, bname, base);
        tar_header((tar_header_t *)buf, pname, plen + base, "", 0, 0644, pax_len, mt, 'x');
        at = TAR_BLOCK;
        if (pax_path)
            at += tar_pax_put(buf + at, "path", name, name_len);
        if (pax_size)
            at += tar_pax_put(buf + at, "size", size_text, strlen(size_text));
        at = TAR_BLOCK + tar_round(pax_len);
    }

    tar_header((tar_header_t *)(buf + at), hname, hname_len, hprefix, hprefix_len, mode,
               pax_size ? 0 : (uint64_t)len, mt, '0');
    at += TAR_BLOCK;
    if (len > 0)
        memcpy(buf + at, data, len);
    /* The padding and the two end blocks are already zero (calloc). */
    *out_len = total;
    return buf;
}

/* Read an octal (or base-256) numeric field of a ustar header. */
static bool tar_number(const unsigned char *f, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (f[0] & 0x80) { /* base-256, big-endian, for large values */
        for (size_t i = 1; i < n; i++)
            v = (v << 8) | f[i];
        *out = v;
        return true;
    }
    size_t i = 0;
    while (i < n && (f[i] == ' ' || f[i] == '\0'))
        i++;
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++)
        v = v * 8 + (uint64_t)(f[i] - '0');
    *out = v;
    return true;
}

bool docker_tar_first(const char *buf, size_t len, const char **data, size_t *size, int64_t *mtime)
{
    size_t off = 0;
    while (off + 512 <= len) {
        const unsigned char *h = (const unsigned char *)buf + off;
        bool zero = true;
        for (size_t i = 0; i < 512 && zero; i++)
            zero = h[i] == 0;
        if (zero)
            return false;
        uint64_t fsize, ftime;
        tar_number(h + 124, 12, &fsize);
        tar_number(h + 136, 12, &ftime);
        char type = (char)h[156];
        size_t body = off + 512;
        if (fsize > len - body)
            return false;
        if (type == '0' || type == '\0') {
            *data = buf + body;
            *size = (size_t)fsize;
            if (mtime)
                *mtime = (int64_t)ftime;
            return true;
        }
        /* Skip PAX and other headers with their padded bodies. */
        size_t padded = (size_t)((fsize + 511) / 512 * 512);
        if (padded > len - body)
            return false;
        off = body + padded;
    }
    return false;
}
