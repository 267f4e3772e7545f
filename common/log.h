/* log.h -- one-line logs to stderr, with the process name and a level.
 *
 * Every talkback process logs to stderr (the supervisor or journald keeps
 * it).  Levels: error, warn, info, debug; the threshold comes from config
 * key log_level.  Thread-safe (one write(2) per line).
 */
#ifndef TALKBACK_LOG_H
#define TALKBACK_LOG_H

typedef enum { TBLOG_ERROR = 0, TBLOG_WARN, TBLOG_INFO, TBLOG_DEBUG } log_level_t;

/* Set the process name shown on each line and the threshold. */
void log_init(const char *process, log_level_t level);
/* Parse "error"/"warn"/"info"/"debug"; returns TBLOG_INFO for anything else. */
log_level_t log_level_parse(const char *s);
void log_msg(log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(TBLOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(TBLOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(TBLOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(TBLOG_DEBUG, __VA_ARGS__)

#endif
