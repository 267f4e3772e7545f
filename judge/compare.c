/* compare.c -- run_code's output comparison and the verdict text the model
 * reads (see compare.h for the policy).
 *
 * What lives here: a line iterator that normalises on the fly, the
 * line-by-line comparison (exact, then tokens, then numbers within 1e-6),
 * the prompt finder, the display copies of lines, and the verdict texts.
 * Nothing is copied whole: lines and tokens are walked in place, so a
 * multi-megabyte output costs no more memory than the few display lines.
 *
 * Decisions taken:
 *  - Normalising: "\r\n" and a lone "\r" end a line like "\n"; trailing
 *    blanks (space, tab, and also \v and \f, which nobody can see) are cut
 *    from every line; trailing blank lines are dropped, so a missing final
 *    newline does not matter.  Everything else is bytes: NUL and invalid
 *    UTF-8 are ordinary characters of a line.
 *  - Tokens (DMOJ's rule): a line is a list of tokens split on runs of
 *    blanks, and lines are compared as token lists one by one.  Blank lines
 *    in the middle count as lines: "1\n\n2" differs from "1\n2".  So a gap
 *    with a newline never equals a gap without one ("1\n2" != "1 2").
 *  - Numbers: two tokens that differ count as equal when both are plain
 *    decimal numbers (digits, sign, '.', exponent; no hex, inf or nan),
 *    both finite, at least one of them written with '.' or an exponent,
 *    and |got - expected| <= 1e-6 * max(1, |expected|), i.e. 1e-6 absolute
 *    or relative to the expected value.  Two integers must match exactly:
 *    "3" vs "4" is a wrong answer, not a rounding question.  "10" vs
 *    "10.0" is equal within tolerance.
 *  - The first difference: lines count as equal for the FAIL pointer when
 *    they are equal as tokens or within the tolerance, so a spacing-only
 *    difference on an earlier line is never reported as "the" difference.
 *    A line whose tokens differ makes FAIL_LINE; running out of lines on
 *    one side makes FAIL_MISSING or FAIL_EXTRA; an output with no lines at
 *    all (after normalising) makes FAIL_EMPTY.
 *  - Display: a shown line is at most ~200 bytes.  When a long line must be
 *    cut, the window starts ~60 bytes before the first differing token, so
 *    two long lines that differ near their end do not look identical; cuts
 *    are marked with "…" and never split a UTF-8 sequence.  Invalid UTF-8
 *    bytes and control characters (but tab) are shown as "\xNN", so the
 *    text stays valid UTF-8 without NUL bytes.  An empty line is shown as
 *    "(empty line)".
 *  - Prompts (compare_find_prompt): a segment starts at the beginning of a
 *    line or after ':', '?', '.', '!', ';' or '>' (blanks skipped), with a
 *    keyword at a word boundary, and ends at the first ':' or '?' on that
 *    line within 120 bytes.  Verbs ("enter", "please", and "input", "type",
 *    "give", "provide", "choose" with an object that is not "of ...") make
 *    a prompt whatever follows.  Noun phrases ("how many", "number of",
 *    "value of", "size of", "what is", "element N") and bare verbs
 *    ("Input:", "Type:") ending in ':' make a prompt only when nothing follows on the line or
 *    another prompt follows: "Number of islands: 3" is a label of the
 *    answer, and calling it a prompt would scold wrongly.  Any segment
 *    ending in '?' is a question, so a prompt ("How many numbers? 15").
 *    Not a prompt either: a segment that appears in the expected output,
 *    or one followed only by the input's own values, as a contiguous run
 *    of the input's tokens (brackets, commas, quotes, parentheses, braces
 *    ignored, and "name =" in front of values too, as in LeetCode's
 *    "Input: nums = [1,2]"); when nothing follows on the line, the next
 *    line is checked the same way ("Input:\n1 2 3").  At most
 *    PROMPT_CANDIDATES segments are checked, which bounds the time on huge
 *    outputs; prompts come first in practice.
 *  - Verdict texts: as in compare.h, plus two wordings the fixed texts get
 *    wrong: FAIL_EXTRA with one expected line ("the expected line matches")
 *    and with none ("no output was expected").
 */
#include "judge/compare.h"
#include "talk/texts.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FLOAT_EPS         1e-6
#define SHOW_MAX          200 /* bytes of a shown line, markers aside */
#define SHOW_BEFORE       60  /* context kept before the first difference */
#define PROMPT_MAX        120 /* longest prompt segment, keyword to ':' */
#define PROMPT_CANDIDATES 32  /* segments checked before giving up */
#define NUMBER_MAX        64  /* longer tokens are not parsed as numbers */

static const char ELLIPSIS[] = "\xe2\x80\xa6"; /* U+2026 "…" */

/* ---- lines ------------------------------------------------------------ */

/* Blanks inside a line.  '\r' is not one: it ends a line. */
static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

typedef struct {
    const char *p;
    size_t end; /* end of content: trailing blanks and newlines cut */
    size_t pos;
} lines_t;

static void lines_init(lines_t *it, const char *p, size_t n)
{
    it->p = p ? p : "";
    if (!p)
        n = 0;
    /* The last byte kept is content, so the last line is never blank and
     * trailing blank lines (and a missing final newline) vanish. */
    while (n && (is_blank((unsigned char)p[n - 1]) || p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    it->end = n;
    it->pos = 0;
}

/* Next line, without its terminator and trailing blanks. */
static bool lines_next(lines_t *it, const char **line, size_t *len)
{
    if (it->pos >= it->end)
        return false;
    const char *p = it->p;
    size_t s = it->pos, e = s;
    while (e < it->end && p[e] != '\n' && p[e] != '\r')
        e++;
    if (e < it->end)
        it->pos = (p[e] == '\r' && e + 1 < it->end && p[e + 1] == '\n') ? e + 2 : e + 1;
    else
        it->pos = e;
    while (e > s && is_blank((unsigned char)p[e - 1]))
        e--;
    *line = p + s;
    *len = e - s;
    return true;
}

static size_t count_lines(const char *p, size_t n)
{
    lines_t it;
    const char *l;
    size_t len, count = 0;
    lines_init(&it, p, n);
    while (lines_next(&it, &l, &len))
        count++;
    return count;
}

/* ---- tokens and numbers ------------------------------------------------ */

static bool next_token(const char *p, size_t n, size_t *pos, size_t *start, size_t *len)
{
    size_t i = *pos;
    while (i < n && is_blank((unsigned char)p[i]))
        i++;
    if (i >= n) {
        *pos = n;
        return false;
    }
    size_t s = i;
    while (i < n && !is_blank((unsigned char)p[i]))
        i++;
    *start = s;
    *len = i - s;
    *pos = i;
    return true;
}

/* A plain decimal number, finite.  The character check keeps strtod from
 * accepting hex, "inf" and "nan", which no checker treats as numbers. */
static bool parse_number(const char *s, size_t n, double *v, bool *fractional)
{
    if (n == 0 || n >= NUMBER_MAX)
        return false;
    bool digit = false, frac = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9')
            digit = true;
        else if (c == '.' || c == 'e' || c == 'E')
            frac = true;
        else if (c != '+' && c != '-')
            return false;
    }
    if (!digit)
        return false;
    char buf[NUMBER_MAX];
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (end != buf + n || !isfinite(d))
        return false;
    *v = d;
    *fractional = frac;
    return true;
}

static bool numbers_close(const char *e, size_t elen, const char *g, size_t glen)
{
    double ve, vg;
    bool fe, fg;
    if (!parse_number(e, elen, &ve, &fe) || !parse_number(g, glen, &vg, &fg))
        return false;
    if (!fe && !fg)
        return false; /* two integers: exact or wrong */
    double tol = FLOAT_EPS * fmax(1.0, fabs(ve));
    /* The slack absorbs the rounding of the subtraction itself, so that
     * "1.000001" vs "1" (exactly 1e-6 apart on paper) counts as equal. */
    return fabs(ve - vg) <= tol * (1.0 + 1e-9);
}

typedef enum { LINE_SAME, LINE_SPACING, LINE_FLOAT, LINE_DIFF } line_cmp_t;

/* Compare one expected line with one got line.  On LINE_DIFF, *de and *dg
 * are where the first differing token starts in each (or the line's end
 * when that side ran out of tokens). */
static line_cmp_t line_compare(const char *e, size_t elen, const char *g, size_t glen, size_t *de,
                               size_t *dg)
{
    if (elen == glen && (elen == 0 || memcmp(e, g, elen) == 0))
        return LINE_SAME;
    line_cmp_t level = LINE_SPACING;
    size_t pe = 0, pg = 0;
    for (;;) {
        size_t se = elen, le = 0, sg = glen, lg = 0;
        bool he = next_token(e, elen, &pe, &se, &le);
        bool hg = next_token(g, glen, &pg, &sg, &lg);
        if (!he && !hg)
            return level;
        if (he && hg && le == lg && memcmp(e + se, g + sg, le) == 0)
            continue;
        if (he && hg && numbers_close(e + se, le, g + sg, lg)) {
            level = LINE_FLOAT;
            continue;
        }
        *de = he ? se : elen;
        *dg = hg ? sg : glen;
        return LINE_DIFF;
    }
}

/* ---- display ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t need;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        cp = c & 0x1F;
        min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        need = 2;
        cp = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        cp = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < need + 1)
        return 0;
    for (size_t i = 1; i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need + 1;
}

/* Append bytes as display text: valid UTF-8 as is, anything else as \xNN;
 * stops before exceeding `budget` output bytes.  Returns the input bytes
 * consumed; *used grows by the output bytes. */
static size_t show_append(textbuf_t *t, const char *p, size_t n, size_t budget, size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        size_t k = utf8_seq((const unsigned char *)p + i, n - i);
        bool escape = k == 0 || (k == 1 && ((c < 0x20 && c != '\t') || c == 0x7f));
        size_t cost = escape ? 4 : k;
        if (*used + cost > budget)
            break;
        if (escape) {
            char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
            textbuf_append(t, esc, 4);
            i++;
        } else {
            textbuf_append(t, p + i, k);
            i += k;
        }
        *used += cost;
    }
    return i;
}

/* A malloc'ed display copy of a line, cut to a window around diff_at (the
 * byte where the difference starts; 0 shows the head). */
static char *show_line(const char *p, size_t n, size_t diff_at)
{
    size_t start = 0;
    if (n > SHOW_MAX && diff_at > SHOW_BEFORE) {
        start = diff_at - SHOW_BEFORE;
        /* Back up to the lead byte of a UTF-8 sequence. */
        for (int k = 0; k < 3 && start > 0 && ((unsigned char)p[start] & 0xC0) == 0x80; k++)
            start--;
    }
    textbuf_t t;
    textbuf_init(&t);
    if (start > 0)
        textbuf_puts(&t, ELLIPSIS);
    size_t used = 0;
    size_t done = show_append(&t, p + start, n - start, SHOW_MAX, &used);
    if (start + done < n)
        textbuf_puts(&t, ELLIPSIS);
    if (t.oom) {
        textbuf_free(&t);
        return NULL;
    }
    return textbuf_take(&t, NULL);
}

/* ---- prompts ------------------------------------------------------------ */

typedef enum { KW_NONE, KW_NOUN, KW_VERB, KW_VERB_OBJ } kw_kind_t;

static const struct {
    const char *word;
    kw_kind_t kind;
} keywords[] = {
    { "enter", KW_VERB },      { "input", KW_VERB_OBJ }, { "please", KW_VERB },
    { "type", KW_VERB_OBJ },   { "give", KW_VERB_OBJ },  { "provide", KW_VERB_OBJ },
    { "choose", KW_VERB_OBJ }, { "how many", KW_NOUN },  { "number of", KW_NOUN },
    { "value of", KW_NOUN },   { "size of", KW_NOUN },   { "what is", KW_NOUN },
};

static bool is_word_char(unsigned char c)
{
    return isalnum(c) || c == '_';
}

/* Case-insensitive match of kw at p (a space in kw matches a run of
 * blanks), ending at a word boundary.  Returns the length matched or 0. */
static size_t match_word(const char *p, size_t n, const char *kw)
{
    size_t i = 0;
    for (; *kw; kw++) {
        if (*kw == ' ') {
            if (i >= n || !is_blank((unsigned char)p[i]))
                return 0;
            while (i < n && is_blank((unsigned char)p[i]))
                i++;
            continue;
        }
        if (i >= n || tolower((unsigned char)p[i]) != *kw)
            return 0;
        i++;
    }
    if (i < n && is_word_char((unsigned char)p[i]))
        return 0;
    return i;
}

/* "element 3", "Element #3", "element [3]". */
static size_t match_element(const char *p, size_t n)
{
    size_t i = match_word(p, n, "element");
    if (!i)
        return 0;
    while (i < n && is_blank((unsigned char)p[i]))
        i++;
    if (i < n && (p[i] == '#' || p[i] == '['))
        i++;
    size_t d = i;
    while (i < n && isdigit((unsigned char)p[i]))
        i++;
    if (i == d)
        return 0;
    if (i < n && p[i] == ']')
        i++;
    if (i < n && is_word_char((unsigned char)p[i]))
        return 0;
    return i;
}

/* Is there a prompt segment starting at line[pos]?  On success *end is
 * just past its ':' or '?'. */
static kw_kind_t segment_at(const char *line, size_t n, size_t pos, size_t *end)
{
    const char *p = line + pos;
    size_t m = n - pos, k = 0;
    kw_kind_t kind = KW_NONE;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0] && !k; i++) {
        k = match_word(p, m, keywords[i].word);
        if (k)
            kind = keywords[i].kind;
    }
    if (!k) {
        k = match_element(p, m);
        kind = KW_NOUN;
    }
    if (!k)
        return KW_NONE;
    size_t limit = m < PROMPT_MAX ? m : PROMPT_MAX;
    size_t j = k;
    while (j < limit && p[j] != ':' && p[j] != '?')
        j++;
    if (j >= limit)
        return KW_NONE;
    if (kind == KW_VERB_OBJ) {
        /* "Type a number:" asks; "Type:" and "Type of triangle:" label.
         * "Input: [2, 7, 11, 15]" is a hard-coded sample more often than a
         * prompt, and "line 1 differs" is true either way. */
        size_t o = k;
        while (o < j && is_blank((unsigned char)p[o]))
            o++;
        bool object = o > k && o < j && !match_word(p + o, j - o, "of");
        kind = object ? KW_VERB : KW_NOUN;
    }
    /* A question is asked of someone: "How many numbers? 15" is Python's
     * input("How many numbers? ") followed by the answer. */
    if (p[j] == '?')
        kind = KW_VERB;
    *end = pos + j + 1;
    return kind;
}

static bool is_value_strip(unsigned char c)
{
    return c == '[' || c == ']' || c == '(' || c == ')' || c == '{' || c == '}' || c == ',' ||
           c == '"' || c == '\'' || c == '=' || isspace(c);
}

/* Next value token: brackets, commas, quotes and '=' are separators.
 * *named is set when the token is followed by '=' ("nums = [...]"). */
static bool next_value(const char *p, size_t n, size_t *pos, size_t *start, size_t *len,
                       bool *named)
{
    size_t i = *pos;
    while (i < n && is_value_strip((unsigned char)p[i]))
        i++;
    if (i >= n) {
        *pos = n;
        return false;
    }
    size_t s = i;
    while (i < n && !is_value_strip((unsigned char)p[i]))
        i++;
    *start = s;
    *len = i - s;
    *pos = i;
    size_t j = i;
    while (j < n && is_blank((unsigned char)p[j]))
        j++;
    *named = j < n && p[j] == '=';
    return true;
}

static bool is_identifier(const char *p, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)p[0]) || p[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_word_char((unsigned char)p[i]))
            return false;
    return true;
}

typedef struct {
    const char *p;
    size_t len;
} span_t;

/* Does text consist only of a contiguous run of input's values?  KMP over
 * tokens: linear in the input however long the run. */
static bool only_input_values(const char *text, size_t tlen, const char *input, size_t ilen)
{
    size_t cap = 16, nr = 0, pos = 0, s, l, bytes = 0;
    bool named;
    span_t *r = malloc(cap * sizeof *r);
    if (!r)
        return false;
    while (next_value(text, tlen, &pos, &s, &l, &named)) {
        if (named && is_identifier(text + s, l))
            continue;
        /* A run of the input's values is no longer than the input: this
         * keeps a long line from costing more than the input itself. */
        bytes += l;
        if (bytes > ilen) {
            free(r);
            return false;
        }
        if (nr == cap) {
            span_t *nr2 = realloc(r, 2 * cap * sizeof *r);
            if (!nr2) {
                free(r);
                return false;
            }
            r = nr2;
            cap *= 2;
        }
        r[nr].p = text + s;
        r[nr].len = l;
        nr++;
    }
    if (nr == 0) {
        /* Only punctuation ("[]"): whatever it is, it asks for nothing. */
        free(r);
        return true;
    }
    size_t *fail = malloc(nr * sizeof *fail);
    if (!fail) {
        free(r);
        return false;
    }
#define SPAN_EQ(a, bp, bl) ((a).len == (bl) && memcmp((a).p, (bp), (bl)) == 0)
    fail[0] = 0;
    for (size_t i = 1, k = 0; i < nr; i++) {
        while (k && !SPAN_EQ(r[i], r[k].p, r[k].len))
            k = fail[k - 1];
        if (SPAN_EQ(r[i], r[k].p, r[k].len))
            k++;
        fail[i] = k;
    }
    bool found = false;
    size_t k = 0;
    pos = 0;
    while (!found && input && next_value(input, ilen, &pos, &s, &l, &named)) {
        while (k && !SPAN_EQ(r[k], input + s, l))
            k = fail[k - 1];
        if (SPAN_EQ(r[k], input + s, l))
            k++;
        if (k == nr)
            found = true;
    }
#undef SPAN_EQ
    free(fail);
    free(r);
    return found;
}

static void trim_blanks(const char **p, size_t *n)
{
    while (*n && is_blank((unsigned char)**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n && is_blank((unsigned char)(*p)[*n - 1]))
        (*n)--;
}

/* A phrase starts at the line's first non-blank, right after ':', '?' or
 * '>', or after '.', '!' or ';' and a blank (so "3.5" and "e.g." do not
 * start one). */
static bool phrase_start(const char *line, size_t i)
{
    size_t j = i;
    while (j > 0 && is_blank((unsigned char)line[j - 1]))
        j--;
    if (j == 0)
        return true;
    char c = line[j - 1];
    if (c == ':' || c == '?' || c == '>')
        return true;
    return j < i && (c == '.' || c == '!' || c == ';');
}

char *compare_find_prompt(const char *got, size_t glen, const char *expected, size_t elen,
                          const char *input, size_t ilen)
{
    if (!expected)
        elen = 0;
    if (!input)
        ilen = 0;
    lines_t it;
    const char *line, *next_line = NULL;
    size_t len, next_len = 0;
    int checked = 0;
    lines_init(&it, got, glen);
    bool have = lines_next(&it, &line, &len);
    while (have) {
        bool have_next = lines_next(&it, &next_line, &next_len);
        for (size_t i = 0; i < len; i++) {
            if (is_blank((unsigned char)line[i]) || !phrase_start(line, i))
                continue;
            size_t end;
            kw_kind_t kind = segment_at(line, len, i, &end);
            if (kind == KW_NONE)
                continue;
            if (++checked > PROMPT_CANDIDATES)
                return NULL; /* not proven: better silent than wrong */
            const char *seg = line + i;
            size_t seglen = end - i;
            const char *rest = line + end;
            size_t restlen = len - end;
            trim_blanks(&rest, &restlen);
            bool label;
            if (restlen)
                label = only_input_values(rest, restlen, input, ilen);
            else if (have_next) {
                const char *nl = next_line;
                size_t nlen = next_len;
                trim_blanks(&nl, &nlen);
                label = nlen && only_input_values(nl, nlen, input, ilen);
            } else
                label = false;
            bool in_expected = elen >= seglen && memmem(expected, elen, seg, seglen) != NULL;
            bool prompt = !label && !in_expected;
            if (prompt && kind == KW_NOUN) {
                size_t e2;
                prompt = restlen == 0 ||
                         segment_at(line, len, (size_t)(rest - line), &e2) != KW_NONE;
            }
            if (prompt) {
                textbuf_t t;
                size_t used = 0;
                textbuf_init(&t);
                show_append(&t, seg, seglen, 4 * PROMPT_MAX, &used);
                if (t.oom) {
                    textbuf_free(&t);
                    return NULL;
                }
                return textbuf_take(&t, NULL);
            }
            i = end - 1; /* go on after this segment's ':' */
        }
        line = next_line;
        len = next_len;
        have = have_next;
    }
    return NULL;
}

/* ---- comparison ---------------------------------------------------------- */

bool compare_passed(compare_verdict_t v)
{
    return v == COMPARE_PASS || v == COMPARE_PASS_SPACING || v == COMPARE_PASS_FLOAT;
}

void compare_outputs(const char *expected, size_t elen, const char *got, size_t glen,
                     const char *input, size_t ilen, compare_result_t *res)
{
    memset(res, 0, sizeof *res);
    if (!expected)
        elen = 0;
    if (!got)
        glen = 0;
    res->expected_lines = count_lines(expected, elen);
    res->got_lines = count_lines(got, glen);

    lines_t ie, ig;
    lines_init(&ie, expected, elen);
    lines_init(&ig, got, glen);
    const char *el = NULL, *gl = NULL;
    size_t elen1 = 0, glen1 = 0;

    if (res->got_lines == 0 && res->expected_lines > 0) {
        lines_next(&ie, &el, &elen1);
        res->verdict = COMPARE_FAIL_EMPTY;
        res->line = 1;
        res->expected_line = show_line(el, elen1, 0);
        return; /* no output, so no prompt either */
    }

    compare_verdict_t pass = COMPARE_PASS;
    size_t n = 0;
    for (;;) {
        bool he = lines_next(&ie, &el, &elen1);
        bool hg = lines_next(&ig, &gl, &glen1);
        if (!he && !hg) {
            res->verdict = pass;
            return;
        }
        n++;
        if (!hg) {
            res->verdict = COMPARE_FAIL_MISSING;
            res->line = n;
            res->expected_line = show_line(el, elen1, 0);
            break;
        }
        if (!he) {
            res->verdict = COMPARE_FAIL_EXTRA;
            res->line = n;
            res->got_line = show_line(gl, glen1, 0);
            break;
        }
        size_t de = 0, dg = 0;
        line_cmp_t c = line_compare(el, elen1, gl, glen1, &de, &dg);
        if (c == LINE_SPACING && pass == COMPARE_PASS)
            pass = COMPARE_PASS_SPACING;
        else if (c == LINE_FLOAT)
            pass = COMPARE_PASS_FLOAT;
        else if (c == LINE_DIFF) {
            res->verdict = COMPARE_FAIL_LINE;
            res->line = n;
            res->expected_line = show_line(el, elen1, de);
            res->got_line = show_line(gl, glen1, dg);
            break;
        }
    }
    res->prompt = compare_find_prompt(got, glen, expected, elen, input, ilen);
    if (res->prompt)
        res->verdict = COMPARE_FAIL_PROMPT;
}

void compare_result_free(compare_result_t *res)
{
    if (!res)
        return;
    free(res->expected_line);
    free(res->got_line);
    free(res->prompt);
    memset(res, 0, sizeof *res);
}

/* ---- verdict text ---------------------------------------------------------- */

static void put_line(textbuf_t *out, const char *label, const char *s)
{
    if (!s)
        s = "(not available: out of memory)";
    else if (!*s)
        s = "(empty line)";
    textbuf_printf(out, "  %s%s\n", label, s);
}

#define EXPECTED_LABEL "expected: "
#define GOT_LABEL      "got:      "

void compare_render(const compare_result_t *res, textbuf_t *out)
{
    switch (res->verdict) {
    case COMPARE_PASS: textbuf_puts(out, TX_JG_PASS); break;
    case COMPARE_PASS_SPACING: textbuf_puts(out, TX_JG_PASS_SPACING); break;
    case COMPARE_PASS_FLOAT: textbuf_puts(out, TX_JG_PASS_FLOAT); break;
    case COMPARE_FAIL_PROMPT:
        textbuf_printf(out, TX_JG_FAIL_PROMPT, res->prompt ? res->prompt : "");
        /* The first difference, as far as it was found: a differing line
         * has both sides, a missing or extra line one. */
        if (res->expected_line)
            put_line(out, EXPECTED_LABEL, res->expected_line);
        if (res->got_line)
            put_line(out, GOT_LABEL, res->got_line);
        break;
    case COMPARE_FAIL_LINE:
        textbuf_printf(out, TX_JG_FAIL_LINE, res->line);
        put_line(out, EXPECTED_LABEL, res->expected_line);
        put_line(out, GOT_LABEL, res->got_line);
        break;
    case COMPARE_FAIL_MISSING:
        textbuf_printf(out, TX_JG_FAIL_MISSING, res->got_lines, res->expected_lines);
        put_line(out, EXPECTED_LABEL, res->expected_line);
        break;
    case COMPARE_FAIL_EXTRA: {
        size_t more = res->got_lines - res->expected_lines;
        if (res->expected_lines == 0)
            textbuf_printf(out, TX_JG_FAIL_UNEXPECTED, more);
        else if (res->expected_lines == 1)
            textbuf_printf(out, TX_JG_FAIL_EXTRA_ONE, more);
        else
            textbuf_printf(out, TX_JG_FAIL_EXTRA, res->expected_lines, more);
        put_line(out, GOT_LABEL, res->got_line);
        break;
    }
    case COMPARE_FAIL_EMPTY:
        textbuf_puts(out, TX_JG_FAIL_EMPTY);
        put_line(out, EXPECTED_LABEL, res->expected_line);
        break;
    }
}
