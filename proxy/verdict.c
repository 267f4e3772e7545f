/* verdict.c -- what a run_code or run result says, for the reply repair
 * (see repair.h).
 *
 * The program's output is shown verbatim in a run_code result, so any
 * line of it may look like one of the judge's.  What the program cannot
 * make is the result's shape: when the call compared (`expected` or
 * `tests`), the judge's own lines always follow the output and a PASS is
 * the very last line; when it did not compare, the judge never says PASS.
 * So a PASS counts only as the last line of a result of a call that
 * compared.  A program that prints a FAIL or CRASH line of its own can at
 * worst make a run read as failed, never as passed.
 */
#include "proxy/repair.h"
#include "talk/texts.h"

#include <string.h>
#include <strings.h>

#define DONT_ANSWER TXW_DONT_ANSWER

static bool verdict_starts(const char *line, size_t len, const char *prefix)
{
    size_t pl = strlen(prefix);
    return len >= pl && memcmp(line, prefix, pl) == 0;
}

static bool verdict_contains_ci(const char *text, const char *needle)
{
    size_t nl = strlen(needle);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, needle, nl) == 0)
            return true;
    return false;
}

bool repair_nothing_ran(const char *text)
{
    return verdict_contains_ci(text, "nothing ran") && strstr(text, "[talkback") != NULL;
}

/* The last line of text (without its newline): *len set, NULL when empty. */
static const char *verdict_last_line(const char *text, size_t *len)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    if (!n)
        return NULL;
    size_t start = n;
    while (start && text[start - 1] != '\n')
        start--;
    *len = n - start;
    return text + start;
}

/* A failure verdict line of the judge (or one the program printed). */
static repair_verdict_t verdict_of_line(const char *line, size_t len)
{
    if (verdict_starts(line, len, TXW_FAIL) || verdict_starts(line, len, TXW_CRASH) ||
        verdict_starts(line, len, TXW_TIMEOUT) || verdict_starts(line, len, TXW_OUTPUT_LIMIT) ||
        verdict_starts(line, len, TXW_CANCELLED))
        return REPAIR_FAIL;
    if (verdict_starts(line, len, TXW_COMPILE_ERROR))
        return REPAIR_COMPILE_ERROR;
    return REPAIR_RAN;
}

repair_verdict_t repair_code_verdict(const char *text, bool compared)
{
    if (!text || !*text)
        return REPAIR_NOT_RUN;
    size_t ll = 0;
    const char *last = verdict_last_line(text, &ll);
    if (compared && last &&
        (verdict_starts(last, ll, TXW_PASS_MATCH) || verdict_starts(last, ll, TXW_PASS_ALL)))
        return REPAIR_PASS;
    repair_verdict_t v = REPAIR_RAN;
    bool dont_answer = false;
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        repair_verdict_t lv = verdict_of_line(line, len);
        if (lv != REPAIR_RAN)
            v = lv;
        else if (verdict_starts(line, len, DONT_ANSWER))
            dont_answer = true;
        line += len;
        if (*line)
            line++;
    }
    if (v != REPAIR_RAN)
        return v;
    if (repair_nothing_ran(text))
        return REPAIR_NOT_RUN;
    return dont_answer ? REPAIR_FAIL : REPAIR_RAN;
}

repair_verdict_t repair_run_verdict(const char *text)
{
    if (!text || !*text || repair_nothing_ran(text))
        return REPAIR_NOT_RUN;
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        if (verdict_starts(line, len, "[exit code ") || verdict_starts(line, len, "[timed out") ||
            verdict_starts(line, len, "[cancelled"))
            return REPAIR_FAIL;
        line += len;
        if (*line)
            line++;
    }
    return REPAIR_RAN;
}
