/* texts.h -- every sentence talkback itself says in a result, as data:
 * the catalogue of what the model reads (besides the hint tables of
 * hints/, which are data already, and the output of the programs).
 *
 * Each text is a macro, TX_NAME, that is its printf format: a call site
 * writes `textbuf_printf(t, TX_SB_HOST_FULL, n, minutes)` and the compiler
 * still checks the arguments against the format (-Wformat), as it did when
 * the literal stood there.  talk/texts.c holds one row per text: what
 * triggers it, which process says it, whether it is a failure, and for a
 * failure the next step it names; docs/talkback.md is made from those rows
 * (tests/tools/gen-docs), and tests/unit/test_talk.c holds every row to
 * the rule in texts_check().  A new text is a macro here and a row there.
 *
 * libc only: the gateway, the hub, the sandbox manager, the judge and the
 * reaper all include it without pulling each other's code.
 */
#ifndef TALKBACK_TALK_TEXTS_H
#define TALKBACK_TALK_TEXTS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>

/* Who says a text. */
typedef enum {
    TW_GATEWAY = 0,
    TW_HUB,
    TW_WORKER,
    TW_SANDBOX,
    TW_JUDGE,
    TW_REAPER,
    TW_AGENT,
} text_who_t;

/* What a text is to the model.
 *
 *   TK_FAIL   a failure the model reads: it must name a next step
 *             (texts_check)
 *   TK_NOTE   the model reads it, and the call did what it asked (a line
 *             before or after a result)
 *   TK_INNER  a reply between talkback's processes or to the operator,
 *             which the model never reads as it is: its `next` names the
 *             TX_ text the model reads in its place, or who reads it
 *             ("read by ...")
 *   TK_VERDICT  a line of run_code's verdict: a passing one names no step;
 *             a failing one names the TK_FAIL text that follows it in the
 *             same result and names the step (TX_JG_DONT_ANSWER)
 */
typedef enum { TK_FAIL = 0, TK_NOTE, TK_INNER, TK_VERDICT } text_kind_t;

typedef struct {
    const char *id;   /* "TX_SB_HOST_FULL" */
    const char *text; /* the printf format */
    text_who_t who;
    text_kind_t kind;
    const char *when; /* what triggers it, one line */
    const char *next; /* the next step it names (see texts_check), or NULL */
} text_row_t;

/* Row i, NULL past the end. */
const text_row_t *texts_at(size_t i);
/* The row of an id ("TX_SB_HOST_FULL"); NULL when none. */
const text_row_t *texts_find(const char *id);
/* "gateway", "sandbox manager", ... */
const char *texts_who(text_who_t who);
/* Whether row keeps the rule, with why into why[0..n) when it does not:
 *
 *   - a TK_FAIL row has a next step that occurs in its text word for word
 *     and starts with an imperative ("Try", "Tell", "call", "send", ...,
 *     case aside) or states what an argument must be ("must", "needs");
 *     or its next is "%s: WHERE", the step being a %s argument whose
 *     source WHERE says (every such source an imperative too);
 *   - a TK_INNER row names the TK_FAIL or TK_VERDICT row the model reads
 *     instead (an id of this table) or starts with "read by ";
 *   - a TK_VERDICT row names no step (a pass) or the TK_FAIL row that
 *     follows it, and starts with the words the reply proxy reads it by
 *     (TXW_PASS_MATCH or TXW_PASS_ALL for a pass, a failure's for the rest);
 *   - a TK_NOTE row names no step;
 *   - every row has an id, a text and a trigger.
 */
bool texts_check(const text_row_t *row, char *why, size_t n);

/* ---- the gateway (gateway/): argument checks, headers, and the words for what the hub reports ---- */
#define TX_GW_ITEM_NOT_OBJECT "[talkback: item %zu of `%s` must be an object, not %s. Nothing ran.]"
#define TX_GW_ITEM_MISSING    "[talkback: item %zu of `%s` has no `%s`: add it. Nothing ran.]"
#define TX_GW_ITEM_NOT_STRING                                                                      \
    "[talkback: `%s` of item %zu of `%s` must be a string, not %s. Nothing ran.]"
#define TX_GW_ALIAS_NONE "[talkback: %s has no argument `%s`. %s Nothing ran.]"
#define TX_GW_ALIAS_ONLY "[talkback: %s has no argument `%s`; send only `%s`. Nothing ran.]"
#define TX_GW_ALIAS_RENAMED                                                                        \
    "[talkback: %s has no argument `%s`: it is called `%s`. Nothing ran: call %s again with "      \
    "`%s`.]"
#define TX_GW_NOT_ARRAY "[talkback: argument `%s` must be an array, not %s. Nothing ran.]"
#define TX_GW_TOO_FEW                                                                              \
    "[talkback: argument `%s` holds %zu item(s); it needs at least %lld. Nothing ran.]"
#define TX_GW_TOO_MANY                                                                             \
    "[talkback: argument `%s` holds %zu items; at most %lld are allowed: send the rest in "        \
    "another call. Nothing ran.]"
#define TX_GW_IGNORED_INSTEAD "[talkback: argument `%.40s` was ignored: %s takes `%s` instead.]\n"
#define TX_GW_IGNORED_ONLY    "[talkback: argument `%.40s` was ignored: %s takes only %s.]\n"
#define TX_GW_IGNORED_NONE    "[talkback: argument `%.40s` was ignored: %s takes no arguments.]\n"
#define TX_GW_WRONG_TYPE      "[talkback: argument `%s` must be %s, not %s. Nothing ran.]"
#define TX_GW_NOT_ONE_OF      "[talkback: argument `%s` must be one of: %s. Nothing ran.]"
#define TX_GW_TYPE_UNKNOWN                                                                         \
    "[talkback: argument `%s` has a type (%s) talkback cannot pass on. Nothing ran. Tell the "     \
    "user.]"
#define TX_GW_REQUIRED "[talkback: argument `%s` is required and must be %s. Nothing ran.]"
#define TX_GW_TIMEOUT_RANGE                                                                        \
    "[talkback: argument `timeout` must be between 1 and %lld seconds (default %lld).%s "          \
    "Nothing ran.]"
#define TX_GW_ARGS_NOT_OBJECT                                                                      \
    "[talkback: the arguments of `%s` must be a JSON object, not %s. Nothing ran.]"
#define TX_GW_ARG_BIG                                                                              \
    "[talkback: argument `%s` is %zu bytes, over the limit of %lld bytes. Nothing ran. Make "      \
    "it smaller.]"
#define TX_GW_SHUTDOWN                                                                             \
    "[talkback: the gateway is shutting down, so this call was given up (the command may or "      \
    "may not have run). Check with run before assuming anything, then try again.]"
#define TX_GW_NO_QUEUE                                                                             \
    "[talkback: the gateway could not queue this call (out of memory), so nothing ran. Try "       \
    "again in a minute.]"
#define TX_GW_CONV_HEADER                                                                          \
    "[talkback refused this call: the %s header is %s, so talkback cannot tell which chat's "      \
    "sandbox to use and will not guess. Fix the MCP server entry in librechat.yaml so every "      \
    "request carries the chat id:\n"                                                               \
    "    headers:\n"                                                                               \
    "      %s: \"{{LIBRECHAT_BODY_CONVERSATIONID}}\"\n"                                            \
    "Nothing ran.]"
#define TX_GW_USER_HEADER                                                                          \
    "[talkback refused this call: the %s header is unusable (it must be at most 128 "              \
    "printable characters and not an unreplaced {{placeholder}}). Fix the MCP server entry "       \
    "in librechat.yaml:\n"                                                                         \
    "    headers:\n"                                                                               \
    "      %s: \"{{LIBRECHAT_USER_ID}}\"\n"                                                        \
    "Nothing ran.]"
#define TX_GW_NOT_RUNNING                                                                          \
    "[talkback: the %s is not running, so nothing ran. Try the same call again in a minute; "      \
    "if it keeps failing, tell the user the %s service is down.]"
#define TX_GW_LOST_RUNNING                                                                         \
    "[talkback: the %s stopped while your program was running, so its result is lost: the "        \
    "program may or may not have run to the end, and it was not run again (a second run "          \
    "could repeat what it did, such as a line it appended to a file). Check what it left "         \
    "with run (e.g. `ls -l /work`) before assuming anything, then call run_code again.]"
#define TX_GW_LOST_BEFORE                                                                          \
    "[talkback: the %s stopped before your program ran, so nothing ran. Call run_code again.]"
#define TX_GW_LOST                                                                                 \
    "[talkback: the %s stopped while handling this call, so its result is lost (the command "      \
    "may or may not have run). Check with run before assuming anything, then try again.]"
#define TX_GW_DEADLINE                                                                             \
    "[talkback: no answer within the call's deadline (%lld s), so the call was given up. It "      \
    "may have run in part: check with run before trying again, and give a long command a "         \
    "larger timeout or run it in the background.]"
#define TX_GW_NOT_UNDERSTOOD                                                                       \
    "[talkback: the %s could not understand this call%s%s. Nothing ran. Check the arguments "      \
    "against the tool's description, then call it again.]"
#define TX_GW_FAILED                                                                               \
    "[talkback: the %s failed while handling this call%s%s. Try again; if it keeps failing, "      \
    "tell the user the %s service is broken.]"

/* ---- the hub (hub/): placement across hosts, and replies between processes ---- */
#define TX_HUB_WORKER_LOST    "[talkback: the worker stopped while handling this call]"
#define TX_HUB_WORKER_STOPPED "[talkback: the worker stopped]"
#define TX_HUB_CALLER_GONE    "[talkback: the caller is gone]"
#define TX_HUB_KEY_HOST                                                                            \
    "[talkback: the hub refused this request: this worker's key is not for the host it names]"
#define TX_HUB_NO_MEMORY      "[talkback: the hub ran out of memory]"
#define TX_HUB_FORGET_NO_HOST "[talkback: forget_host needs the argument host]"
#define TX_HUB_FORGET_UNKNOWN "[talkback: host %.64s is not among the hosts the hub knows]"
#define TX_HUB_KEY_MAY_NOT                                                                         \
    "[talkback: the hub refused this request: this worker's key may not send it]"
#define TX_HUB_TOO_MANY_OPEN                                                                       \
    "[talkback: the hub refused this request: too many open requests from this worker "            \
    "(hub_peer_requests)]"
#define TX_HUB_STOPPING  "[talkback: the gateway is stopping]"
#define TX_HUB_OOM       "[talkback: out of memory]"
#define TX_HUB_NO_WORKER "[talkback: no worker is running for this call]"
#define TX_HUB_DEADLINE  "[talkback: no answer before the call's deadline]"
#define TX_HUB_HOST_GONE                                                                           \
    "[talkback: this chat's machine is on host %s, which is not reachable now. Its files are "     \
    "kept there, so nothing ran elsewhere. Try again in a minute; if it stays unreachable, "       \
    "ask the operator to bring that host back.]"
#define TX_HUB_HOST_GONE_PLACED                                                                    \
    "[talkback: this chat's machine was on host %s, which is not reachable now, so this chat "     \
    "starts over on host %s (setting `on_host_lost` = place): the files made before are not "      \
    "here.]"
#define TX_HUB_HOST_MAYBE                                                                          \
    "[talkback: this chat's machine may be on host %s, which is not reachable now. Nothing "       \
    "ran, and no new sandbox was made elsewhere: if the chat is there, its files are kept "        \
    "there. Try again in a minute; if it stays unreachable, ask the operator (an operator "        \
    "who retired host %s for good removes it with `talkbackctl forget %s`).]"
#define TX_HUB_HOST_MAYBE_PLACED                                                                   \
    "[talkback: this chat's machine may have been on host %s, which is not reachable now, so "     \
    "this chat starts on host %s (setting `on_host_lost` = place): files made before, if "         \
    "any, are not here.]"
#define TX_HUB_ALL_DRAINING                                                                        \
    "[talkback: every sandbox host is draining (no new chats are placed on them), so this "        \
    "chat's sandbox was not started and nothing ran. Tell the user to try again later; the "       \
    "operator can undrain a host (`talkbackctl undrain HOST`).]"
#define TX_HUB_NO_ROOM                                                                             \
    "[talkback: no sandbox host has room for a new chat: %zu run%s the most sandboxes they "       \
    "may (setting `max_running`)%s, so this chat's sandbox was not started and nothing ran. "      \
    "Tell the user: a chat's sandbox stops after some minutes without calls, so try again in "     \
    "a few minutes; the operator can raise `max_running`, add a host or undrain one.]"
#define TX_HUB_LOCATE_SLOW                                                                         \
    "[talkback: host %s did not say in time whether it holds this chat's machine, so nothing "     \
    "ran (a new sandbox elsewhere could hide this chat's files). Try again in a minute.]"
#define TX_HUB_LOCATE_NONE                                                                         \
    "[talkback: no sandbox host could be asked where this chat is; try again]"

/* ---- any worker (hub/worker.c): replies its own thread machinery makes ---- */
#define TX_HUB_WORKER_FAILED "[talkback: the worker failed on this call]"
#define TX_HUB_NO_THREADS    "[talkback: the worker is out of threads; try again]"

/* ---- the sandbox manager (sandbox/): the sandbox, its Docker and its calls ---- */
#define TX_SB_USER_FULL                                                                            \
    "[talkback: this user already has %" PRId64 " sandboxes running, the most one user may "       \
    "have (setting `max_running_per_user`), so this chat's sandbox was not started and "           \
    "nothing ran. Tell the user: a chat's sandbox stops after %" PRId64 " minutes without "        \
    "calls, and `reset` in a chat they no longer need frees one at once; then try again.]"
#define TX_SB_HOST_FULL                                                                            \
    "[talkback: the sandbox host already runs %" PRId64 " sandboxes, its limit (setting "          \
    "`max_running`), so this chat's sandbox was not started and nothing ran. Try again in a "      \
    "few minutes, when idle sandboxes have stopped; if it keeps failing, tell the user the "       \
    "sandbox host is full.]"
#define TX_SB_OTHER_USER                                                                           \
    "[talkback refused this call: this chat's sandbox belongs to another user. Nothing ran. "      \
    "Tell the user.]"
#define TX_SB_ERROR "[talkback error: out of memory. Try again.]"
#define TX_SB_VANISHED                                                                             \
    "[talkback: this chat's sandbox kept disappearing while this call ran. Try again.]"
#define TX_SB_AGENT_BROKE                                                                          \
    "[talkback: the link to this sandbox's agent broke while the command ran (something in "       \
    "the sandbox wrote into the agent's output), so its output may be incomplete and its "         \
    "exit code is unknown; what was left of it was killed. The next call works normally: run "     \
    "it again if you need its result.]\n"
#define TX_SB_NO_COMMAND                                                                           \
    "[talkback: argument `command` is required and must be a non-empty string without NUL "        \
    "bytes. Nothing ran.]"
#define TX_SB_NOT_STARTED                                                                          \
    "%s$ %s\n"                                                                                     \
    "[talkback: the command could not be started in the sandbox (%s). Try again; if it keeps "     \
    "failing, call reset.]\n"
#define TX_SB_NO_PATH                                                                              \
    "[talkback: argument `path` is required and must be a string. Nothing was written.]"
#define TX_SB_NO_CONTENT                                                                           \
    "[talkback: argument `content` is required and must be a string. Nothing was written.]"
#define TX_SB_PATH_NOT_FILE                                                                        \
    "[talkback: argument `path` must name a file, like `main.py` or `/work/src/app.js` (not "      \
    "a folder, not empty). Nothing was written.]"
#define TX_SB_CONTENT_BIG                                                                          \
    "[talkback: `content` is %zu bytes, over the %" PRId64 "-byte limit. Nothing was written. "    \
    "Write it in smaller files, or generate it with a command.]"
#define TX_SB_WRITE_FAILED                                                                         \
    "[talkback: could not write %s: %s. Nothing was written. If a folder on the way is a "         \
    "file, pick another path.]"
#define TX_SB_RESET_NO_DOCKER "[talkback: Docker did not answer, so nothing was reset. Try again.]"
#define TX_SB_RESET_OTHER_USER                                                                     \
    "[talkback refused this call: this chat's sandbox belongs to another user. Nothing was "       \
    "reset. Tell the user.]"
#define TX_SB_RESET_FAILED                                                                         \
    "[talkback: Docker would not remove this chat's sandbox. Try reset again.]"
#define TX_SB_BAD_CONV                                                                             \
    "[talkback refused this call: the conversation id is unusable, so talkback cannot tell "       \
    "which chat's sandbox to use. Nothing ran. Tell the user.]"
#define TX_SB_BAD_USER                                                                             \
    "[talkback refused this call: the user id is unusable. Nothing ran. Tell the user.]"
#define TX_WK_UNKNOWN_OP "[talkback: the %s has no operation \"%.40s\"]"
#define TX_SB_NETWORK_WRONG                                                                        \
    "[talkback: this chat's sandbox cannot start, so nothing ran: the sandbox network %s is "      \
    "not the one the egress rule protects (%s). Tell the user the operator must %s.]"
#define TX_SB_DOCKER_SILENT                                                                        \
    "[talkback: Docker did not answer (%s), so nothing ran. Try again in a minute; if it "         \
    "keeps failing, tell the user the sandbox host has a problem.]"
#define TX_SB_NO_IMAGE                                                                             \
    "[talkback: the sandbox image %s is missing on the host, so no sandbox could be made and "     \
    "nothing ran. Tell the user to build it (deploy/image/build).]"
#define TX_SB_NO_RUNTIME                                                                           \
    "[talkback: the sandbox runtime `%s` (setting `runtime`) is not registered with Docker "       \
    "(daemon.json \"runtimes\"), so no sandbox could be made and nothing ran. Tell the user "      \
    "the sandbox host has a problem.]"
#define TX_SB_CREATE_REFUSED                                                                       \
    "[talkback: Docker refused to create this chat's sandbox (%s), so nothing ran. Tell the "      \
    "user the sandbox host has a problem.]"
#define TX_SB_START_FAILED                                                                         \
    "[talkback: this chat's sandbox exists but would not start (%s). Nothing ran. Tell the "       \
    "user the sandbox host has a problem.]"
#define TX_SB_NOT_MADE "[talkback: this chat's sandbox could not be found or made. Try again.]"
#define TX_SB_NAME_TAKEN                                                                           \
    "[talkback refused this call: the container under this chat's name belongs to something "      \
    "else. Nothing ran. Tell the user.]"
#define TX_SB_MEM_FLOOR                                                                            \
    "[talkback: the sandbox host has only %s of memory available, below the %s it keeps free "     \
    "(setting `mem_floor`), so this chat's sandbox was not started and nothing ran. Try "          \
    "again in a few minutes, when idle sandboxes have stopped; if it keeps failing, tell the "     \
    "user the sandbox host is out of memory.]"
#define TX_SB_OP_NO_DOCKER "[talkback: Docker did not answer]"
#define TX_SB_OP_NO_LIST   "[talkback: Docker did not list this host's sandboxes]"
#define TX_SB_OP_FLAG                                                                              \
    "[talkback: host %s could not %s: the flag file in state_dir %s cannot be written]"
#define TX_SB_OP_CHAT_SILENT "[talkback: Docker on host %2$s did not answer about chat %1$s]"
#define TX_SB_OP_CHAT_REFUSED                                                                      \
    "[talkback: Docker on host %s would not %s the sandbox of chat %s: %s]"
#define TX_SB_INOTIFY_KILLED                                                                       \
    "[talkback: processes of this sandbox held more inotify %s than the %" PRId64 " one "          \
    "sandbox may hold (setting `%s`), so process %" PRId64 " (`%s`, %s in %" PRId64 " "            \
    "instance%s) was killed%s: the host's inotify is shared by every sandbox. Watch fewer "        \
    "folders (leave out node_modules and build output), or make the tool poll instead "            \
    "(CHOKIDAR_USEPOLLING=1 for tools built on chokidar), then run it again.]\n"

/* ---- a run's own lines (sandbox/manager.c, sandbox/disk.c): how it ended ---- */
#define TX_SB_TIMED_OUT                                                                            \
    "[timed out after %d s: the command and everything it started were killed. If it needs "       \
    "longer, call run again with a larger timeout (up to %" PRId64 " s); if it waits for "         \
    "input, give it the input in the command.]\n"
#define TX_SB_CANCELLED "[cancelled: the command and everything it started were killed]\n"
#define TX_SB_OUTPUT_LIMIT                                                                         \
    "[output limit of %" PRId64 " bytes reached: the command and everything it started were "      \
    "killed]\n"
#define TX_SB_EXIT_CODE  "[exit code %d]\n"
#define TX_SB_RESET_NONE "[Reset: this chat had no sandbox. The next call starts a clean one.]"
#define TX_SB_RESET_DONE                                                                           \
    "[Reset: this chat's sandbox was deleted with all its files and installs. The next call "      \
    "starts a clean one.]"
#define TX_SB_DISK_REMOVED                                                                         \
    "[No space left: this sandbox had written %s, past its disk cap of %s (setting "               \
    "`disk_cap`), so the command and everything it started were stopped, and the sandbox is "      \
    "removed with all its files: the next call starts a clean one. Write less than %s in "         \
    "all: keep big downloads and build output out of the sandbox, and delete what is no "          \
    "longer needed as you go (`du -xsh /work /root /tmp 2>/dev/null` shows what is big).]\n"
#define TX_SB_DISK_CAPPED                                                                          \
    "[No space left: this sandbox's disk is capped at %s (setting `disk_cap`), and this "          \
    "write would have passed it. Delete what is no longer needed (`du -xsh /work /root /tmp "      \
    "/var/cache/apt 2>/dev/null` shows what is big; `apt-get clean` drops apt's downloads), "      \
    "then write less.]\n"
#define TX_SB_DISK_HOST_FULL                                                                       \
    "[No space left: the sandbox host's own disk is full (this sandbox may write up to %s, "       \
    "and one that writes more is removed with all its files). Nothing in the sandbox can fix "     \
    "that: tell the user the sandbox host's disk is full.]\n"

/* ---- programs left in the background (sandbox/background.c): the lines after a
 * run about what it started, what died since, and what ran before a stop ---- */
#define TX_BG_EXITED                                                                               \
    "[`%s` (pid %ld), started in the background, exited at once with status %d: it is "            \
    "not running.%s]\n"
#define TX_BG_KILLED                                                                               \
    "[`%s` (pid %ld), started in the background, was killed at once by signal %d "                 \
    "(%s): it is not running.%s]\n"
#define TX_BG_PORT_HELD                                                                            \
    "[`%s` (pid %ld), started in the background, failed: its port was taken "                      \
    "(address already in use), so it exited with status %d and is not running. "                   \
    "Port %s is held by %s, started earlier: that server still runs, so use it, or "               \
    "stop it first (kill %s) and start this one again.]\n"
#define TX_BG_PORT_TAKEN                                                                           \
    "[`%s` (pid %ld), started in the background, failed: its port was taken "                      \
    "(address already in use), so it exited with status %d and is not running. "                   \
    "Listening now: %s. Use the server that holds the port, or stop it first "                     \
    "(kill PID) and start this one again.]\n"
#define TX_BG_LISTENING                                                                            \
    "[Listening now, in the background: %s. It keeps running after this call: use "                \
    "it in later runs and do not start it again (kill PID stops it). Only this "                   \
    "sandbox reaches it, not the user's browser: test it here with curl.]\n"
#define TX_BG_DIED_EXIT                                                                            \
    "[Since the last call, `%s` (pid %ld), which ran in the background, exited "                   \
    "with status %d: it is not running now.%s]\n"
#define TX_BG_DIED_OK                                                                              \
    "[Since the last call, `%s` (pid %ld), which ran in the background, finished "                 \
    "with exit code 0.%s]\n"
#define TX_BG_DIED_KILLED                                                                          \
    "[Since the last call, `%s` (pid %ld), which ran in the background, was "                      \
    "killed by signal %d (%s): it is not running now.%s]\n"
#define TX_BG_GONE_EXIT                                                                            \
    "[`%s` (pid %ld), which ran in the background, exited with status %d while "                   \
    "this command ran: it is not running now.%s]\n"
#define TX_BG_GONE_OK                                                                              \
    "[`%s` (pid %ld), which ran in the background, finished with exit code 0 while "               \
    "this command ran.%s]\n"
#define TX_BG_GONE_KILLED                                                                          \
    "[`%s` (pid %ld), which ran in the background, was stopped by signal %d "                      \
    "(%s) while this command ran: it is not running now.%s]\n"
#define TX_BG_TAIL      " Its last lines, in %s:\n%s"
#define TX_BG_EMPTY_LOG " It wrote nothing to %s."
#define TX_BG_ABOVE     " Its output is above."
#define TX_BG_FIX       "\nFix what they say, then start it again."
#define TX_BG_BEFORE                                                                               \
    "Running before the stop, in the background: %s. Start them again if they are "                \
    "still needed (CMD > server.log 2>&1 &)."
#define TX_BG_ONE_PORTS "`%s` (listening on %s)"
#define TX_BG_ONE       "`%s`"

/* ---- the images a command drew (sandbox/pictures.c): one line per image, its
 * name and size, then whether it is shown ---- */
#define TX_PIC_IMAGE       "[image %s: %ux%u %s, %" PRId64 " bytes"
#define TX_PIC_IMAGE_NODIM "[image %s: %s, %" PRId64 " bytes"
#define TX_PIC_OFF         ": not shown, images are not returned here (image_max_count is 0).]\n"
#define TX_PIC_TOO_MANY    ": not shown, only %" PRId64 " images are shown per call.]\n"
#define TX_PIC_TOO_BIG                                                                             \
    ": too big to show (over %" PRId64 " bytes). To see it, save it smaller: a lower "             \
    "dpi or figure size (e.g. plt.savefig(path, dpi=72)), or as a JPEG.]\n"
#define TX_PIC_CALL_BIG                                                                            \
    ": not shown, the images of this call would be over %" PRId64 " bytes together. "              \
    "Save them smaller (a lower dpi or size), or show fewer per call.]\n"
#define TX_PIC_CHANGED   ": changed or unreadable when talkback read it, so it is not shown.]\n"
#define TX_PIC_NO_MEMORY ": not shown (talkback ran out of memory).]\n"
#define TX_PIC_SHOWN     ", shown below]\n"

/* ---- the sandbox manager's notices (sandbox/notices.c): the line at the top of
 * a result that says what happened to the sandbox while nobody called ---- */
#define TX_SB_RESUMED_AGO "[Resumed this chat's sandbox, stopped %s ago (%s): "
#define TX_SB_RESUMED     "[Resumed this chat's sandbox (%s): "
#define TX_SB_RESUMED_KEPT                                                                         \
    "its files and installs are as they were, but nothing it ran is running now. "
#define TX_SB_RESUMED_RESTART "Start servers and background jobs again."
#define TX_SB_WHY_IDLE        "idle for over %ld minutes"
#define TX_SB_WHY_OPERATOR    "by the operator"
#define TX_SB_WHY_UNKNOWN     "not by talkback: most likely a restart of Docker or of the host"
#define TX_SB_WHY_ROOM_USER                                                                        \
    "to make room for another chat of this user: one user may have %ld running at once, "          \
    "setting `max_running_per_user`, and this one was the least recently used"
#define TX_SB_WHY_ROOM_ALL                                                                         \
    "to make room for another chat: the sandbox host runs at most %ld at once, setting "           \
    "`max_running`, and this one was the least recently used"
#define TX_SB_WHY_PAUSED_MAX                                                                       \
    "idle and paused, then stopped as the least recently used of more than %ld paused "            \
    "sandboxes, setting `max_paused`"
#define TX_SB_GONE                                                                                 \
    "[This chat's previous sandbox was removed %s ago %s: its files and installs are gone, "       \
    "and this is a new, empty one.]\n"
#define TX_SB_UNPAUSED        "[This chat's sandbox was paused"
#define TX_SB_UNPAUSED_FOR    " for %s"
#define TX_SB_UNPAUSED_IDLE   " (no calls for over %ld minute%s)"
#define TX_SB_UNPAUSED_NOT_US " (not by talkback)"
#define TX_SB_UNPAUSED_END                                                                         \
    " and runs again: its files and the programs it left running (servers, background jobs) "      \
    "are as they were.]\n"

/* ---- a run's output as the model reads it (hints/output.c: the sandbox
 * manager's run, the judge's program output) ---- */
#define TX_HI_BINARY_HEAD                                                                          \
    "[The output is binary, not text: %" PRIu64 " bytes of %s. Its raw bytes are not shown; the "  \
    "first %zu in hex:]\n"
#define TX_HI_BINARY_TAIL                                                                          \
    "[To look inside, use a tool that prints text: file FILE, xxd FILE | head, strings FILE | "    \
    "head. To keep a program's binary output, send it to a file: CMD > out.bin]\n"

/* ---- the judge (judge/): run_code ---- */
#define TX_JG_OTHER_NONE                                                                           \
    "[talkback: run_code does not run %s, and Debian 13 has no package for it, so it cannot "      \
    "be installed in this sandbox with apt either. Write the program in a language run_code "      \
    "knows: %s. Nothing ran.]"
#define TX_JG_OTHER_RUN                                                                            \
    "[talkback: run_code does not run %s itself, but this sandbox can, with the run tool. "        \
    "Write the program to %s with write_file (its input to input.txt), then run: %s && %s < "      \
    "input.txt (the install is needed once per chat; after it: %s < input.txt)%s%s. Nothing "      \
    "ran.]"
#define TX_JG_INSTALL_FAILED                                                                       \
    "[talkback: %s is not in this sandbox yet, and installing it failed (apt-get install -y "      \
    "%s%s)%s%.*s. Check that the sandbox reaches Debian's archive (run: apt-get update), "         \
    "then call run_code again. Nothing ran.]\n"
#define TX_JG_NO_MEMORY_SAY "[talkback: out of memory in the judge. Try again.]\n"
#define TX_JG_MANAGER_DOWN                                                                         \
    "[talkback: the sandbox manager is not running, so nothing ran. Try the same call again "      \
    "in a minute; if it keeps failing, tell the user the sandbox service is down.]\n"
#define TX_JG_MANAGER_LOST_BEFORE                                                                  \
    "[talkback: the sandbox manager stopped before your program ran, so nothing ran. Call "        \
    "run_code again.]\n"
#define TX_JG_SANDBOX_SLOW_BEFORE                                                                  \
    "[talkback: the sandbox did not answer in time, before your program ran, so nothing ran. "     \
    "Call run_code again.]\n"
#define TX_JG_MANAGER_LOST_RUNNING                                                                 \
    "[talkback: the sandbox manager stopped while your program was running, so its result is "     \
    "lost: the program may or may not have run to the end, and it was not run again. Check "       \
    "what it left with run (e.g. `ls -l /work`) before assuming anything, then call run_code "     \
    "again.]\n"
#define TX_JG_SANDBOX_SLOW_RUNNING                                                                 \
    "[talkback: the sandbox did not answer in time while your program was running: the "           \
    "program may or may not have run to the end. Check what it left with run before assuming "     \
    "anything, then call run_code again.]\n"
#define TX_JG_UNKNOWN_LANGUAGE                                                                     \
    "[talkback: run_code does not know the language `%s`. Use one of: %s. Nothing ran.]"
#define TX_JG_NO_CODE                                                                              \
    "[talkback: argument `code` is required: send the whole program as a string. Nothing "         \
    "ran.]"
#define TX_JG_TESTS_AND_INPUT                                                                      \
    "[talkback: send either `tests` or `input` and `expected`, not both. For several cases, "      \
    "put every input with its expected output in `tests`: [{\"input\": \"...\", "                  \
    "\"expected\": \"...\"}, ...]; for one case, send `input` and `expected` without "             \
    "`tests`. Nothing ran.]"
#define TX_JG_TOO_MANY_TESTS                                                                       \
    "[talkback: `tests` holds at most %d cases: send the rest in another call. Nothing ran.]"
#define TX_JG_NO_MEMORY "[talkback: out of memory in the judge]"

/* ---- run_code's verdicts (judge/compare.c, judge.c, cases.c, build.c) ---- */

/* The words a verdict line starts with, which the reply proxy reads results
 * by (proxy/verdict.c): the verdicts below are built from them, so the two
 * cannot drift apart.  (TXW_, not TX_: words, not texts of their own.) */
#define TXW_PASS_MATCH    "PASS: the output matches"
#define TXW_PASS_ALL      "PASS: all "
#define TXW_FAIL          "FAIL:"
#define TXW_CRASH         "CRASH:"
#define TXW_TIMEOUT       "TIMEOUT:"
#define TXW_OUTPUT_LIMIT  "OUTPUT LIMIT:"
#define TXW_CANCELLED     "[cancelled:"
#define TXW_COMPILE_ERROR "COMPILE ERROR:"
#define TXW_DONT_ANSWER   "Don't answer yet"
#define TX_JG_DONT_ANSWER                                                                          \
    TXW_DONT_ANSWER ": fix the code and call run_code again until it says PASS.\n"
#define TX_JG_PASS TXW_PASS_MATCH " the expected output.\n"
#define TX_JG_PASS_SPACING                                                                         \
    TXW_PASS_MATCH " the expected output (only spacing differs: extra or missing "                 \
                   "spaces between values were ignored).\n"
#define TX_JG_PASS_FLOAT                                                                           \
    TXW_PASS_MATCH " the expected output (numbers differ by at most 1e-6, which "                  \
                   "counts as equal).\n"
#define TX_JG_FAIL_PROMPT                                                                          \
    TXW_FAIL                                                                                       \
    " the program prints an input prompt (`%s`). Nobody types here: the input comes "              \
    "from stdin, all at once. Remove every prompt and print only what the task asks for.\n"
#define TX_JG_FAIL_LINE TXW_FAIL " line %zu differs.\n"
#define TX_JG_FAIL_MISSING                                                                         \
    TXW_FAIL " the output stops after line %zu, but %zu lines were expected. The first missing "   \
             "line is:\n"
#define TX_JG_FAIL_UNEXPECTED                                                                      \
    TXW_FAIL " no output was expected, but the program printed %zu line(s), starting with:\n"
#define TX_JG_FAIL_EXTRA_ONE                                                                       \
    TXW_FAIL " the expected line matches, but the output goes on with %zu more line(s), starting " \
             "with:\n"
#define TX_JG_FAIL_EXTRA                                                                           \
    TXW_FAIL " all %zu expected lines match, but the output goes on with %zu more line(s), "       \
             "starting with:\n"
#define TX_JG_FAIL_EMPTY                                                                           \
    TXW_FAIL " the program printed nothing, but output was expected. The first expected line "     \
             "is:\n"
#define TX_JG_PASS_ALL  TXW_PASS_ALL "%d tests passed.\n"
#define TX_JG_FAIL_SOME TXW_FAIL " %d of %d tests passed; failed: test %s.\n"
#define TX_JG_CRASH_KILLED                                                                         \
    TXW_CRASH " the program was killed (exit code 137, SIGKILL), most likely because it ran out "  \
              "of memory: this sandbox has "
#define TX_JG_CRASH_SIGNAL TXW_CRASH " the program was killed by signal %d, %s.\n"
#define TX_JG_CRASH_EXIT   TXW_CRASH " the program exited with code %d (a run-time error)%s.\n"
#define TX_JG_CANCELLED    TXW_CANCELLED " the program and everything it started were killed]\n"
#define TX_JG_OUTPUT_LIMIT                                                                         \
    TXW_OUTPUT_LIMIT                                                                               \
    " the program printed more than %" PRId64 " bytes and was stopped at once "                    \
    "(only the head of what it printed is shown). It prints in a loop that does not end, or "      \
    "far more than the task asks for.\n"
#define TX_JG_TIMEOUT                                                                              \
    TXW_TIMEOUT " the program ran longer than %d s and was killed, with everything it started. "   \
                "It loops forever, waits for input that was not given, or is too slow.\n"
#define TX_JG_COMPILE_SLOW TXW_COMPILE_ERROR " the compiler ran longer than %d s and was stopped.\n"
#define TX_JG_COMPILE_KILLED                                                                       \
    TXW_COMPILE_ERROR " the compiler was killed, most likely out of memory (this sandbox has "
#define TX_JG_COMPILE_FAILED                                                                       \
    TXW_COMPILE_ERROR " the program did not compile (exit code %d), so it did not run.\n"
#define TX_JG_BUILD_REUSED                                                                         \
    "Build reused: this sandbox compiled the same %s source with the same line before, so "        \
    "that build runs (not compiled again).\n"
#define TX_JG_INSTALLED                                                                            \
    "Installed %s in this sandbox on first use (apt-get install -y %s): %.1f s. Later runs "       \
    "in this chat find it there.\n"

/* ---- the lines around run_code's output and compiler messages (judge/cases.c, report.c) ---- */
#define TX_JG_MORE_BYTES "[... %zu more bytes not shown]\n"
#define TX_JG_COMPILER_LEFT_OUT                                                                    \
    "[... %zu more line(s) of compiler messages left out: fix the first errors first, they "       \
    "often cause the rest]\n"
#define TX_JG_IMAGES_NOT_SHOWN                                                                     \
    "[the images of this test are not shown: a tests call shows those of the first test that "     \
    "drew any]\n"

/* ---- run_code's FAILs of an answer right in all but form (judge/form.c) ---- */
#define TX_JG_FORM_ROUNDING                                                                        \
    TXW_FAIL " the values agree to the expected precision (%d decimal place%s), so only the "      \
             "rounding differs. Print them rounded to %d decimal place%s, as expected (Python: "   \
             "f\"{x:.%df}\"; C, C++: printf(\"%%.%df\", x)).\n"
#define TX_JG_FORM_BREAKS                                                                          \
    TXW_FAIL " the values are right and only the line breaks differ: %zu line%s expected, the "    \
             "program printed %zu. %s\n"
#define TX_JG_FORM_BREAKS_ONE_LINE                                                                 \
    "Print them all on one line, separated by spaces (Python: print(*values)); C++: a space "      \
    "between values, one newline at the end)."
#define TX_JG_FORM_BREAKS_SPLIT                                                                    \
    "Print each expected line on its own line (a newline where they end)."
#define TX_JG_FORM_BREAKS_OTHER "Break the lines where the expected output does."
#define TX_JG_FORM_STDERR_EMPTY                                                                    \
    TXW_FAIL " stdout was empty, and the answer went to stderr: stderr is not compared, and the "  \
             "answer must go to stdout (Python: print(x), not print(x, file=sys.stderr); C++: "    \
             "cout, not cerr; Java: System.out, not System.err).\n"
#define TX_JG_FORM_STDERR                                                                          \
    TXW_FAIL " stdout differs, but stderr holds the expected answer: stderr is not compared, and " \
             "the answer must go to stdout (anything else to stderr, or nowhere).\n"
#define TX_JG_FORM_UNCALLED                                                                        \
    TXW_FAIL " the program printed nothing: the code defines `%s` but never calls it. The "        \
             "program must read the input and print the answer: add the lines that read stdin, "   \
             "call `%s` with it and print the result (run_code runs the code as a whole "          \
             "program).\n"

/* ---- the reaper (reaper/) ---- */

/* ---- jobs (the sandbox manager: sandbox/jobs.c; the `talkback` program in each sandbox:
 *      agent/tbcli.c, agent/jobs.c) ---- */

#define TX_AG_USAGE                                                                                \
    "usage: talkback job N   (wait for job N, show its new output and, once it ended, its exit "   \
    "code)\n       talkback jobs    (list this chat's jobs)\n"
#define TX_AG_NO_JOB                                                                               \
    "[talkback: there is no job %s in this sandbox. Run `talkback jobs` to list the jobs there "   \
    "are.]\n"
#define TX_AG_NO_JOBS "[talkback: no job has run in this sandbox yet.]\n"
#define TX_AG_SKIPPED "[talkback: %lld bytes of new output skipped here; all of it is in %s]\n"
#define TX_AG_RUNNING                                                                              \
    "[job %d (`%s`) is still running, for %s so far. Its whole output is in %s. Run `talkback "    \
    "job %d` again to wait for more.]\n"
#define TX_AG_ENDED                                                                                \
    "[job %d (`%s`) finished with exit code %d after %s. Its "                                     \
    "whole output is in %s.]\n"
#define TX_AG_KILLED                                                                               \
    "[job %d (`%s`) was killed by signal %d after %s (exit code %d). Its whole output is in "      \
    "%s.]\n"
#define TX_AG_TIMED_OUT                                                                            \
    "[job %d (`%s`) timed out after %s: it and everything it started were killed at its "          \
    "timeout. Its whole output is in %s. If it needs longer, run it again with a larger "          \
    "timeout.]\n"
#define TX_AG_LOST                                                                                 \
    "[job %d (`%s`) was stopped when its sandbox or its agent restarted; how it ended is "         \
    "unknown. "                                                                                    \
    "Its output up to then is in %s. Run it again if it is still needed.]\n"
#define TX_SB_JOB_STARTED                                                                          \
    "[Still running after %s, so this call answers now: the command goes on in the background "    \
    "as job %d, and is stopped at its timeout of %d s like any command. Its whole output goes to " \
    "%s. Check on it with `talkback job %d` (it waits for the job up to a call's length, then "    \
    "shows the output not shown yet and, once the job ended, its exit code); `talkback jobs` "     \
    "lists the jobs. Its end is also said once in a later result. Do not run it again "            \
    "meanwhile.]\n"
#define TX_SB_JOB_UNKEPT                                                                           \
    "[Still running after %s, when this call had to answer (the client's time limit), and this "   \
    "sandbox could not keep it as a job: the command and everything it started were killed. "      \
    "Start long work in the background (CMD > work.log 2>&1 &) and read work.log in later "        \
    "calls.]\n"
#define TX_SB_JOB_ENDED                                                                            \
    "[Job %d (`%s`), which went on after its call, finished with exit code %d after %s. Its "      \
    "whole "                                                                                       \
    "output is in %s (`talkback job %d` shows what was not shown yet).]\n"
#define TX_SB_JOB_KILLED                                                                           \
    "[Job %d (`%s`), which went on after its call, was killed by signal %d after %s (exit code "   \
    "%d). Its whole output is in %s (`talkback job %d` shows what was not shown yet).]\n"
#define TX_SB_JOB_TIMED_OUT                                                                        \
    "[Job %d (`%s`), which went on after its call, timed out after %s: it and everything it "      \
    "started were killed at its timeout. Its output is in %s (`talkback job %d` shows what was "   \
    "not shown yet). If it needs longer, run it again with a larger timeout.]\n"
#define TX_AG_LOG_CAP                                                                              \
    "\n[talkback: the output passed job_log_cap; the rest "                                        \
    "was dropped]\n"

#endif
