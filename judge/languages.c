/* languages.c -- the table of languages run_code knows (see languages.h).
 *
 * Flags are part of the contract: the C++ line is the one the image's
 * precompiled bits/stdc++.h was built with (deploy/image/Dockerfile), and
 * any difference (-O level, -std, -pipe, -D...) would silently reject the
 * PCH.  JVM tools get explicit heaps because the sandbox has 256 MiB and
 * a JVM sizes its default heap from the host's memory, not the cgroup's.
 */
#include "judge/languages.h"

#include "talk/langs.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const language_t languages[] = {
    { "c", "main.c", "gcc -O2 -std=gnu17 -pipe -o main {file} -lm", "./main", "main", false, NULL,
      NULL },
    { "cpp", "main.cpp",
      "g++ -O2 -std=c++17 -pipe -I/opt/talkback/pch -Winvalid-pch -o main {file}", "./main", "main",
      false, NULL, NULL },
    { "python", "main.py", NULL, "python3 {file}", NULL, false, NULL, NULL },
    { "javascript", "main.js", NULL, "node {file}", NULL, false, NULL, NULL },
    { "bash", "main.sh", NULL, "bash {file}", NULL, false, NULL, NULL },
    { "rust", "main.rs", "rustc -O -o main {file}", "./main", "main", false, NULL, NULL },
    { "go", "main.go", "go build -o main {file}", "./main", "main", false, NULL, NULL },
    { "java", "{class}.java", "javac -J-Xmx160m -J-XX:TieredStopAtLevel=1 -d . {file}",
      "java -Xmx160m -Xss64m -cp . {class}", "*.class", false, NULL, NULL },
    { "kotlin", "main.kt", "JAVA_OPTS=-Xmx160m kotlinc {file} -include-runtime -d main.jar",
      "java -Xmx160m -Xss64m -jar main.jar", "main.jar", false, NULL, NULL },
    { "csharp", "main.cs", "mcs -out:main.exe {file}", "mono main.exe", "main.exe", false, NULL,
      NULL },
    { "haskell", "main.hs", "ghc -O1 -o main {file} +RTS -M200m -RTS", "./main", "main", true, NULL,
      NULL },
    { "lua", "main.lua", NULL, "lua5.4 {file}", NULL, false, NULL, NULL },
    { "perl", "main.pl", NULL, "perl {file}", NULL, false, NULL, NULL },
    { "awk", "main.awk", NULL, "awk -f {file}", NULL, false, NULL, NULL },
    /* Installed on first use in the chat's sandbox (judge/install.h). */
    { "ruby", "main.rb", NULL, "ruby {file}", NULL, false, "ruby", "ruby" },
    { "php", "main.php", NULL, "php {file}", NULL, false, "php-cli", "php" },
    { "tcl", "main.tcl", NULL, "tclsh {file}", NULL, false, "tcl", "tclsh" },
    { "fortran", "main.f90", "gfortran -O2 -o main {file}", "./main", "main", false, "gfortran",
      "gfortran" },
    { "pascal", "main.pas", "fpc -O2 -v0 -omain {file}", "./main", "main", false, "fp-compiler",
      "fpc" },
    { "d", "main.d", "gdc -O2 -o main {file}", "./main", "main", false, "gdc", "gdc" },
    { "ocaml", "main.ml", "ocamlopt -o main {file}", "./main", "main", false, "ocaml-nox",
      "ocamlopt" },
    { "lisp", "main.lisp", NULL, "sbcl --script {file}", NULL, false, "sbcl", "sbcl" },
    { "prolog", "main.pl", NULL, "swipl -q -g main -t halt {file}", NULL, false, "swi-prolog-nox",
      "swipl" },
    { "sql", "main.sql", NULL, "sqlite3 -bail :memory: '.read {file}'", NULL, false, "sqlite3",
      "sqlite3" },
    { "ada", "main.adb", "gnatmake -q -O2 {file}", "./main", "main", false, "gnat", "gnatmake" },
    { "r", "main.R", NULL, "Rscript {file}", NULL, false, "r-base-core", "Rscript" },
    { "scheme", "main.scm", NULL, "guile --no-auto-compile -s {file}", NULL, false, "guile-3.0",
      "guile" },
    { "erlang", "main.erl", NULL, "escript {file}", NULL, false, "erlang-nox", "escript" },
    { "objc", "main.m", "gcc -O2 -o main {file} -lobjc", "./main", "main", false, "gobjc",
      "/usr/libexec/gcc/x86_64-linux-gnu/14/cc1obj" /* gcc is there without it */ },
    { "cobol", "main.cob", "cobc -x -o main {file}", "./main", "main", false, "gnucobol3", "cobc" },
};

#define LANGUAGES_N (sizeof languages / sizeof languages[0])

/* The names are talk/langs.c's row of the same tag: the one table of
 * names and aliases the reply proxy reads too. */
const language_t *languages_find(const char *name)
{
    const lang_name_t *ln = langs_find(name);
    for (size_t i = 0; ln && i < LANGUAGES_N; i++)
        if (strcmp(languages[i].tag, ln->tag) == 0)
            return &languages[i];
    return NULL;
}

const char *languages_title(const language_t *lang)
{
    const lang_name_t *ln = langs_by_tag(lang->tag);
    return ln ? ln->name : lang->tag;
}

const language_t *languages_at(size_t i)
{
    return i < LANGUAGES_N ? &languages[i] : NULL;
}

void languages_list(char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < LANGUAGES_N && o < outlen; i++) {
        int w = snprintf(out + o, outlen - o, "%s%s (%s)", i ? ", " : "",
                         languages_title(&languages[i]), languages[i].tag);
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
