/* list.c -- the container list through the Docker guard (see list.h).
 *
 * The query is read as Go's url.ParseQuery reads it ('&' between pairs,
 * %XX and '+' decoded) but stricter: a ';', an unknown or repeated
 * parameter, a bad escape or filters that are not a JSON object of string
 * lists (or of {"value": bool} maps, Docker's newer form) are refused, so
 * there is one reading of what the caller asked.  What goes to dockerd is
 * the guard's own encoding of what it read, filters in the map form.
 */
#include "guard/list.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard/rules.h"
#include "spec/sandbox.h"

/* Every label a container talkback made carries one of (spec/sandbox.h);
 * a label filter on any of them already narrows a list to containers that
 * carry a talkback label. */
static const char *const tb_labels[] = { SPEC_LABEL_CONV, SPEC_LABEL_SPARE, SPEC_LABEL_POOL,
                                         SPEC_LABEL_TOMB, SPEC_LABEL_PROBE, SPEC_LABEL_CREATED };
#define ADDED_LABEL SPEC_LABEL_CREATED /* every sandbox and spare */

/* The parameters a container list may have (the manager's and the
 * reaper's), in the order the rebuilt query puts them. */
static const char *const params[] = { "all", "limit", "size", "filters" };
#define N_PARAMS (sizeof params / sizeof params[0])

/* Decode s[0..n) as a query component ('+' is a space) into out (cap
 * bytes, NUL-terminated): its length, or -1 (a bad escape, %00). */
static long unescape(const char *s, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o + 1 >= cap)
            return -1;
        if (s[i] == '%') {
            const char *h1 = i + 2 < n && s[i + 1] ? memchr(hex, s[i + 1], 32) : NULL;
            const char *h2 = i + 2 < n && s[i + 2] ? memchr(hex, s[i + 2], 32) : NULL;
            if (!h1 || !h2)
                return -1;
            out[o++] = (char)((((h1 - hex) % 16) << 4) | ((h2 - hex) % 16));
            i += 2;
            if (!out[o - 1])
                return -1; /* a NUL would end the value early */
        } else {
            out[o++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    out[o] = '\0';
    return (long)o;
}

/* Append s[0..n), %-encoded but for [A-Za-z0-9._-], to out at *o. */
static int escape(const char *s, size_t n, char *out, size_t *o)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '-';
        if (*o + 4 > GLIST_QUERY_MAX)
            return -1;
        *o += (size_t)snprintf(out + *o, 4, plain ? "%c" : "%%%02X", c);
    }
    return 0;
}

/* Whether label filter value v names one of talkback's labels: "KEY" or
 * "KEY=value" with KEY one of tb_labels. */
static bool tb_label(const char *v)
{
    size_t k = strcspn(v, "=");
    for (size_t i = 0; i < sizeof tb_labels / sizeof tb_labels[0]; i++)
        if (strlen(tb_labels[i]) == k && strncmp(v, tb_labels[i], k) == 0)
            return true;
    return false;
}

/* Whether j is a string without NUL bytes, at most 1024 bytes long. */
static bool plain_string(const json_t *j)
{
    return json_is_string(j) && json_string_length(j) <= 1024 &&
           strlen(json_string_value(j)) == json_string_length(j);
}

/* The values of one filter (a list of strings, or a map of booleans) as
 * a new map {"value": true}; NULL when it is neither. */
static json_t *filter_values(json_t *v)
{
    json_t *m = json_object(), *x;
    size_t i;
    const char *k;
    if (json_is_array(v) && json_array_size(v) <= 64) {
        json_array_foreach(v, i, x)
        {
            if (!plain_string(x) || json_object_set_new(m, json_string_value(x), json_true()))
                goto bad;
        }
        return m;
    }
    if (json_is_object(v) && json_object_size(v) <= 64) {
        json_object_foreach(v, k, x)
        {
            if (!json_is_boolean(x) || strlen(k) > 1024 || json_object_set_new(m, k, json_true()))
                goto bad;
        }
        return m;
    }
bad:
    json_decref(m);
    return NULL;
}

/* The caller's filters text[0..n) (may be empty), read and narrowed: a
 * new object of maps, or NULL with why. */
static json_t *filters_read(const char *text, size_t n, char *why, size_t whylen)
{
    json_t *in = n ? json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL) : json_object();
    json_t *out = json_object(), *v;
    const char *k;
    if (!json_is_object(in) || json_object_size(in) > 16)
        goto bad;
    json_object_foreach(in, k, v)
    {
        json_t *m = filter_values(v);
        if (!m || !*k || strlen(k) > 32 || strspn(k, "abcdefghijklmnopqrstuvwxyz-") != strlen(k)) {
            json_decref(m);
            goto bad;
        }
        json_object_set_new(out, k, m);
    }
    json_t *labels = json_object_get(out, "label");
    bool narrow = false;
    json_object_foreach(labels, k, v) narrow |= tb_label(k);
    if (!labels)
        json_object_set_new(out, "label", labels = json_object());
    if (!narrow)
        json_object_set_new(labels, ADDED_LABEL, json_true());
    json_decref(in);
    return out;
bad:
    snprintf(why, whylen, "a container list whose filters are not a JSON object of lists");
    json_decref(in);
    json_decref(out);
    return NULL;
}

/* Which of params[] key is; N_PARAMS when none. */
static size_t param_index(const char *key)
{
    size_t i = 0;
    while (i < N_PARAMS && strcmp(params[i], key))
        i++;
    return i;
}

/* Split query into values[] by params[] (each seen once). */
static int query_read(const char *query, char *values[N_PARAMS], char *why, size_t whylen)
{
    const char *p = query;
    while (*p) {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        size_t kn = eq ? (size_t)(eq - p) : n;
        char key[16];
        size_t i = N_PARAMS;
        if (memchr(p, ';', n)) {
            snprintf(why, whylen, "a container list query with a ';'");
            return -1;
        }
        if (n && (unescape(p, kn, key, sizeof key) < 0 || (i = param_index(key)) == N_PARAMS)) {
            snprintf(why, whylen, "a container list query with a parameter other than %s",
                     "all, limit, size and filters");
            return -1;
        }
        if (n && values[i]) {
            snprintf(why, whylen, "a container list query with %s twice", params[i]);
            return -1;
        }
        if (n) {
            size_t vn = eq ? n - kn - 1 : 0;
            values[i] = malloc(vn + 1);
            if (!values[i] || unescape(eq ? eq + 1 : "", vn, values[i], vn + 1) < 0) {
                snprintf(why, whylen, "a container list query with a bad %%-escape");
                return -1;
            }
        }
        p += n + (p[n] == '&');
    }
    return 0;
}

/* The rebuilt query from the values read (all, limit and size: up to 16
 * letters or digits) and the narrowed filters. */
static int query_build(char *values[N_PARAMS], const json_t *filters, char *out, char *why,
                       size_t whylen)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i + 1 < N_PARAMS; i++) {
        if (!values[i])
            continue;
        size_t n = strlen(values[i]);
        if (n > 16 ||
            strspn(values[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") !=
                n) {
            snprintf(why, whylen, "a container list whose %s is not a plain value", params[i]);
            return -1;
        }
        o += (size_t)snprintf(out + o, GLIST_QUERY_MAX - o, "%s=%s&", params[i], values[i]);
    }
    char *f = json_dumps(filters, JSON_COMPACT);
    int rc = f && o + 8 < GLIST_QUERY_MAX ? 0 : -1;
    if (!rc) {
        o += (size_t)snprintf(out + o, GLIST_QUERY_MAX - o, "filters=");
        rc = escape(f, strlen(f), out, &o);
        out[o] = '\0';
    }
    free(f);
    if (rc)
        snprintf(why, whylen, "a container list whose filters are too long");
    return rc;
}

int glist_query(const char *query, char *out, char *why, size_t whylen)
{
    char *values[N_PARAMS] = { NULL };
    json_t *filters = NULL;
    int rc = query_read(query, values, why, whylen);
    const char *f = values[N_PARAMS - 1];
    if (!rc && !(filters = filters_read(f ? f : "", f ? strlen(f) : 0, why, whylen)))
        rc = -1;
    if (!rc)
        rc = query_build(values, filters, out, why, whylen);
    for (size_t i = 0; i < N_PARAMS; i++)
        free(values[i]);
    json_decref(filters);
    return rc;
}

/* A listed container's own name: the one of Names that is "/name" (the
 * others, "/other/alias", are what legacy links call it); "" when none. */
static const char *own_name(const json_t *names)
{
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n)
    {
        const char *s = json_string_value(n);
        if (s && s[0] == '/' && !strchr(s + 1, '/'))
            return s;
    }
    return "";
}

char *glist_filter(const char *body, size_t len, size_t *out_len)
{
    json_t *in = json_loadb(body, len, 0, NULL), *out = json_array(), *c;
    char *text = NULL;
    size_t i;
    if (!json_is_array(in))
        goto done;
    json_array_foreach(in, i, c)
    {
        gowner_t o =
            grules_owner(own_name(json_object_get(c, "Names")), json_object_get(c, "Labels"));
        if (json_is_object(c) && o != GOWN_FOREIGN)
            json_array_append(out, c);
    }
    char *t = json_dumps(out, JSON_COMPACT);
    if (t && (text = malloc(strlen(t) + 2))) {
        *out_len = (size_t)snprintf(text, strlen(t) + 2, "%s\n", t);
    }
    free(t);
done:
    json_decref(in);
    json_decref(out);
    return text;
}
