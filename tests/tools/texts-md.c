/* texts-md.c -- talkback-texts-md: the catalogue of what the model reads,
 * as the generated part of docs/talkback.md (tests/tools/gen-docs writes
 * it there and checks it is current).
 *
 * Reads the two tables where those texts are data: talkback's own
 * sentences (talk/texts.c) and the hint tables (hints/), and prints them
 * as Markdown, one item per text with what triggers it.
 */
#include <stdio.h>
#include <string.h>

#include "hints/hints.h"
#include "talk/texts.h"

/* A text as an indented code block inside a list item: each of its lines
 * on its own line, so nothing in it is read as Markdown. */
static void put_block(const char *text)
{
    fputs("\n      ", stdout);
    for (const char *p = text; *p; p++) {
        if (*p == '\n' && p[1])
            fputs("\n      ", stdout);
        else if (*p != '\n')
            putchar(*p);
    }
    fputs("\n\n", stdout);
}

static const char *kind_words(text_kind_t k)
{
    switch (k) {
    case TK_FAIL: return "failure";
    case TK_NOTE: return "note";
    case TK_VERDICT: return "verdict";
    default: return "between processes";
    }
}

static void put_texts(void)
{
    static const text_who_t order[] = { TW_GATEWAY, TW_HUB,    TW_WORKER, TW_SANDBOX,
                                        TW_JUDGE,   TW_REAPER, TW_AGENT };
    for (size_t w = 0; w < sizeof order / sizeof order[0]; w++) {
        int n = 0;
        for (size_t i = 0; texts_at(i); i++) {
            const text_row_t *r = texts_at(i);
            if (r->who != order[w])
                continue;
            if (n++ == 0)
                printf("### Said by the %s\n\n", texts_who(order[w]));
            printf("- `%s` (%s): %s.", r->id, kind_words(r->kind), r->when);
            if (r->kind == TK_FAIL)
                printf(" Next step: \"%s\".", r->next);
            else if (r->kind == TK_INNER && strncmp(r->next, "TX_", 3) == 0)
                printf(" The model reads `%s` instead.", r->next);
            else if (r->kind == TK_VERDICT && r->next)
                printf(" Followed by `%s`, which names the next step.", r->next);
            else if (r->kind == TK_INNER)
                printf(" %c%s.", r->next[0] == 'r' ? 'R' : r->next[0], r->next + 1);
            printf("\n");
            put_block(r->text);
        }
    }
}

static void put_hints(void)
{
    printf("### The hint tables (hints/)\n\n");
    for (size_t i = 0; hints_entry_name(i); i++) {
        printf("- `%s`, after %s:\n", hints_entry_name(i), hints_entry_on(i));
        for (int k = 0; k < 3; k++)
            if (hints_entry_say(i, k))
                put_block(hints_entry_say(i, k));
    }
    printf("- the retry memory, after the same command failed the same way twice "
           "(hints/retry.c):\n");
    put_block(HINTS_RETRY_LINE);
}

int main(void)
{
    printf("## The catalogue\n\n");
    printf("<!-- Made by tests/tools/gen-docs from talk/texts.c and hints/: edit those, "
           "not this. -->\n\n");
    put_texts();
    put_hints();
    return 0;
}
