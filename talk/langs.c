/* langs.c -- the names of programming languages (see langs.h).
 *
 * The first rows are the languages run_code runs (judge/languages.c, in
 * its order: its "use one of" list is read in that order); then the ones
 * it points to the run tool for, or says cannot be had here
 * (judge/others.c).  No alias is in two rows (tests/unit/test_others.c).
 */
#include "talk/langs.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const lang_name_t langs[] = {
    { "C", "c", "c gcc c11 c17 c99" },
    { "C++", "cpp", "c++ cpp cxx cc g++ cplusplus c++17 cpp17 c++20" },
    { "Python", "python", "python python3 py py3" },
    { "JavaScript", "javascript", "javascript js node nodejs" },
    { "Bash", "bash", "bash sh shell" },
    { "Rust", "rust", "rust rs rustc" },
    { "Go", "go", "go golang" },
    { "Java", "java", "java" },
    { "Kotlin", "kotlin", "kotlin kt kts" },
    { "C#", "csharp", "c# cs csharp mono" },
    { "Haskell", "haskell", "haskell hs ghc" },
    { "Lua", "lua", "lua lua5.4" },
    { "Perl", "perl", "perl pl perl5" },
    { "AWK", "awk", "awk gawk mawk" },
    { "Ruby", "ruby", "ruby rb" },
    { "PHP", "php", "php" },
    { "Tcl", "tcl", "tcl tclsh" },
    { "Fortran", "fortran", "fortran f90 f95 gfortran" },
    { "Pascal", "pascal", "pascal pas fpc freepascal delphi" },
    { "D", "d", "d dlang gdc" },
    { "OCaml", "ocaml", "ocaml ml" },
    { "Common Lisp", "lisp", "lisp common-lisp commonlisp sbcl cl" },
    { "Prolog", "prolog", "prolog swipl swi-prolog" },
    { "SQL", "sql", "sql sqlite sqlite3" },
    { "Ada", "ada", "ada gnat" },
    { "R", "r", "r rscript rlang" },
    { "Scheme", "scheme", "scheme guile scm" },
    { "Erlang", "erlang", "erlang erl escript" },
    { "Objective-C", "objc", "objc objective-c objectivec obj-c" },
    { "COBOL", "cobol", "cobol cob cbl gnucobol cobc" },
    /* Not run by run_code (judge/others.c). */
    { "TypeScript", "typescript", "typescript ts tsx" },
    { "Scala", "scala", "scala" },
    { "Swift", "swift", "swift" },
    { "Elixir", "elixir", "elixir ex exs" },
    { "Clojure", "clojure", "clojure clj" },
    { "Racket", "racket", "racket rkt" },
    { "Groovy", "groovy", "groovy" },
    { "Zig", "zig", "zig" },
    { "Julia", "julia", "julia jl" },
    { "Dart", "dart", "dart" },
    { "Nim", "nim", "nim" },
};

#define LANGS_N (sizeof langs / sizeof langs[0])

const lang_name_t *langs_at(size_t i)
{
    return i < LANGS_N ? &langs[i] : NULL;
}

bool langs_trim(const char *name, const char **start, size_t *len)
{
    if (!name)
        return false;
    while (isspace((unsigned char)*name))
        name++;
    size_t n = strlen(name);
    while (n && isspace((unsigned char)name[n - 1]))
        n--;
    *start = name;
    *len = n;
    return n > 0 && n <= 32;
}

bool langs_alias_is(const char *aliases, const char *name, size_t n)
{
    for (const char *a = aliases; *a;) {
        size_t al = strcspn(a, " ");
        if (al == n && strncasecmp(a, name, n) == 0)
            return true;
        a += al;
        a += strspn(a, " ");
    }
    return false;
}

const lang_name_t *langs_find(const char *name)
{
    size_t n;
    if (!langs_trim(name, &name, &n))
        return NULL;
    for (size_t i = 0; i < LANGS_N; i++)
        if (langs_alias_is(langs[i].aliases, name, n))
            return &langs[i];
    return NULL;
}

const lang_name_t *langs_by_tag(const char *tag)
{
    for (size_t i = 0; tag && i < LANGS_N; i++)
        if (strcmp(langs[i].tag, tag) == 0)
            return &langs[i];
    return NULL;
}
