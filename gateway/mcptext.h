/* mcptext.h -- bytes as the JSON strings of MCP results: a command's
 * output is any bytes, a JSON string is UTF-8.  Used by mcp.c (results,
 * refusals) and era.c (the header/body mismatch's data), so era.c does
 * not call back into mcp.c for it.
 */
#ifndef TALKBACK_GATEWAY_MCPTEXT_H
#define TALKBACK_GATEWAY_MCPTEXT_H

#include <stddef.h>
#include <jansson.h>

/* A JSON string of these bytes: byte-exact when they are UTF-8, else with
 * every invalid sequence replaced by U+FFFD.  NULL when out of memory. */
json_t *mcp_json_text(const char *s, size_t len);
/* Copy s replacing each maximal invalid UTF-8 subsequence with U+FFFD
 * (EF BF BD); NUL bytes are kept.  malloc'ed (NUL-terminated), length in
 * *out_len; NULL when out of memory. */
char *mcp_utf8_sanitize(const char *s, size_t len, size_t *out_len);

#endif
