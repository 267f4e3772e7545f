/* langs.h -- the names a model uses for programming languages, as one
 * table of data: the name it reads, the code-fence tag, and every alias.
 *
 * The judge (run_code's languages in judge/languages.c, the ones it points
 * elsewhere in judge/others.c) and the reply proxy (the fence of a program
 * it repairs, proxy/repair.c) both read this table, so "c++", "cxx" or
 * "py3" mean the same language to each.  A row's tag is the key the
 * judge's tables use.  libc only: it sits on the floor, below every
 * process that names a language.
 */
#ifndef TALKBACK_TALK_LANGS_H
#define TALKBACK_TALK_LANGS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *name;    /* what the model reads: "C++" */
    const char *tag;     /* code-fence tag, the key of the judge's rows: "cpp" */
    const char *aliases; /* space-separated, lower case: "c++ cpp cxx cc" */
} lang_name_t;

/* The row one of whose aliases is name (case-insensitive, surrounding
 * spaces ignored); NULL when none is. */
const lang_name_t *langs_find(const char *name);
/* The row of a tag (exact); NULL when none is. */
const lang_name_t *langs_by_tag(const char *tag);
/* Row i, NULL past the end (for tests and lists). */
const lang_name_t *langs_at(size_t i);
/* name without its surrounding spaces (*start, *len); false when that is
 * empty or longer than any language's name (32 bytes). */
bool langs_trim(const char *name, const char **start, size_t *len);
/* Whether the space-separated list aliases holds name[0..n) (case-insensitive). */
bool langs_alias_is(const char *aliases, const char *name, size_t n);

#endif
