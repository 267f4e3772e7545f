/* form.c -- answers that are right in all but form (see form.h).
 *
 * Both checks walk the outputs in place, token by token, as compare.c
 * does: no copy of a multi-megabyte output is made.  Lines are split on
 * "\n", "\r\n" and "\r"; blanks are space, tab, \v and \f; trailing blank
 * lines do not count.  The texts the model reads are talk/texts.h's
 * TX_JG_FORM_*.
 */
#include "judge/form.h"

#include "talk/texts.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NUMBER_MAX 64 /* longer tokens are not numbers */
#define NAME_MAX   64 /* longer identifiers are not looked at */
#define DEFS_MAX   64 /* definitions looked at in one program */
#define CODE_MAX   (256 * 1024)
#define FLOAT_EPS  1e-6 /* compare.c's tolerance */

/* ---- tokens ------------------------------------------------------------------- */

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static bool is_space(unsigned char c)
{
    return is_blank(c) || c == '\n' || c == '\r';
}

/* The next token at or after *pos that is on the same line (stop_at_eol)
 * or anywhere; false at a line's end (then *pos is past it) or the text's. */
static bool next_tok(const char *p, size_t n, size_t *pos, bool stop_at_eol, size_t *s, size_t *len)
{
    size_t i = *pos;
    while (i < n && is_space((unsigned char)p[i])) {
        if (stop_at_eol && (p[i] == '\n' || p[i] == '\r')) {
            i += p[i] == '\r' && i + 1 < n && p[i + 1] == '\n' ? 2 : 1;
            *pos = i;
            return false;
        }
        i++;
    }
    if (i >= n) {
        *pos = n;
        return false;
    }
    *s = i;
    while (i < n && !is_space((unsigned char)p[i]))
        i++;
    *len = i - *s;
    *pos = i;
    return true;
}

/* Lines holding a token, as compare.c counts them (blank lines in the
 * middle count too, trailing ones do not). */
static size_t count_lines(const char *p, size_t n)
{
    while (n && is_space((unsigned char)p[n - 1]))
        n--;
    if (!n)
        return 0;
    size_t c = 1;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\n' || (p[i] == '\r' && !(i + 1 < n && p[i + 1] == '\n')))
            c++;
    return c;
}

/* A plain decimal number: value, and its decimals (-1 with an exponent). */
static bool parse_num(const char *s, size_t n, double *v, int *decimals)
{
    if (n == 0 || n >= NUMBER_MAX)
        return false;
    char buf[NUMBER_MAX];
    bool digit = false;
    int dec = 0;
    const char *dot = NULL;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (isdigit((unsigned char)c))
            digit = true;
        else if (c == '.' && !dot)
            dot = s + i;
        else if (c == 'e' || c == 'E')
            dec = -1;
        else if (c != '+' && c != '-')
            return false;
    }
    if (!digit)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (end != buf + n || !isfinite(d))
        return false;
    if (dec == 0 && dot)
        dec = (int)(s + n - dot - 1);
    *v = d;
    *decimals = dec;
    return true;
}

/* Two tokens equal as compare.c sees them: bytes, or numbers within 1e-6
 * (when one has a fraction). */
static bool tok_equal(const char *e, size_t el, const char *g, size_t gl)
{
    if (el == gl && memcmp(e, g, el) == 0)
        return true;
    double ve, vg;
    int de, dg;
    if (!parse_num(e, el, &ve, &de) || !parse_num(g, gl, &vg, &dg) || (de == 0 && dg == 0))
        return false;
    return fabs(ve - vg) <= FLOAT_EPS * fmax(1.0, fabs(ve)) * (1.0 + 1e-9);
}

/* Two numbers that agree to the fewer decimal places the two show (at
 * least one): *decimals is the expected one's count. */
static bool tok_rounded(const char *e, size_t el, const char *g, size_t gl, int *decimals)
{
    double ve, vg;
    int de, dg;
    if (!parse_num(e, el, &ve, &de) || !parse_num(g, gl, &vg, &dg) || de < 1 || dg < 1)
        return false;
    int d = de < dg ? de : dg;
    *decimals = de;
    return fabs(ve - vg) <= 0.5 * pow(10.0, -d) * (1.0 + 1e-9);
}

/* ---- the checks ------------------------------------------------------------------- */

/* Same lines, same tokens, numbers that differ only in rounding. */
static bool only_rounding(const char *e, size_t elen, const char *g, size_t glen, int *decimals)
{
    size_t pe = 0, pg = 0;
    bool rounded = false;
    int dmax = -1;
    for (;;) {
        size_t se = 0, le = 0, sg = 0, lg = 0;
        bool he = next_tok(e, elen, &pe, true, &se, &le);
        bool hg = next_tok(g, glen, &pg, true, &sg, &lg);
        if (he != hg)
            return false; /* a line with more or fewer values */
        if (!he) {
            bool ee = pe >= elen, ge = pg >= glen;
            if (ee || ge)
                return ee && ge && rounded && (*decimals = dmax) > 0;
            continue; /* both lines ended */
        }
        if (tok_equal(e + se, le, g + sg, lg))
            continue;
        int d;
        if (!tok_rounded(e + se, le, g + sg, lg, &d))
            return false;
        rounded = true;
        if (d > dmax)
            dmax = d;
    }
}

/* The same values in the same order, on other lines. */
static bool only_line_breaks(const char *e, size_t elen, const char *g, size_t glen)
{
    size_t pe = 0, pg = 0;
    for (;;) {
        size_t se = 0, le = 0, sg = 0, lg = 0;
        bool he = next_tok(e, elen, &pe, false, &se, &le);
        bool hg = next_tok(g, glen, &pg, false, &sg, &lg);
        if (!he || !hg)
            return !he && !hg;
        if (!tok_equal(e + se, le, g + sg, lg))
            return false;
    }
}

void form_check(const char *expected, size_t elen, const char *got, size_t glen, form_t *out)
{
    memset(out, 0, sizeof *out);
    if (!expected || !got)
        return;
    while (elen && is_space((unsigned char)expected[elen - 1]))
        elen--;
    while (glen && is_space((unsigned char)got[glen - 1]))
        glen--;
    if (!elen || !glen)
        return;
    int d = 0;
    if (only_rounding(expected, elen, got, glen, &d)) {
        out->kind = FORM_ROUNDING;
        out->decimals = d;
        return;
    }
    if (only_line_breaks(expected, elen, got, glen)) {
        out->expected_lines = count_lines(expected, elen);
        out->got_lines = count_lines(got, glen);
        if (out->expected_lines != out->got_lines || out->expected_lines > 1)
            out->kind = FORM_LINE_BREAKS;
    }
}

/* ---- code that is never called ------------------------------------------------------ */

static bool is_ident(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '$';
}

/* How often name occurs in code as a whole word. */
static size_t count_word(const char *code, size_t len, const char *name, size_t nlen)
{
    size_t n = 0;
    for (const char *p = code; (size_t)(p - code) + nlen <= len;) {
        const char *hit = memmem(p, len - (size_t)(p - code), name, nlen);
        if (!hit)
            break;
        bool left = hit == code || !is_ident((unsigned char)hit[-1]);
        bool right = (size_t)(hit - code) + nlen >= len || !is_ident((unsigned char)hit[nlen]);
        n += left && right;
        p = hit + nlen;
    }
    return n;
}

/* The identifier after keyword kw at s (kw, blanks, name): its length. */
static size_t name_after(const char *s, size_t n, const char *kw, const char **name)
{
    size_t k = strlen(kw);
    if (n <= k || memcmp(s, kw, k) != 0 || !is_blank((unsigned char)s[k]))
        return 0;
    size_t i = k;
    while (i < n && is_blank((unsigned char)s[i]))
        i++;
    size_t st = i;
    while (i < n && i - st < NAME_MAX && is_ident((unsigned char)s[i]))
        i++;
    *name = s + st;
    return i > st && !isdigit((unsigned char)s[st]) ? i - st : 0;
}

/* A program whose language starts it at main by itself. */
static bool has_entry_point(const char *code, size_t len)
{
    static const char *const mains[] = { "int main(",         "int main (", "void main(",
                                         "fn main(",          "fun main(",  "func main(",
                                         "static void main(", "main :: IO" };
    for (size_t i = 0; i < sizeof mains / sizeof mains[0]; i++)
        if (memmem(code, len, mains[i], strlen(mains[i])))
            return true;
    return false;
}

typedef struct {
    const char *name;
    size_t len;
    bool is_class;
    size_t line_end; /* where its definition line ends */
} def_t;

/* The definitions at the start of a line (top level: column 0). */
static size_t find_defs(const char *code, size_t len, def_t *defs)
{
    static const char *const fn_kw[] = { "def", "function", "async function", "fun", "sub" };
    size_t n = 0;
    for (size_t at = 0; at < len && n < DEFS_MAX;) {
        const char *line = code + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        const char *name = NULL;
        size_t nlen = name_after(line, ll, "class", &name);
        bool cls = nlen > 0;
        for (size_t k = 0; !nlen && k < sizeof fn_kw / sizeof fn_kw[0]; k++)
            nlen = name_after(line, ll, fn_kw[k], &name);
        for (size_t k = 0; !nlen && k < 3; k++) { /* const NAME = (...) => / function */
            static const char *const decl[] = { "const", "let", "var" };
            nlen = name_after(line, ll, decl[k], &name);
            if (nlen && !memmem(line, ll, "=>", 2) && !memmem(line, ll, "function", 8))
                nlen = 0;
        }
        if (nlen)
            defs[n++] = (def_t){ name, nlen, cls, at + ll };
        at += ll + 1;
    }
    return n;
}

/* The first method of the class defined at d ("def NAME" or "NAME(...)
 * {" indented below it), not a constructor or a dunder. */
static char *first_method(const char *code, size_t len, const def_t *d)
{
    for (size_t at = d->line_end + 1; at < len;) {
        const char *line = code + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        size_t i = 0;
        while (i < ll && is_blank((unsigned char)line[i]))
            i++;
        if (i == 0 && ll > 0 && line[0] != '}' && line[0] != '#')
            break; /* back at the top level */
        const char *name = NULL;
        size_t nlen = name_after(line + i, ll - i, "def", &name);
        if (!nlen) { /* public int[] twoSum(...) {  /  twoSum(nums, target) { */
            const char *paren = memchr(line + i, '(', ll - i);
            if (paren && memchr(paren, '{', ll - (size_t)(paren - line))) {
                const char *e = paren;
                while (e > line + i && is_blank((unsigned char)e[-1]))
                    e--;
                const char *s = e;
                while (s > line + i && is_ident((unsigned char)s[-1]))
                    s--;
                name = s;
                nlen = (size_t)(e - s);
                static const char *const not_methods[] = { "if",     "for",         "while",
                                                           "switch", "constructor", "catch" };
                for (size_t k = 0; nlen && k < sizeof not_methods / sizeof not_methods[0]; k++)
                    if (strlen(not_methods[k]) == nlen && memcmp(s, not_methods[k], nlen) == 0)
                        nlen = 0;
            }
        }
        if (nlen && nlen < NAME_MAX && !(nlen > 1 && name[0] == '_' && name[1] == '_'))
            return strndup(name, nlen);
        at += ll + 1;
    }
    return strndup(d->name, d->len);
}

char *form_uncalled(const char *code, size_t len)
{
    if (!code || !len || len > CODE_MAX || has_entry_point(code, len))
        return NULL;
    def_t defs[DEFS_MAX];
    size_t n = find_defs(code, len, defs);
    /* The last definition nothing uses is the one meant to be the answer
     * (helpers come first, and are called by it). */
    for (size_t i = n; i-- > 0;) {
        if (count_word(code, len, defs[i].name, defs[i].len) > 1)
            continue;
        return defs[i].is_class ? first_method(code, len, &defs[i])
                                : strndup(defs[i].name, defs[i].len);
    }
    return NULL;
}

/* The FAIL line of a rounding or line-break form (form.h). */
void form_render(const form_t *f, textbuf_t *out)
{
    if (f->kind == FORM_ROUNDING) {
        const char *s = f->decimals == 1 ? "" : "s";
        textbuf_printf(out, TX_JG_FORM_ROUNDING, f->decimals, s, f->decimals, s, f->decimals,
                       f->decimals);
    } else if (f->kind == FORM_LINE_BREAKS) {
        const char *how = f->expected_lines == 1 ? TX_JG_FORM_BREAKS_ONE_LINE
                          : f->got_lines == 1    ? TX_JG_FORM_BREAKS_SPLIT
                                                 : TX_JG_FORM_BREAKS_OTHER;
        textbuf_printf(out, TX_JG_FORM_BREAKS, f->expected_lines,
                       f->expected_lines == 1 ? " was" : "s were", f->got_lines, how);
    }
}

/* The FAIL line of an answer that went to stderr. */
void form_render_stderr(bool stdout_empty, textbuf_t *out)
{
    textbuf_puts(out, stdout_empty ? TX_JG_FORM_STDERR_EMPTY : TX_JG_FORM_STDERR);
}

/* The FAIL line of a program that defines `name` and never calls it. */
void form_render_uncalled(const char *name, textbuf_t *out)
{
    textbuf_printf(out, TX_JG_FORM_UNCALLED, name, name);
}
