/* config.h -- every limit, timeout, path and endpoint of talkback.
 *
 * One table (config.c) names each key, its default and what it means; the
 * docs/configuration.md is that table.  Values come, later wins, from:
 * the defaults, the config file (key = value lines, '#' comments; path from
 * --config or $TALKBACK_CONFIG, default /etc/talkback/talkback.conf when
 * it exists), the environment (TALKBACK_<KEY in upper case>), and command
 * line options of the form --key=value or --key value.  All processes share
 * the table, so one file configures the whole service.
 */
#ifndef TALKBACK_CONFIG_H
#define TALKBACK_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* Load the configuration for a process.  argv options that are config keys
 * (--listen, --hub, --record, ...) are consumed; any other option is an
 * error.  On error, prints a message to stderr and returns -1.
 * "--help" prints the table and exits 0, "--help-markdown" the same as
 * Markdown. */
int config_load(int argc, char **argv, const char *process);

/* Value of a key as a string (never NULL for a known key; "" when unset).
 * Aborts on an unknown key: that is a programming error. */
const char *config_str(const char *key);
/* Integer value; sizes accept K/M/G suffixes (binary) and durations
 * s/m/h/d suffixes (to seconds) -- see config.c. */
int64_t config_int(const char *key);
bool config_bool(const char *key);
/* Set a value (used by tests and by config_load). 0 or -1 (unknown key or
 * unparsable value for its type). */
int config_set(const char *key, const char *value);
/* Print the reference table (key, default, meaning) to stdout. */
void config_print_reference(void);
/* The same as a Markdown table (--help-markdown): tests/tools/gen-docs
 * writes it into docs/configuration.md and checks that it is current. */
void config_print_markdown(void);

/* Pure parsers, exposed for unit tests.  Return 0 or -1. */
int config_parse_size(const char *s, int64_t *out);     /* "2G" -> bytes */
int config_parse_duration(const char *s, int64_t *out); /* "60m" -> seconds */

#endif
