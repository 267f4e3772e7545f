/* log.c -- one-line logs to stderr (see log.h).
 *
 * Each line is formatted into a stack buffer and written with one write(2)
 * so lines from different threads never interleave.
 */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_process = "talkback";
static log_level_t log_threshold = TBLOG_INFO;

void log_init(const char *process, log_level_t level)
{
    log_process = process;
    log_threshold = level;
}

log_level_t log_level_parse(const char *s)
{
    if (!s)
        return TBLOG_INFO;
    if (strcmp(s, "error") == 0)
        return TBLOG_ERROR;
    if (strcmp(s, "warn") == 0)
        return TBLOG_WARN;
    if (strcmp(s, "debug") == 0)
        return TBLOG_DEBUG;
    return TBLOG_INFO;
}

void log_msg(log_level_t level, const char *fmt, ...)
{
    static const char *names[] = { "error", "warn", "info", "debug" };
    if (level > log_threshold)
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line,
                     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, log_process, names[level]);
    if (n < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
