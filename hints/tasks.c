/* tasks.c -- hint entries for everyday work whose tools' own words
 * mislead a small model: git, data files and tables, and files that come
 * from another system (table.h says what an entry is; the engine reads
 * this table first).
 *
 * git says "nothing added to commit but untracked files present" and exits
 * 1; a model reads on and says it committed.  A pandas traceback is twenty
 * lines about pandas' own files before "KeyError: 'Revenue'".  A script
 * saved with Windows line endings fails with "$'\r': command not found",
 * and a general entry would call $'\r' a program to install.  Each entry
 * below says first what did NOT happen ("Nothing was committed"), then the
 * one step that makes it happen, with the real names a probe finds (where
 * the file is, which columns the table has).
 *
 * This table is read first: "nothing was cloned" speaks before the general
 * word on a name that does not resolve (group dns), and the entries on
 * text that is no command (group cnf) before "X is not installed".
 */
#include "hints/table.h"

/* ---- building blocks --------------------------------------------------------- */

/* A git command whose subcommand is one of subs: {c2}. */
#define GIT(subs) "\\<git[[:space:]]+(-[^[:space:]]+[[:space:]]+)*(" subs ")\\>"

#define GIT_DNS_SAY(what)                                                                          \
    "[The host {o2} does not resolve from this sandbox, so git reached no server: nothing "        \
    "was " what                                                                                    \
    ". Check the URL's spelling (https://HOST/OWNER/REPO.git); nothing of the repository "         \
    "is here.]"

#define GIT_DNS_OUT "Could not resolve host(name)?:? ([^:[:space:]']+)"

/* ---- the table ---------------------------------------------------------------------- */

const hint_t hints_tasks[] = {
    /* -- git: say what did not happen -- */
    {
        .name = "git-identity", .group = "git",
        .cmd = "\\<git\\>",
        .out = "Author identity unknown|Please tell me who you are|unable to auto-detect email",
        .exit = HX_NONZERO,
        .say = { "[git does not know who you are yet (a new sandbox has no name or email set), so "
                 "nothing was committed. Set them once, then commit again: git config --global "
                 "user.email 'you@example.com' && git config --global user.name 'Your Name']" },
    },
    {
        .name = "git-nothing-staged", .group = "git",
        .cmd = GIT("commit"),
        .out = "nothing added to commit but untracked files present|no changes added to commit",
        .exit = HX_NONZERO,
        .say = { "[No change was staged (git commit takes only what git add staged), so nothing was "
                 "committed. Stage the files, then commit: git add -A && git commit -m 'MESSAGE']" },
    },
    {
        .name = "git-no-files", .group = "git",
        .cmd = GIT("commit"),
        .out = "nothing to commit \\(create/copy files",
        .exit = HX_NONZERO,
        .say = { "[The repository has no file yet, so nothing was committed. Write the files first, "
                 "then git add -A && git commit -m 'MESSAGE']" },
    },
    {
        .name = "git-nothing-to-commit", .group = "git",
        .cmd = GIT("commit"),
        .out = "nothing to commit, working tree clean",
        .exit = HX_NONZERO,
        .say = { "[Nothing changed since the last commit, so nothing was committed: the work is "
                 "committed already (git log --oneline -3 shows it). Change a file first if there is "
                 "more to commit.]" },
    },
    {
        .name = "git-not-a-repo", .group = "git",
        .cmd = "\\<git\\>",
        .out = "not a git repository",
        .not_out = "does not appear to be a git repository",
        .exit = HX_NONZERO,
        .say = { "[The folder git ran in is not inside a repository (each run starts in /work), so "
                 "nothing happened. Make one first: git init, or go into it in the same command: cd "
                 "REPO && git ...]" },
    },
    {
        .name = "git-dns-clone", .group = "dns",
        .cmd = GIT("clone|submodule"), .out = GIT_DNS_OUT, .exit = HX_NONZERO,
        .say = { GIT_DNS_SAY("cloned") },
    },
    {
        .name = "git-dns-push", .group = "dns",
        .cmd = GIT("push"), .out = GIT_DNS_OUT, .exit = HX_NONZERO,
        .say = { GIT_DNS_SAY("pushed") },
    },
    {
        .name = "git-dns-fetch", .group = "dns",
        .cmd = GIT("pull|fetch|ls-remote"), .out = GIT_DNS_OUT, .exit = HX_NONZERO,
        .say = { GIT_DNS_SAY("fetched") },
    },
    {
        .name = "git-push-no-remote", .group = "git",
        .cmd = GIT("push|pull|fetch"),
        .out = "No configured push destination|'([^']+)' does not appear to be a git repository"
               "|No remote repository specified|There is no tracking information",
        .exit = HX_NONZERO,
        .say = { "[This repository has no remote to talk to (git remote -v lists none), so nothing was "
                 "pushed or fetched. Add one first: git remote add origin URL, then git push -u origin "
                 "BRANCH. The commits are safe here, in the local repository.]" },
    },
    {
        .name = "git-push-no-upstream", .group = "git",
        .cmd = GIT("push"),
        .out = "The current branch ([^[:space:]]+) has no upstream branch",
        .exit = HX_NONZERO,
        .say = { "[Branch {o1} has no upstream yet, so nothing was pushed. Push it and set one: git "
                 "push -u origin {o1}]" },
    },
    {
        .name = "git-no-such-ref", .group = "git",
        .cmd = GIT("push"),
        .out = "src refspec ([^[:space:]]+) does not match any",
        .exit = HX_NONZERO,
        .say = { "[There is no local branch {o1} with a commit (no commit yet, or the branch has "
                 "another name: git branch shows it), so nothing was pushed. Commit first, or push the "
                 "branch that exists: git push -u origin HEAD]" },
    },
    {
        .name = "git-push-rejected", .group = "git",
        .cmd = GIT("push"),
        .out = "\\[rejected\\]|failed to push some refs",
        .exit = HX_NONZERO,
        .say = { "[The remote has commits this copy lacks, so nothing was pushed. Bring them in first "
                 "(git pull --rebase), then push again.]" },
    },
    {
        .name = "git-clone-exists", .group = "git",
        .cmd = GIT("clone"),
        .out = "destination path '([^']+)' already exists and is not an empty directory",
        .exit = HX_NONZERO,
        .say = { "[The folder {o1} exists already (an earlier clone?), so nothing was cloned. Use it "
                 "(cd {o1} && git pull), or clone into a new folder: git clone URL NEWNAME]" },
    },
    {
        .name = "git-repo-not-found", .group = "git",
        .cmd = GIT("clone|pull|fetch|push|ls-remote"),
        .out = "Repository not found|repository '[^']*' not found|repository '[^']*' does not "
               "exist",
        .exit = HX_NONZERO,
        .say = { "[The server has no repository at that URL that this sandbox may read (a wrong URL, "
                 "or a private one that needs a token: https://USER:TOKEN@HOST/OWNER/REPO.git), so "
                 "nothing was cloned, fetched or pushed. Check the URL.]" },
    },
    {
        .name = "git-pathspec", .group = "git",
        .cmd = "\\<git\\>",
        .out = "pathspec '([^']+)' did not match any",
        .exit = HX_NONZERO,
        .say = { "[Nothing changed: git knows no file or branch {o1} here. git status lists the "
                 "files, git branch -a the branches (git switch -c {o1} makes a new branch).]" },
    },
    {
        .name = "git-no-commits", .group = "git",
        .cmd = "\\<git\\>",
        .out = "does not have any commits yet|bad default revision 'HEAD'|ambiguous argument "
               "'HEAD'|Needed a single revision",
        .exit = HX_NONZERO,
        .say = { "[This repository has no commit yet, so there is nothing to show. Commit first: "
                 "git add -A && git commit -m 'MESSAGE']" },
    },
    {
        .name = "git-dubious", .group = "git",
        .cmd = "\\<git\\>",
        .out = "detected dubious ownership in repository at '([^']+)'",
        .exit = HX_NONZERO,
        .say = { "[git did nothing: the files of {o1} belong to another user than the one running "
                 "git. Allow it once: git config --global --add safe.directory {o1}]" },
    },
    {
        .name = "git-conflict", .group = "git",
        .cmd = GIT("merge|pull|rebase|cherry-pick|stash"),
        .out = "^CONFLICT \\(",
        .exit = HX_NONZERO,
        .say = { "[The merge stopped half-way: the files named CONFLICT above have <<<<<<< "
                 "markers. Edit them to the wanted text, then git add them and git commit (or git "
                 "merge --abort to go back).]" },
    },
    {
        .name = "git-local-changes", .group = "git",
        .cmd = "\\<git\\>",
        .out = "Your local changes to the following files would be overwritten|Please commit your "
               "changes or stash them",
        .exit = HX_NONZERO,
        .say = { "[Nothing changed: git would have overwritten changes that are not committed. "
                 "Commit them (git add -A && git commit -m 'MESSAGE') or set them aside (git "
                 "stash), then run this again.]" },
    },

    {
        .name = "git-divergent", .group = "git",
        .cmd = GIT("pull"),
        .out = "Need to specify how to reconcile divergent branches|divergent branches",
        .exit = HX_NONZERO,
        .say = { "[This copy and the remote both have new commits, and git will not choose how to join "
                 "them, so nothing was pulled. Say it: git pull --rebase (your commits on top) or git "
                 "pull --no-rebase (a merge commit).]" },
    },
    {
        .name = "git-remote-exists", .group = "git",
        .cmd = GIT("remote"),
        .out = "remote ([^[:space:]]+) already exists",
        .exit = HX_NONZERO,
        .say = { "[Nothing changed: the remote {o1} exists already (git remote -v shows its URL). "
                 "Point it elsewhere with git remote set-url {o1} URL.]" },
    },
    {
        .name = "git-no-branch", .group = "git",
        .cmd = GIT("switch|checkout|merge|rebase|branch"),
        .out = "invalid reference: ([^[:space:]]+)|'([^']+)' is not a commit|merge: ([^[:space:]]+) "
               "- not something we can merge",
        .exit = HX_NONZERO,
        .say = { "[Nothing changed: there is no branch {o1}{o2}{o3} here. git branch -a lists the "
                 "branches; git switch -c {o1}{o2}{o3} makes a new one.]" },
    },

    /* -- data files and tables (a file found nowhere gets no line: the
     *    error says so already, and round 1 holds that it stays quiet) -- */
    {
        .name = "windows-path", .group = "data",
        .out = "(No such file or directory|ENOENT[^\n]*|cannot open file)[:,]? [a-z ]*'([A-Za-z]:\\\\[^'\n]*)'",
        .exit = HX_NONZERO,
        .probe = PROBE_DATA_FILE,
        .say = {
            [0] = "[{o2} is a Windows path, and this sandbox is Linux: no drive letters, and / "
                  "between folders. A file of that name is at {p1}: use that path.]",
            [1] = "[{o2} is a Windows path, and this sandbox is Linux: no drive letters, and / "
                  "between folders. No file of that name is here: write or upload it first, then "
                  "use a path like data/NAME.csv.]",
        },
    },
    {
        .name = "data-file-missing", .group = "data",
        .out = "(FileNotFoundError|IOError|OSError): \\[Errno 2\\] No such file or directory: "
               "'([^']+)'|ENOENT: no such file or directory, open '([^']+)'|cannot open file "
               "'([^']+)': No such file|FileNotFoundException: ([^[:space:]]+) \\(No such file",
        .exit = HX_NONZERO,
        .probe = PROBE_DATA_FILE,
        .say = {
            [0] = "[{o2}{o3}{o4}{o5} is not where the program looked: a relative path is read from "
                  "the folder the program runs in (/work, unless it changes folder). A file of that "
                  "name is at {p1}: use that path.]",
            [2] = "[{o2}{o3}{o4}{o5} is at {p1}, but the program ran in another folder and looked "
                  "there. Use the full path {p1}.]",
        },
    },
    {
        .name = "pandas-column", .group = "data",
        .out = "raise KeyError\\(key\\)[^\n]*\nKeyError: ('[^'\n]*')|KeyError: \"None of "
               "\\[Index\\(\\[([^]\n]*)\\]|KeyError: \"(\\[[^]\n]*\\]) not in index"
               "|'DataFrame' object has no attribute ('[^'\n]*')",
        .exit = HX_NONZERO,
        .probe = CD_GUARD(3) PROBE_DATA_COLUMNS,
        .say = {
            [0] = "[The table has no column {o1}{o2}{o3}{o4}: column names must match exactly (case "
                  "and spaces count). The columns of {p1}. Use one of those as written.]",
            [1] = "[The table has no column {o1}{o2}{o3}{o4}: column names must match exactly (case "
                  "and spaces count). Print the real ones first: print(df.columns.tolist()), then "
                  "use one of them as written.]",
        },
    },
    {
        /* csv.DictReader rows, and any dict read from a table's header. */
        .name = "table-key", .group = "data",
        .out = "^KeyError: ('[^'\n]*')$",
        .exit = HX_NONZERO,
        .probe = CD_GUARD(3) "k={o1}; " PROBE_DATA_COLUMNS,
        .say = { "[The table has no column {o1}: column names must match exactly (case and spaces "
                 "count). The columns of {p1}. Use one of those as written.]" },
    },
    {
        .name = "pandas-empty-file", .group = "data",
        .out = "EmptyDataError: No columns to parse from file",
        .exit = HX_NONZERO,
        .say = { "[The file pandas read is empty (0 bytes, or blank lines only), so there is no "
                 "table in it. Check it (wc -c FILE) and what writes it.]" },
    },
    {
        .name = "csv-fields", .group = "data",
        .out = "Error tokenizing data\\. C error: Expected ([0-9]+) fields in line ([0-9]+), saw "
               "([0-9]+)",
        .exit = HX_NONZERO,
        .say = { "[Line {o2} of the file has {o3} fields where the header has {o1}: the separator or "
                 "the quoting is not what pandas assumed. Look at it (sed -n '{o2}p' FILE), then "
                 "pass the real separator (sep=';') or quote the fields that hold commas.]" },
    },
    {
        .name = "not-utf8", .group = "data",
        .out = "UnicodeDecodeError: 'utf-8' codec can't decode byte (0x[0-9a-f]+)",
        .exit = HX_NONZERO,
        .say = { "[The file is not UTF-8 text (byte {o1} cannot start a UTF-8 character), so it "
                 "could not be read as text. If it is text from another system, give its encoding: "
                 "encoding='latin-1' (or 'cp1252', 'utf-16'); if it is binary (xlsx, zip, gzip), "
                 "read it as that: file FILE tells which.]" },
    },
    {
        .name = "json-not-json", .group = "data",
        .out = "JSONDecodeError: Expecting value: line 1 column 1 \\(char 0\\)"
               "|SyntaxError: Unexpected (token|end of JSON input)[^\n]*JSON",
        .exit = HX_NONZERO,
        .say = { "[What was parsed as JSON is not JSON from its first character: it is empty, or "
                 "something else (an HTML error page, CSV, a log line). Print what was read "
                 "(cat FILE, or curl -s -i URL) and parse what is really there.]" },
    },
    {
        .name = "sqlite-no-table", .group = "data",
        .out = "no such table: ([A-Za-z0-9_.]+)",
        .exit = HX_ANY,
        .say = { "[The database has no table {o1}: the file opened is not the one that has it "
                 "(sqlite makes a new, empty database for a path that does not exist), or the "
                 "table was never created. List its tables: sqlite3 FILE .tables]" },
    },
    {
        .name = "number-with-text", .group = "data",
        .out = "could not convert string to float: '([^'\n]*)'|invalid literal for int\\(\\) with "
               "base 10: '([^'\n]*)'",
        .exit = HX_NONZERO,
        .say = { "[A value is not a plain number: '{o1}{o2}'. Strip what is around it first (spaces, "
                 "units, a thousands separator: thousands=',' in read_csv), or turn bad values into "
                 "NaN: pd.to_numeric(COLUMN, errors='coerce').]" },
    },

    /* -- files from other systems, and text that bash read as commands -- */
    {
        .name = "crlf-script", .group = "cnf",
        .out = "\\$'[^'\n]*\\\\r'|'[^'\n]*\r'",
        .exit = HX_ANY,
        .probe = CD_GUARD(1) PROBE_CRLF_FILE,
        .say = {
            [0] = "[{p1} has Windows line endings (CR LF), and bash takes each CR as part of the "
                  "line: $'\\r' is that CR, not a program, so nothing needs installing. Remove "
                  "them: sed -i 's/\\r$//' {p1}, then run it again.]",
            [1] = "[The script has Windows line endings (CR LF), and bash takes each CR as part of "
                  "the line: $'\\r' is that CR, not a program, so nothing needs installing. Remove "
                  "them: sed -i 's/\\r$//' FILE (or write the file again), then run it again.]",
        },
    },
    {
        .name = "byte-order-mark", .group = "cnf",
        .out = "\\\\357\\\\273\\\\277|invalid non-printable character U\\+FEFF|\xef\xbb\xbf",
        .exit = HX_NONZERO,
        .say = { "[The file starts with a byte order mark (the 3 bytes EF BB BF a Windows editor "
                 "puts first), which the program read as text. Remove it: sed -i '1s/^\\xEF\\xBB"
                 "\\xBF//' FILE, then run it again.]" },
    },
    {
        .name = "foreign-code", .group = "cnf",
        .cmd = "\\.(py|js|mjs|cjs|ts|rb|pl|php|lua|R|r|jl|java|c|cpp|go|rs|kt)\\>",
        .out = ": (line [0-9]+: )?(import|from|def|class|print|const|let|var|function|require"
               "|package|using|fn|func|#include|puts|console\\.log)[^:\n]*: (command )?not found"
               "|^from: can't read /var/mail|syntax error near unexpected token",
        .exit = HX_NONZERO,
        .probe = CD_GUARD(3) PROBE_FOREIGN_SCRIPT,
        .say = {
            [0] = "[{p1} is not a shell script, but bash ran it line by line, so its code made no "
                  "sense as commands (nothing needs installing). Run it with its interpreter: "
                  "{p2}]",
        },
    },
    {
        .name = "bsd-sed",
        .cmd = "\\<sed[[:space:]]+-i[[:space:]]+(''|\"\")",
        .out = "can't read : No such file",
        .exit = HX_NONZERO,
        .say = { "[sed -i '' is the macOS way; GNU sed (here) takes -i alone, and read '' as a file "
                 "name. Drop the '': sed -i 's/OLD/NEW/' FILE]" },
    },
};

const size_t hints_tasks_n = sizeof hints_tasks / sizeof hints_tasks[0];
