/* mcptext.c -- bytes as the JSON strings of MCP results (see mcptext.h). */
#include "gateway/mcptext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *mcp_utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    const unsigned char *u = (const unsigned char *)s;
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        unsigned char c = u[i];
        if (c < 0x80) {
            out[o++] = (char)c;
            i++;
            continue;
        }
        size_t need;                        /* continuation bytes */
        unsigned char lo = 0x80, hi = 0xBF; /* range of the first one */
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* no overlong forms */
            else if (c == 0xED)
                hi = 0x9F; /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F; /* nothing above U+10FFFF */
        } else {
            memcpy(out + o, fffd, 3);
            o += 3;
            i++;
            continue;
        }
        size_t k = 0; /* continuation bytes that fit */
        while (k < need && i + 1 + k < len) {
            unsigned char d = u[i + 1 + k];
            unsigned char l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
            if (d < l || d > h)
                break;
            k++;
        }
        if (k == need) {
            memcpy(out + o, s + i, need + 1);
            o += need + 1;
        } else {
            memcpy(out + o, fffd, 3); /* one U+FFFD per maximal invalid subpart */
            o += 3;
        }
        i += 1 + k;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

json_t *mcp_json_text(const char *s, size_t len)
{
    if (!s)
        return json_string("");
    json_t *j = json_stringn(s, len);
    if (j)
        return j;
    /* jansson refuses invalid UTF-8 (or ran out of memory): repair, retry. */
    size_t n;
    char *fixed = mcp_utf8_sanitize(s, len, &n);
    if (!fixed)
        return NULL;
    j = json_stringn(fixed, n);
    free(fixed);
    return j;
}
