/* fields.h -- reading a JSON object the way Docker's Go decoder does.
 *
 * Docker decodes request bodies with Go's encoding/json: an object key
 * matches a struct field whatever its case (and Unicode simple folding
 * makes U+017F match 's' and U+212A match 'k'), \u escapes are decoded
 * before matching (jansson does that too), and of keys that match one
 * field the last wins.  fields_pick() gathers an object's members into a
 * fixed list of allowed fields by that rule, refusing any key that is not
 * on the list, any two keys that match one field, and any key with a
 * character Go might fold onto ASCII in some other way; so what the guard
 * checks is exactly what Docker would see.
 */
#ifndef TALKBACK_GUARD_FIELDS_H
#define TALKBACK_GUARD_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* Fold a key as Go matches it onto a field name: ASCII lower case, U+017F
 * to 's', U+212A to 'k'.  -1 when the key has another non-ASCII character
 * or does not fit out. */
int fields_fold(const char *key, char *out, size_t outlen);

/* Gather obj's members into vals[i] by the lower-case field names
 * names[0..n-1].  -1 with a sentence in why when obj is not an object, a
 * key matches no name (what = where it is, e.g. "HostConfig"), or two keys
 * match one name.  Unset fields stay NULL.  vals borrow from obj. */
int fields_pick(const json_t *obj, const char *what, const char *const *names, size_t n,
                json_t **vals, char *why, size_t whylen);

/* Whether v is a JSON string equal to s. */
bool fields_str_is(const json_t *v, const char *s);
/* Whether v is an integer equal to n. */
bool fields_int_is(const json_t *v, long long n);
/* Whether v is a JSON object whose members are exactly the n string pairs
 * keys[i] = vals[i] (map keys: exact case, as Go's maps take them; a NULL
 * vals[i] accepts any string). */
bool fields_map_is(const json_t *v, const char *const *keys, const char *const *vals, size_t n);
/* Whether v is an array of exactly the n strings strs. */
bool fields_strv_is(const json_t *v, const char *const *strs, size_t n);
/* Whether v is an array of strings (at most max of them, none with a NUL). */
bool fields_strv_ok(const json_t *v, size_t max);

#endif
