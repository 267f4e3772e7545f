/* others.h -- the languages run_code does not run itself, and how to run
 * them with the run tool in the same sandbox, as one table of data.
 *
 * A model that asks run_code for Ruby gets, instead of "use one of ...",
 * the lines that work here: write the program, install the toolchain
 * once (Debian's package, or npm's), run it.  A language Debian 13 has no
 * package for is said to be so, with the languages run_code knows.
 */
#ifndef TALKBACK_JUDGE_OTHERS_H
#define TALKBACK_JUDGE_OTHERS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *tag;     /* the key of its names and aliases in talk/langs.c */
    const char *install; /* the install line, or NULL: Debian 13 has none */
    const char *file;    /* where to write the program */
    const char *run;     /* the run line (compile and run) */
    const char *note;    /* one more fact, or NULL */
} other_lang_t;

/* Look up a language by any of its names (talk/langs.h). */
const other_lang_t *others_find(const char *name);
/* What the model reads for it: "TypeScript". */
const char *others_title(const other_lang_t *other);

/* The refusal text for other (not NULL), into out; known is
 * languages_list()'s list. */
void others_say(const other_lang_t *other, const char *known, char *out, size_t outlen);

/* For tests: entry i, NULL past the end. */
const other_lang_t *others_at(size_t i);

#endif
