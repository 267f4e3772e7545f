/* texts.c -- the catalogue of talkback's own sentences (see texts.h).
 *
 * One row per text, grouped by who says it.  The texts themselves are the
 * macros of texts.h, so a call site and its row can never disagree; the
 * trigger and the next step are written here, for docs/talkback.md and for
 * texts_check().
 */
#include "talk/texts.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TEXT(id, who, kind, when, next)                                                            \
    {                                                                                              \
#id, id, who, kind, when, next                                                             \
    }

static const text_row_t texts[] = {

    /* ---- the gateway (gateway/): argument checks, headers, and the words for what the hub reports ---- */
    TEXT(TX_GW_ITEM_NOT_OBJECT, TW_GATEWAY, TK_FAIL,
         "an item of an array argument (run_code's `tests`) is not an object", "must be an object"),
    TEXT(TX_GW_ITEM_MISSING, TW_GATEWAY, TK_FAIL,
         "an item of an array argument lacks a property it needs (`expected` of a `tests` item)",
         "add it"),
    TEXT(TX_GW_ITEM_NOT_STRING, TW_GATEWAY, TK_FAIL, "a property of an item is not a string",
         "must be a string"),
    TEXT(TX_GW_ALIAS_NONE, TW_GATEWAY, TK_FAIL,
         "an argument a model guesses that the tool has no counterpart for (`command` for "
         "run_code, `append` for write_file)",
         "%s: the alias table's own words (gateway/tools.c), each a step"),
    TEXT(TX_GW_ALIAS_ONLY, TW_GATEWAY, TK_FAIL,
         "a guessed argument name for a tool with one argument, and the right one is missing",
         "send only"),
    TEXT(TX_GW_ALIAS_RENAMED, TW_GATEWAY, TK_FAIL,
         "a guessed name for an argument (`cmd` for `command`) that is never taken as it",
         "call %s again with"),
    TEXT(TX_GW_NOT_ARRAY, TW_GATEWAY, TK_FAIL, "an array argument is not an array",
         "must be an array"),
    TEXT(TX_GW_TOO_FEW, TW_GATEWAY, TK_FAIL,
         "an array argument holds fewer items than its schema's minItems", "needs at least"),
    TEXT(TX_GW_TOO_MANY, TW_GATEWAY, TK_FAIL,
         "an array argument holds more items than its schema's maxItems (run_code's `tests`: "
         "ARG_TESTS_MAX)",
         "send the rest in another call"),
    TEXT(TX_GW_IGNORED_INSTEAD, TW_GATEWAY, TK_NOTE,
         "a guessed argument name sent beside the right one: the call runs, the guess is ignored",
         NULL),
    TEXT(TX_GW_IGNORED_ONLY, TW_GATEWAY, TK_NOTE,
         "an argument the tool does not take, beside the ones it does: ignored", NULL),
    TEXT(TX_GW_IGNORED_NONE, TW_GATEWAY, TK_NOTE,
         "an argument sent to a tool that takes none: ignored", NULL),
    TEXT(TX_GW_WRONG_TYPE, TW_GATEWAY, TK_FAIL,
         "an argument of the wrong JSON type (a string where an integer belongs, ...)",
         "must be %s"),
    TEXT(TX_GW_NOT_ONE_OF, TW_GATEWAY, TK_FAIL,
         "an argument outside its enum (run_code's `language` where the proxy lists them)",
         "must be one of"),
    TEXT(TX_GW_TYPE_UNKNOWN, TW_GATEWAY, TK_FAIL,
         "the tool table names a schema type the gateway cannot copy (a bug in gateway/tools.c)",
         "Tell the user"),
    TEXT(TX_GW_REQUIRED, TW_GATEWAY, TK_FAIL, "a required argument is missing or null",
         "must be %s"),
    TEXT(TX_GW_TIMEOUT_RANGE, TW_GATEWAY, TK_FAIL, "`timeout` is below 1 or above the tool's most",
         "must be between 1 and"),
    TEXT(TX_GW_ARGS_NOT_OBJECT, TW_GATEWAY, TK_FAIL, "a call's `arguments` is not a JSON object",
         "must be a JSON object"),
    TEXT(TX_GW_ARG_BIG, TW_GATEWAY, TK_FAIL,
         "write_file's `content` or run_code's `code` is over `write_file_max` bytes",
         "Make it smaller"),
    TEXT(TX_GW_SHUTDOWN, TW_GATEWAY, TK_FAIL, "the gateway stops while the call is open",
         "Check with run before assuming anything"),
    TEXT(TX_GW_NO_QUEUE, TW_GATEWAY, TK_FAIL,
         "the gateway could not hand the call to the hub (out of memory)", "Try again in a minute"),
    TEXT(TX_GW_CONV_HEADER, TW_GATEWAY, TK_FAIL,
         "the chat id header is missing, empty or an unreplaced placeholder",
         "Fix the MCP server entry"),
    TEXT(TX_GW_USER_HEADER, TW_GATEWAY, TK_FAIL,
         "the user id header is unusable (too long, unprintable, an unreplaced placeholder)",
         "Fix the MCP server entry"),
    TEXT(TX_GW_NOT_RUNNING, TW_GATEWAY, TK_FAIL,
         "no worker of the call's kind was up within `worker_wait_ms` (the hub's no-worker status)",
         "Try the same call again in a minute"),
    TEXT(TX_GW_LOST_RUNNING, TW_GATEWAY, TK_FAIL,
         "run_code: the judge stopped after the program had started",
         "Check what it left with run"),
    TEXT(TX_GW_LOST_BEFORE, TW_GATEWAY, TK_FAIL,
         "run_code: the judge stopped before the program started", "Call run_code again"),
    TEXT(TX_GW_LOST, TW_GATEWAY, TK_FAIL,
         "the worker holding the call stopped (the hub's worker-lost status)",
         "Check with run before assuming anything"),
    TEXT(TX_GW_DEADLINE, TW_GATEWAY, TK_FAIL, "the call's deadline passed with no answer",
         "check with run before trying again"),
    TEXT(TX_GW_NOT_UNDERSTOOD, TW_GATEWAY, TK_FAIL,
         "a worker answered that it could not understand the request (bad-request status); the "
         "worker's words follow the colon",
         "Check the arguments against the tool's description"),
    TEXT(TX_GW_FAILED, TW_GATEWAY, TK_FAIL,
         "a worker failed on the call (internal status); the worker's words follow the colon",
         "Try again"),

    /* ---- the hub (hub/): placement across hosts, and replies between processes ---- */
    TEXT(TX_HUB_WORKER_LOST, TW_HUB, TK_INNER,
         "the worker holding the call stopped (no HELLO for 3 s), and the call is not retried",
         "TX_GW_LOST"),
    TEXT(TX_HUB_WORKER_STOPPED, TW_HUB, TK_INNER,
         "the same, when the fuller reply could not be made (out of memory)", "TX_GW_LOST"),
    TEXT(TX_HUB_CALLER_GONE, TW_HUB, TK_INNER, "a worker's own request whose asker has gone",
         "read by no one: its asker is gone"),
    TEXT(TX_HUB_KEY_HOST, TW_HUB, TK_INNER, "a worker's request names a host its key is not for",
         "read by the worker that sent the request (its log), never by the model"),
    TEXT(TX_HUB_NO_MEMORY, TW_HUB, TK_INNER, "the hub ran out of memory answering a request itself",
         "TX_GW_FAILED"),
    TEXT(TX_HUB_FORGET_NO_HOST, TW_HUB, TK_INNER, "forget_host without its host argument",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_HUB_FORGET_UNKNOWN, TW_HUB, TK_INNER, "forget_host of a host the hub does not know",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_HUB_KEY_MAY_NOT, TW_HUB, TK_INNER,
         "a worker's key sends a request its certificate does not allow",
         "read by the worker that sent the request (its log), never by the model"),
    TEXT(TX_HUB_TOO_MANY_OPEN, TW_HUB, TK_INNER,
         "a worker has `hub_peer_requests` requests open already",
         "read by the worker that sent the request (its log), never by the model"),
    TEXT(TX_HUB_STOPPING, TW_HUB, TK_INNER,
         "the gateway (and its hub) stops with the call still waiting", "TX_GW_NOT_RUNNING"),
    TEXT(TX_HUB_OOM, TW_HUB, TK_INNER, "out of memory taking a call in", "TX_GW_FAILED"),
    TEXT(TX_HUB_NO_WORKER, TW_HUB, TK_INNER,
         "no worker of the call's kind came up within `worker_wait_ms`", "TX_GW_NOT_RUNNING"),
    TEXT(TX_HUB_DEADLINE, TW_HUB, TK_INNER,
         "the call's deadline passed in the hub or in a worker's own request", "TX_GW_DEADLINE"),
    TEXT(TX_HUB_HOST_GONE, TW_HUB, TK_FAIL,
         "the chat's sandbox is on a host that is not reachable now, and `on_host_lost` = wait",
         "Try again in a minute"),
    TEXT(TX_HUB_HOST_GONE_PLACED, TW_HUB, TK_NOTE,
         "the chat's sandbox was on a host not reachable now, and `on_host_lost` = place: it "
         "starts over elsewhere",
         NULL),
    TEXT(TX_HUB_HOST_MAYBE, TW_HUB, TK_FAIL,
         "the chat is found on no live host, and a known host is not reachable now (`on_host_lost` "
         "= wait)",
         "Try again in a minute"),
    TEXT(TX_HUB_HOST_MAYBE_PLACED, TW_HUB, TK_NOTE,
         "the same with `on_host_lost` = place: the chat starts on a live host", NULL),
    TEXT(TX_HUB_ALL_DRAINING, TW_HUB, TK_FAIL, "a new chat, and every sandbox host is draining",
         "Tell the user to try again later"),
    TEXT(TX_HUB_NO_ROOM, TW_HUB, TK_FAIL,
         "a new chat, and every live host runs `max_running` sandboxes", "Tell the user"),
    TEXT(TX_HUB_LOCATE_SLOW, TW_HUB, TK_FAIL,
         "a host did not answer in time whether it holds the chat", "Try again in a minute"),
    TEXT(TX_HUB_LOCATE_NONE, TW_HUB, TK_FAIL, "no sandbox manager could be asked where the chat is",
         "try again"),

    /* ---- any worker (hub/worker.c): replies its own thread machinery makes ---- */
    TEXT(TX_HUB_WORKER_FAILED, TW_WORKER, TK_INNER, "a worker's handler returned no reply",
         "TX_GW_FAILED"),
    TEXT(TX_HUB_NO_THREADS, TW_WORKER, TK_INNER, "a worker could not start a thread for the call",
         "TX_GW_FAILED"),

    /* ---- the sandbox manager (sandbox/): the sandbox, its Docker and its calls ---- */
    TEXT(TX_SB_USER_FULL, TW_SANDBOX, TK_FAIL,
         "a chat's sandbox would start past `max_running_per_user` for its user, and none of the "
         "user's sandboxes is idle enough to stop",
         "Tell the user"),
    TEXT(TX_SB_HOST_FULL, TW_SANDBOX, TK_FAIL,
         "a chat's sandbox would start past `max_running` on this host, and no sandbox is idle "
         "enough to stop",
         "Try again in a few minutes"),
    TEXT(TX_SB_OTHER_USER, TW_SANDBOX, TK_FAIL,
         "the chat's sandbox carries another user's label (a conversation id reused by someone "
         "else)",
         "Tell the user"),
    TEXT(TX_SB_ERROR, TW_SANDBOX, TK_FAIL,
         "finding or making the chat's sandbox failed and left no words of its own (out of memory)",
         "Try again"),
    TEXT(TX_SB_VANISHED, TW_SANDBOX, TK_FAIL,
         "the chat's sandbox disappeared twice while the call ran (removed from outside)",
         "Try again"),
    TEXT(TX_SB_AGENT_BROKE, TW_SANDBOX, TK_FAIL,
         "the link to the sandbox's agent broke while a command ran (the sandbox wrote into the "
         "agent's stream)",
         "run it again if you need its result"),
    TEXT(TX_SB_NO_COMMAND, TW_SANDBOX, TK_FAIL,
         "run without a usable `command` (missing, empty, or with NUL bytes)",
         "must be a non-empty string without NUL bytes"),
    TEXT(TX_SB_NOT_STARTED, TW_SANDBOX, TK_FAIL,
         "Docker or the agent could not start the command in the sandbox",
         "Try again; if it keeps failing, call reset"),
    TEXT(TX_SB_NO_PATH, TW_SANDBOX, TK_FAIL, "write_file without a string `path`",
         "must be a string"),
    TEXT(TX_SB_NO_CONTENT, TW_SANDBOX, TK_FAIL, "write_file without a string `content`",
         "must be a string"),
    TEXT(TX_SB_PATH_NOT_FILE, TW_SANDBOX, TK_FAIL, "write_file's `path` is empty or names a folder",
         "must name a file"),
    TEXT(TX_SB_CONTENT_BIG, TW_SANDBOX, TK_FAIL, "write_file's `content` is over `write_file_max`",
         "Write it in smaller files"),
    TEXT(TX_SB_WRITE_FAILED, TW_SANDBOX, TK_FAIL,
         "the sandbox could not write the file (a folder on the way is a file, no room, ...)",
         "pick another path"),
    TEXT(TX_SB_RESET_NO_DOCKER, TW_SANDBOX, TK_FAIL, "reset: Docker did not answer", "Try again"),
    TEXT(TX_SB_RESET_OTHER_USER, TW_SANDBOX, TK_FAIL,
         "reset of a sandbox that carries another user's label", "Tell the user"),
    TEXT(TX_SB_RESET_FAILED, TW_SANDBOX, TK_FAIL,
         "reset: Docker would not remove the chat's sandbox", "Try reset again"),
    TEXT(TX_SB_BAD_CONV, TW_WORKER, TK_FAIL,
         "an operation whose row needs a conversation id (proto/optable.c) got one that cannot "
         "name a chat's sandbox (checked by hub/worker.c before any handler)",
         "Tell the user"),
    TEXT(TX_SB_BAD_USER, TW_WORKER, TK_FAIL, "the same operation with a user id that is unusable",
         "Tell the user"),
    TEXT(TX_WK_UNKNOWN_OP, TW_WORKER, TK_INNER,
         "a worker (or the hub) got an operation its kind does not serve (a bug: the gateway "
         "sends only operations of the table)",
         "TX_GW_NOT_UNDERSTOOD"),
    TEXT(TX_SB_NETWORK_WRONG, TW_SANDBOX, TK_FAIL,
         "before a create or start: the sandbox network is not the one the egress rule's record "
         "names",
         "Tell the user"),
    TEXT(TX_SB_DOCKER_SILENT, TW_SANDBOX, TK_FAIL,
         "Docker did not answer while the sandbox's network was checked, or while it was found, "
         "made or started",
         "Try again in a minute"),
    TEXT(TX_SB_NO_IMAGE, TW_SANDBOX, TK_FAIL, "the sandbox image is missing on the host",
         "Tell the user to build it"),
    TEXT(TX_SB_NO_RUNTIME, TW_SANDBOX, TK_FAIL,
         "the configured `runtime` is not registered with Docker", "Tell the user"),
    TEXT(TX_SB_CREATE_REFUSED, TW_SANDBOX, TK_FAIL, "Docker refused to create the chat's sandbox",
         "Tell the user"),
    TEXT(TX_SB_START_FAILED, TW_SANDBOX, TK_FAIL,
         "the chat's sandbox exists but Docker would not start it", "Tell the user"),
    TEXT(TX_SB_NOT_MADE, TW_SANDBOX, TK_FAIL,
         "finding or making the chat's sandbox failed with no reason known", "Try again"),
    TEXT(TX_SB_NAME_TAKEN, TW_SANDBOX, TK_FAIL,
         "a container that is not talkback's holds the chat's sandbox name", "Tell the user"),
    TEXT(TX_SB_MEM_FLOOR, TW_SANDBOX, TK_FAIL,
         "starting the chat's sandbox would take the host's available memory below `mem_floor`",
         "Try again in a few minutes"),
    TEXT(TX_SB_OP_NO_DOCKER, TW_SANDBOX, TK_INNER,
         "a host operation (locate, busy, stop, rm): Docker did not answer",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_SB_OP_NO_LIST, TW_SANDBOX, TK_INNER, "list: Docker did not list the host's sandboxes",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_SB_OP_FLAG, TW_SANDBOX, TK_INNER,
         "drain or undrain: the flag file in state_dir cannot be written",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_SB_OP_CHAT_SILENT, TW_SANDBOX, TK_INNER,
         "locate, stop or rm of one chat: Docker did not answer",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_SB_OP_CHAT_REFUSED, TW_SANDBOX, TK_INNER,
         "stop or rm of one chat: Docker would not do it",
         "read by the operator (talkbackctl), never by the model"),
    TEXT(TX_SB_INOTIFY_KILLED, TW_SANDBOX, TK_FAIL,
         "the agent's watchdog killed a process that held more inotify watches or instances than "
         "the caps allow",
         "Watch fewer folders"),

    /* ---- a run's own lines (sandbox/manager.c, sandbox/disk.c): how it ended ---- */
    TEXT(TX_SB_TIMED_OUT, TW_SANDBOX, TK_FAIL,
         "a run passed its timeout: everything it started was killed",
         "call run again with a larger timeout"),
    TEXT(TX_SB_CANCELLED, TW_SANDBOX, TK_INNER,
         "the call was cancelled (the client gave up, or the Stop button's cancel)",
         "read by no one: the call was cancelled"),
    TEXT(TX_SB_OUTPUT_LIMIT, TW_SANDBOX, TK_INNER,
         "a command of a caller that set an output limit (the judge: `code_output_limit`) printed "
         "past it: everything it started was killed",
         "TX_JG_OUTPUT_LIMIT"),
    TEXT(TX_SB_EXIT_CODE, TW_SANDBOX, TK_NOTE,
         "a run exited with a code other than 0 (a hint may follow, hints/)", NULL),
    TEXT(TX_SB_RESET_NONE, TW_SANDBOX, TK_NOTE, "reset of a chat that had no sandbox", NULL),
    TEXT(TX_SB_RESET_DONE, TW_SANDBOX, TK_NOTE, "reset removed the chat's sandbox", NULL),
    TEXT(
        TX_SB_DISK_REMOVED, TW_SANDBOX, TK_FAIL,
        "a run wrote past `disk_cap` where Docker cannot cap at write time: the sandbox is removed",
        "Write less than %s in all"),
    TEXT(TX_SB_DISK_CAPPED, TW_SANDBOX, TK_FAIL,
         "a write failed for lack of space, and the sandbox's disk is capped (`disk_cap`)",
         "Delete what is no longer needed"),
    TEXT(TX_SB_DISK_HOST_FULL, TW_SANDBOX, TK_FAIL,
         "a write failed for lack of space, and the host's own disk is full", "tell the user"),

    /* ---- programs left in the background (sandbox/background.c) ---- */
    TEXT(TX_BG_EXITED, TW_SANDBOX, TK_FAIL,
         "a program the run started in the background exited at once with a status other than 0 "
         "(its port was not taken); then TX_BG_TAIL and TX_BG_FIX, TX_BG_EMPTY_LOG or TX_BG_ABOVE",
         "%s: TX_BG_FIX, after the last lines of its log when it wrote some"),
    TEXT(TX_BG_KILLED, TW_SANDBOX, TK_NOTE,
         "a program the run started in the background was killed at once by a signal", NULL),
    TEXT(TX_BG_PORT_HELD, TW_SANDBOX, TK_FAIL,
         "a program the run started in the background exited because its port was taken, and the "
         "listeners name the program that holds it",
         "use it"),
    TEXT(TX_BG_PORT_TAKEN, TW_SANDBOX, TK_FAIL,
         "the same when the listeners do not say which program holds the port",
         "Use the server that holds the port"),
    TEXT(TX_BG_LISTENING, TW_SANDBOX, TK_NOTE,
         "programs the run started in the background still run and listen on ports", NULL),
    TEXT(TX_BG_DIED_EXIT, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background exited with a status other than 0 since the last "
         "call; then its last lines and TX_BG_FIX",
         NULL),
    TEXT(TX_BG_DIED_OK, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background finished with exit code 0 since the last call",
         NULL),
    TEXT(TX_BG_DIED_KILLED, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background was killed by a signal since the last call", NULL),
    TEXT(TX_BG_GONE_EXIT, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background exited with a status other than 0 while this "
         "command ran",
         NULL),
    TEXT(TX_BG_GONE_OK, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background finished with exit code 0 while this command ran",
         NULL),
    TEXT(TX_BG_GONE_KILLED, TW_SANDBOX, TK_NOTE,
         "a program that ran in the background was stopped by a signal while this command ran",
         NULL),
    TEXT(TX_BG_TAIL, TW_SANDBOX, TK_NOTE,
         "ends another line of this group: the last lines of the program's log", NULL),
    TEXT(TX_BG_EMPTY_LOG, TW_SANDBOX, TK_NOTE,
         "ends another line of this group: the program's log is empty", NULL),
    TEXT(TX_BG_ABOVE, TW_SANDBOX, TK_NOTE,
         "ends another line of this group: the program wrote to the run's own output", NULL),
    TEXT(TX_BG_FIX, TW_SANDBOX, TK_NOTE,
         "ends another line of this group after TX_BG_TAIL, when the program exited with a "
         "status other than 0 (the step of TX_BG_EXITED)",
         NULL),
    TEXT(TX_BG_BEFORE, TW_SANDBOX, TK_NOTE,
         "in a resume notice: the programs that ran in the background before the stop", NULL),
    TEXT(TX_BG_ONE_PORTS, TW_SANDBOX, TK_NOTE,
         "one program of TX_BG_BEFORE's list, with the addresses it listened on", NULL),
    TEXT(TX_BG_ONE, TW_SANDBOX, TK_NOTE,
         "one program of TX_BG_BEFORE's list that listened on no port", NULL),

    /* ---- the images a command drew (sandbox/pictures.c) ---- */
    TEXT(TX_PIC_IMAGE, TW_SANDBOX, TK_NOTE,
         "the head of an image's line: its name, size and kind; one of the TX_PIC_ endings "
         "follows",
         NULL),
    TEXT(TX_PIC_IMAGE_NODIM, TW_SANDBOX, TK_NOTE,
         "the same for an image whose width and height are unknown", NULL),
    TEXT(TX_PIC_OFF, TW_SANDBOX, TK_NOTE,
         "ends an image's line: images are turned off (`image_max_count` is 0)", NULL),
    TEXT(TX_PIC_TOO_MANY, TW_SANDBOX, TK_NOTE,
         "ends an image's line: the call already shows `image_max_count` images", NULL),
    TEXT(TX_PIC_TOO_BIG, TW_SANDBOX, TK_FAIL,
         "ends an image's line: the image is over `image_max_bytes`", "save it smaller"),
    TEXT(TX_PIC_CALL_BIG, TW_SANDBOX, TK_FAIL,
         "ends an image's line: the call's images would be over `image_max_call_bytes` together",
         "Save them smaller"),
    TEXT(TX_PIC_CHANGED, TW_SANDBOX, TK_NOTE,
         "ends an image's line: the file changed or could not be read when it was fetched", NULL),
    TEXT(TX_PIC_NO_MEMORY, TW_SANDBOX, TK_NOTE, "ends an image's line: no memory to hold the image",
         NULL),
    TEXT(TX_PIC_SHOWN, TW_SANDBOX, TK_NOTE,
         "ends an image's line: the image is shown after the text", NULL),

    /* ---- the sandbox manager's notices (sandbox/notices.c) ---- */
    TEXT(TX_SB_RESUMED_AGO, TW_SANDBOX, TK_NOTE,
         "the chat's sandbox had been stopped (idle, by the operator, to make room, or not by "
         "talkback) and starts again; then the reason, TX_SB_RESUMED_KEPT and what ran before",
         NULL),
    TEXT(TX_SB_RESUMED, TW_SANDBOX, TK_NOTE, "the same when the stop's time is unknown", NULL),
    TEXT(TX_SB_RESUMED_KEPT, TW_SANDBOX, TK_NOTE, "in every resume notice", NULL),
    TEXT(TX_SB_RESUMED_RESTART, TW_SANDBOX, TK_NOTE,
         "a resume notice when no record says what ran in the background before the stop", NULL),
    TEXT(TX_SB_WHY_IDLE, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: the reaper stopped it after `idle_stop`", NULL),
    TEXT(TX_SB_WHY_OPERATOR, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: the operator stopped it (talkbackctl stop)", NULL),
    TEXT(TX_SB_WHY_UNKNOWN, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: no reason talkback wrote (Docker or the host restarted)", NULL),
    TEXT(TX_SB_WHY_ROOM_USER, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: it was stopped to start another chat of the same user", NULL),
    TEXT(TX_SB_WHY_ROOM_ALL, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: it was stopped to start another chat on a full host", NULL),
    TEXT(TX_SB_WHY_PAUSED_MAX, TW_SANDBOX, TK_NOTE,
         "the reason of a resume: more than `max_paused` sandboxes were paused", NULL),
    TEXT(TX_SB_GONE, TW_SANDBOX, TK_NOTE,
         "a new sandbox replaces one the reaper (or the disk check) removed; the reason is the "
         "tombstone's",
         NULL),
    TEXT(TX_SB_UNPAUSED, TW_SANDBOX, TK_NOTE,
         "the chat's sandbox was paused and runs again; then how long, why, and TX_SB_UNPAUSED_END",
         NULL),
    TEXT(TX_SB_UNPAUSED_FOR, TW_SANDBOX, TK_NOTE,
         "in an unpause notice, when the pause's time is known", NULL),
    TEXT(TX_SB_UNPAUSED_IDLE, TW_SANDBOX, TK_NOTE,
         "in an unpause notice: paused after `idle_pause` without calls", NULL),
    TEXT(TX_SB_UNPAUSED_NOT_US, TW_SANDBOX, TK_NOTE,
         "in an unpause notice: no pause record (paused from outside talkback)", NULL),
    TEXT(TX_SB_UNPAUSED_END, TW_SANDBOX, TK_NOTE, "at the end of every unpause notice", NULL),

    /* ---- a run's output as the model reads it (hints/output.c) ---- */
    TEXT(TX_HI_BINARY_HEAD, TW_SANDBOX, TK_NOTE,
         "a run's output (run, or run_code's program output in the judge) is binary: its size, "
         "its kind by magic number, and a hex preview follow",
         NULL),
    TEXT(TX_HI_BINARY_TAIL, TW_SANDBOX, TK_NOTE,
         "after the hex preview of binary output: how to look inside and how to keep it", NULL),

    /* ---- the judge (judge/): run_code ---- */
    TEXT(TX_JG_OTHER_NONE, TW_JUDGE, TK_FAIL,
         "run_code is asked for a language it does not run and Debian 13 has no package for "
         "(judge/others.c)",
         "Write the program in a language run_code knows"),
    TEXT(TX_JG_OTHER_RUN, TW_JUDGE, TK_FAIL,
         "run_code is asked for a language it does not run but the sandbox can, with the run tool "
         "(judge/others.c)",
         "Write the program to"),
    TEXT(TX_JG_INSTALL_FAILED, TW_JUDGE, TK_FAIL,
         "installing a language's toolchain on first use failed or timed out",
         "Check that the sandbox reaches Debian's archive"),
    TEXT(TX_JG_NO_MEMORY_SAY, TW_JUDGE, TK_FAIL,
         "the judge ran out of memory asking the sandbox manager", "Try again"),
    TEXT(TX_JG_MANAGER_DOWN, TW_JUDGE, TK_FAIL, "run_code: no sandbox manager was up",
         "Try the same call again in a minute"),
    TEXT(TX_JG_MANAGER_LOST_BEFORE, TW_JUDGE, TK_FAIL,
         "run_code: the sandbox manager stopped before the program started", "Call run_code again"),
    TEXT(TX_JG_SANDBOX_SLOW_BEFORE, TW_JUDGE, TK_FAIL,
         "run_code: the sandbox did not answer in time before the program started",
         "Call run_code again"),
    TEXT(TX_JG_MANAGER_LOST_RUNNING, TW_JUDGE, TK_FAIL,
         "run_code: the sandbox manager stopped while the program ran",
         "Check what it left with run"),
    TEXT(TX_JG_SANDBOX_SLOW_RUNNING, TW_JUDGE, TK_FAIL,
         "run_code: the sandbox did not answer in time while the program ran",
         "Check what it left with run"),
    TEXT(TX_JG_UNKNOWN_LANGUAGE, TW_JUDGE, TK_FAIL,
         "run_code is asked for a language nobody knows (talk/langs.c has no such alias)",
         "Use one of"),
    TEXT(TX_JG_NO_CODE, TW_JUDGE, TK_FAIL, "run_code without `code`",
         "send the whole program as a string"),
    TEXT(TX_JG_TESTS_AND_INPUT, TW_JUDGE, TK_FAIL,
         "run_code with both `tests` and `input`/`expected`", "send either"),
    TEXT(TX_JG_TOO_MANY_TESTS, TW_JUDGE, TK_FAIL,
         "run_code with more than ARG_TESTS_MAX cases (the gateway refuses first: TX_GW_TOO_MANY)",
         "send the rest in another call"),
    TEXT(TX_JG_NO_MEMORY, TW_JUDGE, TK_INNER, "the judge ran out of memory preparing the run",
         "TX_GW_FAILED"),

    /* ---- run_code's verdicts (judge/compare.c, judge.c, cases.c, build.c) ---- */
    TEXT(TX_JG_DONT_ANSWER, TW_JUDGE, TK_FAIL,
         "after every verdict but a PASS or a run without `expected`, unless the result was lost",
         "fix the code and call run_code again"),
    TEXT(TX_JG_PASS, TW_JUDGE, TK_VERDICT, "the output equals `expected`", NULL),
    TEXT(TX_JG_PASS_SPACING, TW_JUDGE, TK_VERDICT,
         "the output equals `expected` but for spaces between values", NULL),
    TEXT(TX_JG_PASS_FLOAT, TW_JUDGE, TK_VERDICT,
         "the output equals `expected` but for numbers within 1e-6", NULL),
    TEXT(TX_JG_FAIL_PROMPT, TW_JUDGE, TK_VERDICT,
         "the output differs and holds an input prompt (judge/compare.c)", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_LINE, TW_JUDGE, TK_VERDICT,
         "a line of the output differs from `expected` (both lines follow)", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_MISSING, TW_JUDGE, TK_VERDICT, "the output has fewer lines than `expected`",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_UNEXPECTED, TW_JUDGE, TK_VERDICT,
         "`expected` is empty and the program printed lines", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_EXTRA_ONE, TW_JUDGE, TK_VERDICT,
         "the one expected line matches and more lines follow", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_EXTRA, TW_JUDGE, TK_VERDICT,
         "every expected line matches and more lines follow", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FAIL_EMPTY, TW_JUDGE, TK_VERDICT,
         "the program printed nothing and output was expected", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_PASS_ALL, TW_JUDGE, TK_VERDICT, "every case of `tests` passed", NULL),
    TEXT(TX_JG_FAIL_SOME, TW_JUDGE, TK_VERDICT,
         "some case of `tests` did not pass (each case's own verdict is above it)",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_CRASH_KILLED, TW_JUDGE, TK_VERDICT,
         "the program was killed with SIGKILL (exit 137); the sandbox's memory follows",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_CRASH_SIGNAL, TW_JUDGE, TK_VERDICT,
         "the program was killed by a named signal (SIGSEGV, SIGABRT, ...)", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_CRASH_EXIT, TW_JUDGE, TK_VERDICT, "the program exited with a code other than 0",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_CANCELLED, TW_JUDGE, TK_INNER,
         "the call was cancelled (the client gave up, or the Stop button's cancel)",
         "read by no one: the call was cancelled"),
    TEXT(TX_JG_OUTPUT_LIMIT, TW_JUDGE, TK_VERDICT,
         "the program printed more than `code_output_limit` bytes", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_TIMEOUT, TW_JUDGE, TK_VERDICT, "the program ran past its timeout",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_COMPILE_SLOW, TW_JUDGE, TK_VERDICT, "the compiler ran past `code_compile_timeout`",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_COMPILE_KILLED, TW_JUDGE, TK_VERDICT,
         "the compiler was killed (exit 137); the sandbox's memory follows", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_COMPILE_FAILED, TW_JUDGE, TK_VERDICT, "the compiler failed (its messages are above)",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_BUILD_REUSED, TW_JUDGE, TK_NOTE,
         "the same source was compiled with the same line before in this sandbox (the compile "
         "cache)",
         NULL),
    TEXT(TX_JG_INSTALLED, TW_JUDGE, TK_NOTE,
         "a language's toolchain was installed on first use in this chat", NULL),

    TEXT(TX_JG_MORE_BYTES, TW_JUDGE, TK_NOTE,
         "a program's stdout or stderr in run_code's result is longer than the judge shows "
         "(cut at a line end)",
         NULL),
    TEXT(TX_JG_COMPILER_LEFT_OUT, TW_JUDGE, TK_NOTE,
         "the compiler's messages are longer than the judge shows (the first ones are kept)", NULL),
    TEXT(TX_JG_IMAGES_NOT_SHOWN, TW_JUDGE, TK_NOTE,
         "a case of a tests call drew images after an earlier case did (one reply shows one "
         "case's)",
         NULL),

    /* ---- run_code's FAILs of an answer right in all but form (judge/form.c) ---- */
    TEXT(TX_JG_FORM_ROUNDING, TW_JUDGE, TK_VERDICT,
         "the output differs, but its numbers agree with `expected` to its decimal places",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FORM_BREAKS, TW_JUDGE, TK_VERDICT,
         "the output differs, but its tokens are `expected`'s with other line breaks (one of "
         "the three steps below follows it)",
         "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FORM_BREAKS_ONE_LINE, TW_JUDGE, TK_NOTE,
         "the end of TX_JG_FORM_BREAKS when `expected` is one line", NULL),
    TEXT(TX_JG_FORM_BREAKS_SPLIT, TW_JUDGE, TK_NOTE,
         "the end of TX_JG_FORM_BREAKS when the program printed one line and more were expected",
         NULL),
    TEXT(TX_JG_FORM_BREAKS_OTHER, TW_JUDGE, TK_NOTE, "the end of TX_JG_FORM_BREAKS otherwise",
         NULL),
    TEXT(TX_JG_FORM_STDERR_EMPTY, TW_JUDGE, TK_VERDICT,
         "stdout is empty and stderr matches `expected`", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FORM_STDERR, TW_JUDGE, TK_VERDICT,
         "stdout differs from `expected` and stderr matches it", "TX_JG_DONT_ANSWER"),
    TEXT(TX_JG_FORM_UNCALLED, TW_JUDGE, TK_VERDICT,
         "the program printed nothing, and the code defines a function or class method it never "
         "calls",
         "TX_JG_DONT_ANSWER"),

    /* ---- the reaper (reaper/) ---- */

    /* ---- jobs (sandbox/jobs.c; the `talkback` program: agent/tbcli.c, agent/jobs.c) ---- */
    TEXT(TX_SB_JOB_STARTED, TW_SANDBOX, TK_NOTE,
         "a run still running when its call must answer (client_timeout less client_margin_ms "
         "and job_answer_ms) goes on as job N",
         NULL),
    TEXT(TX_SB_JOB_UNKEPT, TW_SANDBOX, TK_FAIL,
         "the same in a sandbox whose agent cannot keep a job (no agent, an older one): the "
         "command was killed",
         "Start long work in the background"),
    TEXT(TX_SB_JOB_ENDED, TW_SANDBOX, TK_NOTE,
         "the first run result after job N ended with a status (unless talkback job N said it)",
         NULL),
    TEXT(TX_SB_JOB_KILLED, TW_SANDBOX, TK_NOTE, "the same, for a job killed by a signal", NULL),
    TEXT(TX_SB_JOB_TIMED_OUT, TW_SANDBOX, TK_FAIL, "the same, for a job stopped at its own timeout",
         "run it again with a larger timeout"),
    TEXT(TX_AG_USAGE, TW_AGENT, TK_NOTE, "`talkback` run without `job N` or `jobs`", NULL),
    TEXT(TX_AG_NO_JOB, TW_AGENT, TK_FAIL, "`talkback job N` for a number that names no job",
         "Run `talkback jobs`"),
    TEXT(TX_AG_NO_JOBS, TW_AGENT, TK_NOTE, "`talkback jobs` in a sandbox where no job ran", NULL),
    TEXT(TX_AG_SKIPPED, TW_AGENT, TK_NOTE,
         "`talkback job N` with more new output than it shows at once", NULL),
    TEXT(TX_AG_RUNNING, TW_AGENT, TK_NOTE,
         "`talkback job N` when the job still runs at the end of its wait", NULL),
    TEXT(TX_AG_ENDED, TW_AGENT, TK_NOTE, "`talkback job N` once the job ended with a status", NULL),
    TEXT(TX_AG_KILLED, TW_AGENT, TK_NOTE, "`talkback job N` once the job was killed by a signal",
         NULL),
    TEXT(TX_AG_TIMED_OUT, TW_AGENT, TK_FAIL,
         "`talkback job N` once the job was stopped at its own timeout",
         "run it again with a larger timeout"),
    TEXT(TX_AG_LOST, TW_AGENT, TK_FAIL,
         "`talkback job N` for a job whose sandbox or agent restarted under it", "Run it again"),
    TEXT(TX_AG_LOG_CAP, TW_AGENT, TK_NOTE,
         "the last line of a job's kept output once it passed job_log_cap", NULL),
};

#define TEXTS_N (sizeof texts / sizeof texts[0])

const text_row_t *texts_at(size_t i)
{
    return i < TEXTS_N ? &texts[i] : NULL;
}

const text_row_t *texts_find(const char *id)
{
    for (size_t i = 0; id && i < TEXTS_N; i++)
        if (strcmp(texts[i].id, id) == 0)
            return &texts[i];
    return NULL;
}

const char *texts_who(text_who_t who)
{
    static const char *const names[] = { "gateway", "hub",    "any worker", "sandbox manager",
                                         "judge",   "reaper", "agent" };
    return (size_t)who < sizeof names / sizeof names[0] ? names[who] : "?";
}

/* The words a next step may start with: an imperative, or what an
 * argument must be.  Compared case aside, as whole words. */
static const char *const texts_leads[] = {
    "add",   "ask",   "call", "check", "delete", "fix",  "give",  "make",
    "must",  "needs", "pick", "put",   "read",   "run",  "save",  "send",
    "split", "start", "tell", "try",   "use",    "wait", "watch", "write",
};

static bool texts_leads_with_step(const char *next)
{
    for (size_t i = 0; i < sizeof texts_leads / sizeof texts_leads[0]; i++) {
        size_t n = strlen(texts_leads[i]);
        if (strncasecmp(next, texts_leads[i], n) == 0 && (next[n] == ' ' || next[n] == '\0'))
            return true;
    }
    return false;
}

/* Whether a verdict line starts with the words the reply proxy reads it
 * by: a PASS's when pass, else a failure's. */
static bool texts_verdict_words(const char *text, bool pass)
{
    static const char *const passes[] = { TXW_PASS_MATCH, TXW_PASS_ALL };
    static const char *const fails[] = { TXW_FAIL,         TXW_CRASH,     TXW_TIMEOUT,
                                         TXW_OUTPUT_LIMIT, TXW_CANCELLED, TXW_COMPILE_ERROR };
    const char *const *w = pass ? passes : fails;
    size_t n = pass ? sizeof passes / sizeof passes[0] : sizeof fails / sizeof fails[0];
    for (size_t i = 0; i < n; i++)
        if (strncmp(text, w[i], strlen(w[i])) == 0)
            return true;
    return false;
}

/* The rule of texts.h, for one row. */
bool texts_check(const text_row_t *r, char *why, size_t n)
{
    const char *bad = NULL;
    if (!r->id || !r->text || !*r->text || !r->when || !*r->when)
        bad = "has no id, text or trigger";
    else if (r->kind == TK_NOTE && r->next)
        bad = "is a note but names a next step";
    else if (r->kind == TK_INNER) {
        const text_row_t *to = r->next ? texts_find(r->next) : NULL;
        if (!r->next || (!to && strncmp(r->next, "read by ", 8) != 0))
            bad = "is an inner reply that names neither the text the model reads nor its reader";
        else if (to && to->kind != TK_FAIL && to->kind != TK_VERDICT)
            bad = "is an inner reply whose model text is not a failure or a verdict";
    } else if (r->kind == TK_VERDICT) {
        const text_row_t *to = r->next ? texts_find(r->next) : NULL;
        if (r->next && (!to || to->kind != TK_FAIL))
            bad = "is a failing verdict whose next line is not a failure text of this table";
        else if (!texts_verdict_words(r->text, r->next == NULL))
            bad = "is a verdict that does not start with the words the reply proxy reads";
    } else if (r->kind == TK_FAIL) {
        if (!r->next || !*r->next)
            bad = "is a failure that names no next step";
        else if (strncmp(r->next, "%s: ", 4) == 0 && r->next[4])
            bad = strstr(r->text, "%s") ? NULL : "takes its step from a %s it does not have";
        else if (!strstr(r->text, r->next))
            bad = "is a failure whose next step is not in its text";
        else if (!texts_leads_with_step(r->next))
            bad = "is a failure whose next step is not an imperative";
    }
    if (bad && why && n)
        snprintf(why, n, "%s %s", r->id ? r->id : "(no id)", bad);
    return bad == NULL;
}
