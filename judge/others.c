/* others.c -- languages run_code does not run itself, and the run lines
 * that do here (see others.h).  Every package name was checked against
 * Debian 13's archive; TypeScript comes from npm (tsx), as Debian's tsc
 * is old and slow.
 */
#include "judge/others.h"

#include "talk/langs.h"
#include "talk/texts.h"

#include <stdio.h>
#include <string.h>

#define APT(p) "apt-get update && apt-get install -y " p

static const other_lang_t others[] = {
    { "typescript", "npm install -g tsx", "main.ts", "tsx main.ts", NULL },
    { "scala", APT("scala"), "main.scala", "scala -J-Xmx160m main.scala", NULL },
    { "swift", APT("swiftlang"), "main.swift", "swiftc -O -o main main.swift && ./main", NULL },
    { "elixir", APT("elixir"), "main.exs", "elixir main.exs", NULL },
    { "clojure", APT("clojure"), "main.clj", "clojure main.clj", NULL },
    { "racket", APT("racket"), "main.rkt", "racket main.rkt", NULL },
    { "groovy", APT("groovy"), "main.groovy", "groovy main.groovy", NULL },
    /* Not in Debian 13. */
    { "zig", NULL, NULL, NULL, NULL },
    { "julia", NULL, NULL, NULL, NULL },
    { "dart", NULL, NULL, NULL, NULL },
    { "nim", NULL, NULL, NULL, NULL },
};

#define OTHERS_N (sizeof others / sizeof others[0])

const other_lang_t *others_at(size_t i)
{
    return i < OTHERS_N ? &others[i] : NULL;
}

const other_lang_t *others_find(const char *name)
{
    const lang_name_t *ln = langs_find(name);
    for (size_t i = 0; ln && i < OTHERS_N; i++)
        if (strcmp(others[i].tag, ln->tag) == 0)
            return &others[i];
    return NULL;
}

const char *others_title(const other_lang_t *o)
{
    const lang_name_t *ln = langs_by_tag(o->tag);
    return ln ? ln->name : o->tag;
}

void others_say(const other_lang_t *o, const char *known, char *out, size_t outlen)
{
    if (!o->install) {
        snprintf(out, outlen, TX_JG_OTHER_NONE, others_title(o), known);
        return;
    }
    snprintf(out, outlen, TX_JG_OTHER_RUN, others_title(o), o->file, o->install, o->run, o->run,
             o->note ? "; " : "", o->note ? o->note : "");
}
