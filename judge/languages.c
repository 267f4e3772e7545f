/* languages.c -- the table of languages run_code knows (see languages.h).
 *
 * Flags are part of the contract: the C++ line is the one the image's
 * precompiled bits/stdc++.h was built with (deploy/image/Dockerfile), and
 * any difference (-O level, -std, -pipe, -D...) would silently reject the
 * PCH.  JVM tools get explicit heaps because the sandbox has 256 MiB and
 * a JVM sizes its default heap from the host's memory, not the cgroup's.
 */
#include "judge/languages.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const language_t languages[] = {
    { "C", "c", "c gcc c11 c17", "main.c", "gcc -O2 -std=gnu17 -pipe -o main {file} -lm", "./main",
      "main", false, NULL, NULL },
    { "C++", "cpp", "c++ cpp cxx cc g++ cplusplus c++17 cpp17", "main.cpp",
      "g++ -O2 -std=c++17 -pipe -I/opt/talkback/pch -Winvalid-pch -o main {file}", "./main", "main",
      false, NULL, NULL },
    { "Python", "python", "python python3 py py3", "main.py", NULL, "python3 {file}", NULL, false,
      NULL, NULL },
    { "JavaScript", "javascript", "javascript js node nodejs", "main.js", NULL, "node {file}", NULL,
      false, NULL, NULL },
    { "Bash", "bash", "bash sh shell", "main.sh", NULL, "bash {file}", NULL, false, NULL, NULL },
    { "Rust", "rust", "rust rs rustc", "main.rs", "rustc -O -o main {file}", "./main", "main",
      false, NULL, NULL },
    { "Go", "go", "go golang", "main.go", "go build -o main {file}", "./main", "main", false, NULL,
      NULL },
    { "Java", "java", "java", "{class}.java",
      "javac -J-Xmx160m -J-XX:TieredStopAtLevel=1 -d . {file}",
      "java -Xmx160m -Xss64m -cp . {class}", "*.class", false, NULL, NULL },
    { "Kotlin", "kotlin", "kotlin kt kts", "main.kt",
      "JAVA_OPTS=-Xmx160m kotlinc {file} -include-runtime -d main.jar",
      "java -Xmx160m -Xss64m -jar main.jar", "main.jar", false, NULL, NULL },
    { "C#", "csharp", "c# cs csharp mono", "main.cs", "mcs -out:main.exe {file}", "mono main.exe",
      "main.exe", false, NULL, NULL },
    { "Haskell", "haskell", "haskell hs ghc", "main.hs", "ghc -O1 -o main {file} +RTS -M200m -RTS",
      "./main", "main", true, NULL, NULL },
    { "Lua", "lua", "lua lua5.4", "main.lua", NULL, "lua5.4 {file}", NULL, false, NULL, NULL },
    { "Perl", "perl", "perl pl perl5", "main.pl", NULL, "perl {file}", NULL, false, NULL, NULL },
    { "AWK", "awk", "awk gawk mawk", "main.awk", NULL, "awk -f {file}", NULL, false, NULL, NULL },
    /* Installed on first use in the chat's sandbox (judge/install.h). */
    { "Ruby", "ruby", "ruby rb", "main.rb", NULL, "ruby {file}", NULL, false, "ruby", "ruby" },
    { "PHP", "php", "php", "main.php", NULL, "php {file}", NULL, false, "php-cli", "php" },
    { "Tcl", "tcl", "tcl tclsh", "main.tcl", NULL, "tclsh {file}", NULL, false, "tcl", "tclsh" },
    { "Fortran", "fortran", "fortran f90 f95 gfortran", "main.f90", "gfortran -O2 -o main {file}",
      "./main", "main", false, "gfortran", "gfortran" },
    { "Pascal", "pascal", "pascal pas fpc freepascal delphi", "main.pas",
      "fpc -O2 -v0 -omain {file}", "./main", "main", false, "fp-compiler", "fpc" },
    { "D", "d", "d dlang gdc", "main.d", "gdc -O2 -o main {file}", "./main", "main", false, "gdc",
      "gdc" },
    { "OCaml", "ocaml", "ocaml ml", "main.ml", "ocamlopt -o main {file}", "./main", "main", false,
      "ocaml-nox", "ocamlopt" },
    { "Common Lisp", "lisp", "lisp common-lisp commonlisp sbcl cl", "main.lisp", NULL,
      "sbcl --script {file}", NULL, false, "sbcl", "sbcl" },
    { "Prolog", "prolog", "prolog swipl swi-prolog", "main.pl", NULL,
      "swipl -q -g main -t halt {file}", NULL, false, "swi-prolog-nox", "swipl" },
    { "SQL", "sql", "sql sqlite sqlite3", "main.sql", NULL, "sqlite3 -bail :memory: '.read {file}'",
      NULL, false, "sqlite3", "sqlite3" },
    { "Ada", "ada", "ada gnat", "main.adb", "gnatmake -q -O2 {file}", "./main", "main", false,
      "gnat", "gnatmake" },
    { "R", "r", "r rscript rlang", "main.R", NULL, "Rscript {file}", NULL, false, "r-base-core",
      "Rscript" },
    { "Scheme", "scheme", "scheme guile scm", "main.scm", NULL, "guile --no-auto-compile -s {file}",
      NULL, false, "guile-3.0", "guile" },
    { "Erlang", "erlang", "erlang erl escript", "main.erl", NULL, "escript {file}", NULL, false,
      "erlang-nox", "escript" },
    { "Objective-C", "objc", "objc objective-c objectivec obj-c", "main.m",
      "gcc -O2 -o main {file} -lobjc", "./main", "main", false, "gobjc",
      "/usr/libexec/gcc/x86_64-linux-gnu/14/cc1obj" /* gcc is there without it */ },
    { "COBOL", "cobol", "cobol cob cbl gnucobol cobc", "main.cob", "cobc -x -o main {file}",
      "./main", "main", false, "gnucobol3", "cobc" },
};

#define LANGUAGES_N (sizeof languages / sizeof languages[0])

bool languages_name(const char *name, const char **start, size_t *len)
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

bool languages_alias_is(const char *aliases, const char *name, size_t n)
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

const language_t *languages_find(const char *name)
{
    size_t n;
    if (!languages_name(name, &name, &n))
        return NULL;
    for (size_t i = 0; i < LANGUAGES_N; i++)
        if (languages_alias_is(languages[i].aliases, name, n))
            return &languages[i];
    return NULL;
}

void languages_list(char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < LANGUAGES_N && o < outlen; i++) {
        int w = snprintf(out + o, outlen - o, "%s%s (%s)", i ? ", " : "", languages[i].name,
                         languages[i].tag);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* Skip comments and string literals so `class` inside them is not read as
 * a declaration: a small scanner, not a Java parser. */
static void strip_comments(const char *code, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = code; *p && o + 1 < outlen; p++) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            if (!*p)
                break;
        } else if (p[0] == '/' && p[1] == '*') {
            p += 2;
            while (*p && !(p[0] == '*' && p[1] == '/'))
                p++;
            if (!*p)
                break;
            p++;
            continue;
        } else if (*p == '"') {
            p++;
            while (*p && *p != '"' && *p != '\n') {
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
            if (!*p)
                break;
            out[o++] = ' ';
            continue;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

static bool ident_at(const char *s, const char *word)
{
    size_t n = strlen(word);
    return strncmp(s, word, n) == 0 && !isalnum((unsigned char)s[n]) && s[n] != '_';
}

/* The identifier after "class" at p (p points at "class"). */
static bool class_name(const char *p, char *out, size_t outlen)
{
    p += 5;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = 0;
    /* No `$`: legal in Java names, but the name reaches a shell line. */
    while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < outlen)
        n++;
    if (n == 0)
        return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

void languages_java_class(const char *code, char *out, size_t outlen)
{
    snprintf(out, outlen, "Main");
    size_t cl = strlen(code);
    char *clean = malloc(cl + 1);
    if (!clean)
        return;
    strip_comments(code, clean, cl + 1);
    const char *main_at = strstr(clean, "static void main");
    if (!main_at)
        main_at = strstr(clean, "void main");
    char last_class[256] = "";
    char before_main[256] = "";
    for (const char *p = clean; *p; p++) {
        if ((p == clean || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
            ident_at(p, "class")) {
            char name[256];
            if (!class_name(p, name, sizeof name))
                continue;
            /* "public class X" or "public final class X" ... */
            const char *q = p;
            while (q > clean && isspace((unsigned char)q[-1]))
                q--;
            const char *line = q;
            while (line > clean && line[-1] != '\n' && line[-1] != ';' && line[-1] != '}' &&
                   line[-1] != '{')
                line--;
            char prefix[128];
            size_t pl = (size_t)(p - line) < sizeof prefix - 1 ? (size_t)(p - line)
                                                               : sizeof prefix - 1;
            memcpy(prefix, line, pl);
            prefix[pl] = '\0';
            if (strstr(prefix, "public")) {
                snprintf(out, outlen, "%s", name);
                free(clean);
                return;
            }
            snprintf(last_class, sizeof last_class, "%s", name);
            if (main_at && p < main_at)
                snprintf(before_main, sizeof before_main, "%s", name);
        }
    }
    if (before_main[0])
        snprintf(out, outlen, "%s", before_main);
    else if (last_class[0])
        snprintf(out, outlen, "%s", last_class);
    free(clean);
}

char *languages_expand(const language_t *lang, const char *tmpl, const char *code)
{
    char cls[256];
    languages_java_class(code, cls, sizeof cls);
    char file[320];
    /* The file template itself may hold {class}. */
    const char *ft = lang->file;
    const char *hole = strstr(ft, "{class}");
    if (hole)
        snprintf(file, sizeof file, "%.*s%s%s", (int)(hole - ft), ft, cls, hole + 7);
    else
        snprintf(file, sizeof file, "%s", ft);
    size_t cap = strlen(tmpl) * 2 + 3 * (strlen(file) + strlen(cls)) + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{file}", 6) == 0) {
            o += (size_t)snprintf(out + o, cap - o, "%s", file);
            p += 6;
        } else if (strncmp(p, "{class}", 7) == 0) {
            o += (size_t)snprintf(out + o, cap - o, "%s", cls);
            p += 7;
        } else if (o + 1 < cap) {
            out[o++] = *p++;
        } else {
            break;
        }
    }
    out[o] = '\0';
    return out;
}
