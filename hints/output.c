/* output.c -- binary output described, stray control bytes made visible
 * (see output.h).  The texts are talk/texts.h's, the kinds a table; the rest is one
 * pass over the output, which costs a successful call nothing measurable
 * next to a docker exec.
 */
#include "hints/output.h"

#include "talk/texts.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* How many bytes the hex preview shows, and how many bytes decide. */
#define PREVIEW_BYTES 64
#define SNIFF_BYTES   8192

/* What bytes are, by their magic number at an offset. */
typedef struct {
    size_t off;
    const char *magic;
    size_t len;
    const char *kind;
} kind_t;

#define K(off, m, kind)                                                                            \
    {                                                                                              \
        off, m, sizeof m - 1, kind                                                                 \
    }

static const kind_t kinds[] = {
    K(0,
      "\x7f"
      "ELF",
      "an ELF program or library (a compiled Linux binary: run it, do not print it)"),
    K(0, "\x89PNG\r\n", "a PNG image"),
    K(0, "\xff\xd8\xff", "a JPEG image"),
    K(0, "GIF8", "a GIF image"),
    K(0, "%PDF", "a PDF document"),
    K(0, "PK\x03\x04", "a zip archive (also .jar, .docx, .xlsx: unzip -l FILE lists it)"),
    K(0, "\x1f\x8b", "gzip-compressed data (zcat FILE | head; tar tzf FILE for a .tar.gz)"),
    K(0, "BZh", "bzip2-compressed data (bzcat FILE | head)"),
    K(0,
      "\xfd"
      "7zXZ",
      "xz-compressed data (xzcat FILE | head)"),
    K(0, "\x28\xb5\x2f\xfd", "zstd-compressed data (zstdcat FILE | head)"),
    K(0, "7z\xbc\xaf\x27\x1c", "a 7z archive"),
    K(257, "ustar", "a tar archive (tar tf FILE lists it)"),
    K(0, "SQLite format 3", "an SQLite database (sqlite3 FILE .tables lists its tables)"),
    K(0, "\xca\xfe\xba\xbe", "a Java class file (run it with java NAME, without .class)"),
    K(0, "\0asm", "a WebAssembly module"),
    K(0, "MZ", "a Windows program or library (.exe, .dll)"),
    K(0, "PAR1", "a Parquet table (pandas.read_parquet reads it)"),
    K(0, "\x93NUMPY", "a NumPy array (numpy.load reads it)"),
    K(0, "\x89HDF\r\n", "an HDF5 file"),
    K(0, "\xd0\xcf\x11\xe0", "an old Office document (.xls, .doc)"),
    K(0, "RIFF", "a RIFF file (WAV audio, AVI video or WebP image)"),
    K(0, "OggS", "Ogg audio or video"),
    K(0, "ID3", "MP3 audio"),
    K(0, "fLaC", "FLAC audio"),
    K(0, "\xcf\xfa\xed\xfe", "a macOS program (Mach-O), which Linux cannot run"),
    K(0, "\x80\x04\x95", "Python pickle data (pickle.load reads it)"),
    K(0, "\xff\xfe",
      "UTF-16 text, from Windows (iconv -f UTF-16 -t UTF-8 FILE turns it into text)"),
    K(0, "\xfe\xff", "UTF-16 text (iconv -f UTF-16 -t UTF-8 FILE turns it into text)"),
};

#define KIND_UTF16_BARE                                                                            \
    "UTF-16 text without a byte order mark, from Windows (iconv -f UTF-16LE -t UTF-8 FILE turns "  \
    "it into text)"
#define KIND_UNKNOWN "binary data"

/* ---- telling binary from text ---------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (!len || len > n || (len == 2 && c < 0xc2) || (len == 4 && c > 0xf4))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* A control byte text does not hold (tab, newline, CR, form feed,
 * backspace and ESC are a terminal's own). */
static bool odd_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\b' &&
            c != 0x1b) ||
           c == 0x7f;
}

bool hints_output_is_binary(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    if (n > SNIFF_BYTES)
        n = SNIFF_BYTES;
    if (memchr(p, 0, n))
        return true;
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] >= 0x80) {
            size_t l = utf8_len(p + i, n - i);
            /* A sequence cut at the sniffing edge is not held against it. */
            if (!l && n - i >= 4)
                bad++;
            i += l ? l : 1;
            continue;
        }
        bad += odd_control(p[i]);
        i++;
    }
    return bad * 10 > n;
}

static const char *kind_of(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const kind_t *k = &kinds[i];
        if (k->off + k->len <= n && memcmp(p + k->off, k->magic, k->len) == 0)
            return k->kind;
    }
    /* ASCII as UTF-16LE: a NUL after every printable byte. */
    size_t m = n < 64 ? n & ~(size_t)1 : 64, pairs = 0;
    for (size_t i = 0; i + 1 < m; i += 2)
        pairs += p[i] >= 0x09 && p[i] < 0x7f && p[i + 1] == 0;
    if (m >= 8 && pairs * 2 == m)
        return KIND_UTF16_BARE;
    return KIND_UNKNOWN;
}

/* ---- rendering -------------------------------------------------------------------- */

/* xxd's layout: offset, 8 groups of 2 bytes, the printable ones. */
static void hex_preview(const unsigned char *p, size_t n, textbuf_t *t)
{
    for (size_t row = 0; row < n; row += 16) {
        char line[80];
        size_t o = (size_t)snprintf(line, sizeof line, "%08zx: ", row);
        for (size_t i = 0; i < 16; i++) {
            if (row + i < n)
                o += (size_t)snprintf(line + o, sizeof line - o, "%02x", p[row + i]);
            else
                o += (size_t)snprintf(line + o, sizeof line - o, "  ");
            if (i % 2)
                line[o++] = ' ';
        }
        line[o++] = ' ';
        for (size_t i = 0; i < 16 && row + i < n; i++) {
            unsigned char c = p[row + i];
            line[o++] = c >= 0x20 && c < 0x7f ? (char)c : '.';
        }
        line[o++] = '\n';
        textbuf_append(t, line, o);
    }
}

/* The description of binary bytes p[0..n) out of total. */
static void describe_binary(const char *s, size_t n, uint64_t total, textbuf_t *t)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t show = n < PREVIEW_BYTES ? n : PREVIEW_BYTES;
    textbuf_printf(t, TX_HI_BINARY_HEAD, total, kind_of(p, n), show);
    hex_preview(p, show, t);
    textbuf_puts(t, TX_HI_BINARY_TAIL);
}

/* Length of the terminal escape sequence at s (n bytes left, s[0] ESC):
 * CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), else ESC and one. */
static size_t escape_len(const char *s, size_t n)
{
    if (n < 2)
        return 1;
    size_t i = 2;
    if (s[1] == '[') {
        while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
            i++;
        return i < n ? i + 1 : n;
    }
    if (s[1] == ']') {
        while (i < n && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\'))
            i++;
        return i >= n ? n : s[i] == '\a' ? i + 1 : i + 2;
    }
    return 2;
}

/* Text with its control bytes dealt with (output.h says how). */
static void clean_text(const char *s, size_t n, textbuf_t *t)
{
    size_t line_start = t->len;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b) {
            i += escape_len(s + i, n - i);
        } else if (c == '\r' && !(i + 1 < n && s[i + 1] == '\n')) {
            /* A redrawn line: what follows replaces what was there. */
            if (i + 1 < n)
                t->len = line_start;
            i++;
        } else if (odd_control(c) || c == '\b' || c == '\f') {
            char caret[2] = { '^', (char)(c == 0x7f ? '?' : c + '@') };
            textbuf_append(t, caret, 2);
            i++;
        } else {
            /* A run of plain bytes, up to and with its newline. */
            size_t j = i;
            while (j < n && s[j] != '\n' && s[j] != '\r' && s[j] != 0x1b &&
                   !odd_control((unsigned char)s[j]) && s[j] != '\b' && s[j] != '\f')
                j++;
            if (j < n && (s[j] == '\n' || j == i)) /* or the CR of a CR LF */
                j++;
            textbuf_append(t, s + i, j - i);
            if (s[j - 1] == '\n')
                line_start = t->len;
            i = j;
        }
    }
    if (t->buf)
        t->buf[t->len] = '\0';
}

static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            if (!(c == '\r' && i + 1 < n && s[i + 1] == '\n'))
                return true;
    }
    return false;
}

void hints_output_render(const capbuf_t *c, textbuf_t *t)
{
    if (c->head_len && hints_output_is_binary(c->head, c->head_len)) {
        describe_binary(c->head, c->head_len, c->total, t);
        return;
    }
    textbuf_t raw;
    textbuf_init(&raw);
    capbuf_render(c, &raw);
    if (raw.len && has_control(raw.buf, raw.len))
        clean_text(raw.buf, raw.len, t);
    else if (raw.len)
        textbuf_append(t, raw.buf, raw.len);
    textbuf_free(&raw);
}

void hints_output_render_bytes(const char *s, size_t n, textbuf_t *t)
{
    if (n && hints_output_is_binary(s, n))
        describe_binary(s, n, n, t);
    else if (n && has_control(s, n))
        clean_text(s, n, t);
    else if (n)
        textbuf_append(t, s, n);
}
