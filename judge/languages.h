/* languages.h -- the languages run_code knows, as one table of data.
 *
 * Each entry says, by its tag (the key of its names and aliases in
 * talk/langs.c, the table the reply proxy reads too), how a program is saved (file name), compiled (a command
 * line, or none) and run (a command line), and which names a model may use
 * for it.  Command lines run under bash in /work and may hold {file}, the
 * saved file's name, and {class}, the Java class the code declares.  Adding
 * a language is one entry here plus one test, and a package in the image
 * or one installed on first use (install, needs).
 */
#ifndef TALKBACK_LANGUAGES_H
#define TALKBACK_LANGUAGES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *tag;     /* code-fence tag: "cpp"; its names: talk/langs.c */
    const char *file;    /* file name, may hold {class} */
    const char *compile; /* compile line, or NULL */
    const char *run;     /* run line */
    const char *build;   /* what the compile makes (a shell glob), kept for
                            * the compile cache; NULL when not compiled */
    bool compile_runs;   /* the compiler may run the program's own code
                            * (Template Haskell's runIO): the compile counts
                            * as the program starting (hub/retry.h) */
    const char *install; /* Debian package installed on first use in a chat
                            * (judge/install.h); NULL: in the image */
    const char *needs;   /* the program whose absence means "install" */
} language_t;

/* Look up a language by any of its names (talk/langs.h: case-insensitive,
 * surrounding spaces ignored).  NULL when unknown or not run here. */
const language_t *languages_find(const char *name);
/* What the model reads for it: "C++" (talk/langs.c's name). */
const char *languages_title(const language_t *lang);
/* Entry i, NULL past the end (for tests). */
const language_t *languages_at(size_t i);
/* "C (c), C++ (cpp, c++), ..." for the unknown-language error. */
void languages_list(char *out, size_t outlen);
/* Expand {file} and {class} in a template for this code.  Returns a
 * malloc'ed string (NULL when out of memory). */
char *languages_expand(const language_t *lang, const char *tmpl, const char *code);
/* The Java class a program declares: the public class, else the class
 * holding `static void main`, else "Main".  Writes into out. */
void languages_java_class(const char *code, char *out, size_t outlen);

#endif
