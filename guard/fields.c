/* fields.c -- reading a JSON object the way Docker's Go decoder does (see
 * fields.h). */
#include "guard/fields.h"

#include <stdio.h>
#include <string.h>

int fields_fold(const char *key, char *out, size_t outlen)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)key;
    while (*p) {
        char c;
        if (*p < 0x80) {
            c = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : (char)*p;
            p++;
        } else if (p[0] == 0xC5 && p[1] == 0xBF) { /* U+017F long s */
            c = 's';
            p += 2;
        } else if (p[0] == 0xE2 && p[1] == 0x84 && p[2] == 0xAA) { /* U+212A Kelvin */
            c = 'k';
            p += 3;
        } else {
            return -1;
        }
        if (o + 1 >= outlen)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

int fields_pick(const json_t *obj, const char *what, const char *const *names, size_t n,
                json_t **vals, char *why, size_t whylen)
{
    const char *key;
    json_t *v;
    char folded[64];

    for (size_t i = 0; i < n; i++)
        vals[i] = NULL;
    if (!json_is_object(obj)) {
        snprintf(why, whylen, "%s is not a JSON object", what);
        return -1;
    }
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t i = n;
        if (fields_fold(key, folded, sizeof folded) == 0)
            for (i = 0; i < n && strcmp(names[i], folded) != 0; i++)
                ;
        if (i == n) {
            snprintf(why, whylen, "%s.%.60s is not part of the sandbox template", what, key);
            return -1;
        }
        if (vals[i]) {
            snprintf(why, whylen, "%s.%s is given twice", what, names[i]);
            return -1;
        }
        vals[i] = v;
    }
    return 0;
}

bool fields_str_is(const json_t *v, const char *s)
{
    return json_is_string(v) && strlen(s) == json_string_length(v) &&
           memcmp(json_string_value(v), s, json_string_length(v)) == 0;
}

bool fields_int_is(const json_t *v, long long n)
{
    return json_is_integer(v) && json_integer_value(v) == n;
}

bool fields_map_is(const json_t *v, const char *const *keys, const char *const *vals, size_t n)
{
    if (!json_is_object(v) || json_object_size(v) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_object_get(v, keys[i]);
        if (!json_is_string(m) || strlen(json_string_value(m)) != json_string_length(m))
            return false;
        if (vals[i] && !fields_str_is(m, vals[i]))
            return false;
    }
    return true;
}

bool fields_strv_is(const json_t *v, const char *const *strs, size_t n)
{
    if (!json_is_array(v) || json_array_size(v) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!fields_str_is(json_array_get(v, i), strs[i]))
            return false;
    return true;
}

bool fields_strv_ok(const json_t *v, size_t max)
{
    size_t i;
    json_t *s;
    if (!json_is_array(v) || json_array_size(v) > max)
        return false;
    json_array_foreach(v, i, s) if (!json_is_string(s) || strlen(json_string_value(s)) !=
                                                              json_string_length(s)) return false;
    return true;
}
