/* test_hints.c -- the hint table (sandbox/hints.c) without Docker.
 *
 * cases[] is the table's test table: for every entry, at least one result
 * it must speak on (with the exact start of the line it must add) and at
 * least one matching success or look-alike it must stay silent on.  A fake
 * probe hands each case's canned probe answer back, counts the calls and
 * checks every probe script it is given with `bash -n`.  A second set
 * runs some probes for real, with bash in a temporary folder, to check
 * what they find.  Then: the retry memory, and ShellCheck on writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hints/hints.h"
#include "hints/output.h"

/* The sandbox template as the configuration's defaults set it: what the
 * limit phrases say when a sandbox cannot tell its own. */
static hints_limits_t tmpl = { .memory = 256 << 20,
                               .memory_swap = 1 << 30,
                               .nano_cpus = 1000000000,
                               .pids = 512,
                               .disk_cap = INT64_C(2) << 30 };

/* ---- the fake probe ----------------------------------------------------------- */

typedef struct {
    int rc;           /* what the probe "exits" with */
    const char *out;  /* what it "prints" */
    const char *only; /* answer only probes containing this; others exit 3 */
    int calls;
    char last[8192]; /* the last script it was given */
} fake_t;

/* bash -n: the script parses. */
static int bash_syntax_ok(const char *script)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("bash", "bash", "-n", "-c", script, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int fake_probe(void *ctx, const char *command, textbuf_t *out)
{
    fake_t *f = ctx;
    f->calls++;
    snprintf(f->last, sizeof f->last, "%s", command);
    if (!bash_syntax_ok(command)) {
        fprintf(stderr, "probe does not parse:\n%s\n", command);
        return -1;
    }
    if (f->only && !strstr(command, f->only))
        return 3;
    if (f->out)
        textbuf_puts(out, f->out);
    return f->rc;
}

/* ---- the cases ------------------------------------------------------------------ */

typedef struct {
    const char *name; /* the entry this case is about */
    bool quiet;       /* true: nothing may be added */
    const char *cmd;
    const char *out;
    int exit_code;
    int probe_rc;
    const char *probe_out;
    const char *expect;    /* the added text starts with this (fires only) */
    const char *probe_has; /* the probe script contains this */
    const char *probe_for; /* only probes containing this get the canned
                            * answer; others exit 3 (can't tell).  NULL: all */
    bool timed_out;        /* the run was killed by its timeout */
} hcase_t;

#define FIRE(n)  .name = n
#define QUIET(n) .name = n, .quiet = true

static const hcase_t cases[] = {
    /* round 3, tasks.c: git says what did not happen */
    { FIRE("git-identity"), .cmd = "git commit -m first",
      .out = "Author identity unknown\n\n*** Please tell me who you are.\n", .exit_code = 128,
      .expect = "[git does not know who you are yet (a new sandbox has no name or email set), so "
                "nothing was committed." },
    { QUIET("git-identity"), .cmd = "git commit -m first",
      .out = "[master (root-commit) 1a2b3c4] first\n 1 file changed\n", .exit_code = 0 },
    { FIRE("git-nothing-staged"), .cmd = "git commit -m 'add app'",
      .out = "On branch master\n\nInitial commit\n\nUntracked files:\n\tapp.py\n\nnothing added to "
             "commit but untracked files present (use \"git add\" to track)\n",
      .exit_code = 1,
      .expect =
          "[No change was staged (git commit takes only what git add staged), so nothing was "
          "committed. Stage the files, then commit: git add -A && git commit -m 'MESSAGE']\n" },
    { FIRE("git-nothing-staged"), .cmd = "cd repo && git commit -m fix",
      .out =
          "Changes not staged for commit:\n\tmodified:   a.py\n\nno changes added to commit (use "
          "\"git add\" and/or \"git commit -a\")\n",
      .exit_code = 1,
      .expect = "[No change was staged (git commit takes only what git add staged), so nothing was "
                "committed." },
    { QUIET("git-nothing-staged"), .cmd = "git add -A && git commit -m 'add app'",
      .out = "[master (root-commit) 5d6e7f8] add app\n 1 file changed, 3 insertions(+)\n",
      .exit_code = 0 },
    { FIRE("git-no-files"), .cmd = "git commit -m x",
      .out = "On branch master\n\nInitial commit\n\nnothing to commit (create/copy files and use "
             "\"git add\" to track)\n",
      .exit_code = 1, .expect = "[The repository has no file yet, so nothing was committed." },
    { QUIET("git-no-files"), .cmd = "git status", .out = "nothing to commit (create/copy files\n",
      .exit_code = 0 },
    { FIRE("git-nothing-to-commit"), .cmd = "git commit -am again",
      .out = "On branch master\nnothing to commit, working tree clean\n", .exit_code = 1,
      .expect = "[Nothing changed since the last commit, so nothing was committed" },
    { QUIET("git-nothing-to-commit"), .cmd = "git status",
      .out = "On branch master\nnothing to commit, working tree clean\n", .exit_code = 0 },
    { FIRE("git-not-a-repo"), .cmd = "git log",
      .out = "fatal: not a git repository (or any of the parent directories): .git\n",
      .exit_code = 128,
      .expect = "[The folder git ran in is not inside a repository (each run starts in /work), so "
                "nothing happened." },
    { QUIET("git-not-a-repo"), .cmd = "git log --oneline", .out = "1a2b3c4 first\n",
      .exit_code = 0 },
    { FIRE("git-dns-clone"), .cmd = "git clone https://github.invalid/me/repo.git",
      .out = "Cloning into 'repo'...\nfatal: unable to access "
             "'https://github.invalid/me/repo.git/': Could not resolve host: github.invalid\n",
      .exit_code = 128,
      .expect = "[The host github.invalid does not resolve from this sandbox, so git reached no "
                "server: nothing was cloned. Check the URL's spelling" },
    { FIRE("git-dns-clone"), .cmd = "git clone git@gitlab.invalid:me/repo.git",
      .out = "Cloning into 'repo'...\nssh: Could not resolve hostname gitlab.invalid: Name or "
             "service not known\nfatal: Could not read from remote repository.\n",
      .exit_code = 128,
      .expect = "[The host gitlab.invalid does not resolve from this sandbox, so git reached no "
                "server: nothing was cloned." },
    { QUIET("git-dns-clone"), .cmd = "git clone /srv/repo.git",
      .out = "Cloning into 'repo'...\ndone.\n", .exit_code = 0 },
    { FIRE("git-dns-push"), .cmd = "git push origin main",
      .out = "fatal: unable to access 'https://git.invalid/r.git/': Could not resolve host: "
             "git.invalid\n",
      .exit_code = 128,
      .expect = "[The host git.invalid does not resolve from this sandbox, so git reached no "
                "server: nothing was pushed." },
    { QUIET("git-dns-push"), .cmd = "git push origin main", .out = "Everything up-to-date\n",
      .exit_code = 0 },
    { FIRE("git-dns-fetch"), .cmd = "git pull",
      .out = "fatal: unable to access 'https://git.invalid/r.git/': Could not resolve host: "
             "git.invalid\n",
      .exit_code = 1,
      .expect = "[The host git.invalid does not resolve from this sandbox, so git reached no "
                "server: nothing was fetched." },
    { QUIET("git-dns-fetch"), .cmd = "git pull", .out = "Already up to date.\n", .exit_code = 0 },
    { FIRE("git-push-no-remote"), .cmd = "git push",
      .out = "fatal: No configured push destination.\nEither specify the URL from the "
             "command-line or configure a remote repository using\n",
      .exit_code = 128,
      .expect = "[This repository has no remote to talk to (git remote -v lists none), so nothing "
                "was pushed or fetched." },
    { FIRE("git-push-no-remote"), .cmd = "git push origin master",
      .out = "fatal: 'origin' does not appear to be a git repository\nfatal: Could not read from "
             "remote repository.\n",
      .exit_code = 128,
      .expect = "[This repository has no remote to talk to (git remote -v lists none), so nothing "
                "was pushed or fetched." },
    { QUIET("git-push-no-remote"), .cmd = "git push", .out = "Everything up-to-date\n",
      .exit_code = 0 },
    { FIRE("git-push-no-upstream"), .cmd = "git push",
      .out = "fatal: The current branch feature has no upstream branch.\n", .exit_code = 128,
      .expect =
          "[Branch feature has no upstream yet, so nothing was pushed. Push it and set one: git "
          "push -u origin feature]\n" },
    { QUIET("git-push-no-upstream"), .cmd = "git push -u origin feature",
      .out = "branch 'feature' set up to track 'origin/feature'.\n", .exit_code = 0 },
    { FIRE("git-no-such-ref"), .cmd = "git push origin main",
      .out = "error: src refspec main does not match any\n", .exit_code = 1,
      .expect = "[There is no local branch main with a commit" },
    { QUIET("git-no-such-ref"), .cmd = "git push origin main", .out = " * [new branch] main\n",
      .exit_code = 0 },
    { FIRE("git-push-rejected"), .cmd = "git push",
      .out = " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs\n",
      .exit_code = 1, .expect = "[The remote has commits this copy lacks, so nothing was pushed." },
    { QUIET("git-push-rejected"), .cmd = "git push", .out = "   1a2b..3c4d  main -> main\n",
      .exit_code = 0 },
    { FIRE("git-clone-exists"), .cmd = "git clone /srv/app.git",
      .out = "fatal: destination path 'app' already exists and is not an empty directory.\n",
      .exit_code = 128,
      .expect = "[The folder app exists already (an earlier clone?), so nothing was cloned. Use it "
                "(cd app && git pull)" },
    { QUIET("git-clone-exists"), .cmd = "git clone /srv/app.git app2",
      .out = "Cloning into 'app2'...\n", .exit_code = 0 },
    { FIRE("git-repo-not-found"), .cmd = "git clone https://github.com/me/nope.git",
      .out = "remote: Repository not found.\nfatal: repository 'https://github.com/me/nope.git/' "
             "not found\n",
      .exit_code = 128, .expect = "[The server has no repository at that URL" },
    { QUIET("git-repo-not-found"), .cmd = "git ls-remote /srv/app.git", .out = "1a2b\tHEAD\n",
      .exit_code = 0 },
    { FIRE("git-pathspec"), .cmd = "git add mian.py",
      .out = "fatal: pathspec 'mian.py' did not match any files\n", .exit_code = 128,
      .expect = "[Nothing changed: git knows no file or branch mian.py here." },
    { QUIET("git-pathspec"), .cmd = "git add main.py", .out = "", .exit_code = 0 },
    { FIRE("git-no-commits"), .cmd = "git log",
      .out = "fatal: your current branch 'master' does not have any commits yet\n",
      .exit_code = 128,
      .expect = "[This repository has no commit yet, so there is nothing to show." },
    { QUIET("git-no-commits"), .cmd = "git log -1", .out = "commit 1a2b3c\n", .exit_code = 0 },
    { FIRE("git-dubious"), .cmd = "git status",
      .out = "fatal: detected dubious ownership in repository at '/work/app'\n", .exit_code = 128,
      .expect = "[git did nothing: the files of /work/app belong to another user than the one "
                "running git. Allow it once: git config --global --add safe.directory "
                "/work/app]\n" },
    { QUIET("git-dubious"), .cmd = "git status", .out = "On branch master\n", .exit_code = 0 },
    { FIRE("git-conflict"), .cmd = "git merge feature",
      .out = "Auto-merging a.py\nCONFLICT (content): Merge conflict in a.py\nAutomatic merge "
             "failed; fix conflicts and then commit the result.\n",
      .exit_code = 1, .expect = "[The merge stopped half-way" },
    { QUIET("git-conflict"), .cmd = "git merge feature", .out = "Fast-forward\n a.py | 2 +-\n",
      .exit_code = 0 },
    { FIRE("git-local-changes"), .cmd = "git pull",
      .out = "error: Your local changes to the following files would be overwritten by merge:\n"
             "\ta.py\nPlease commit your changes or stash them before you merge.\nAborting\n",
      .exit_code = 1, .expect = "[Nothing changed: git would have overwritten changes" },
    { QUIET("git-local-changes"), .cmd = "git stash", .out = "Saved working directory\n",
      .exit_code = 0 },

    /* round 3, tasks.c: data files and tables */
    { FIRE("data-file-missing"), .cmd = "python3 report.py",
      .out = "Traceback (most recent call last):\n  File \"/work/report.py\", line 2, in <module>\n"
             "FileNotFoundError: [Errno 2] No such file or directory: 'sales.csv'\n",
      .exit_code = 1, .probe_rc = 0, .probe_out = "/work/data/sales.csv\n",
      .expect = "[sales.csv is not where the program looked: a relative path is read from the "
                "folder the program runs in (/work, unless it changes folder). A file of that name "
                "is at /work/data/sales.csv: use that path.]\n",
      .probe_for = "b=${f##*/}" },
    { QUIET("data-file-missing"), .cmd = "node load.js",
      .out = "Error: ENOENT: no such file or directory, open 'data.json'\n", .exit_code = 1,
      .probe_rc = 1, .probe_for = "b=${f##*/}" },
    { FIRE("data-file-missing"), .cmd = "python3 a.py",
      .out = "FileNotFoundError: [Errno 2] No such file or directory: 'in.csv'\n", .exit_code = 1,
      .probe_rc = 2, .probe_out = "/work/in.csv\n", .probe_for = "b=${f##*/}",
      .expect = "[in.csv is at /work/in.csv, but the program ran in another folder" },
    { QUIET("data-file-missing"), .cmd = "python3 report.py", .out = "total 42\n", .exit_code = 0,
      .probe_rc = 0, .probe_out = "/work/data/sales.csv\n" },
    { FIRE("pandas-column"), .cmd = "python3 report.py",
      .out = "  File \"/usr/lib/python3/dist-packages/pandas/core/indexes/base.py\", line 3812, "
             "in get_loc\n    raise KeyError(key) from err\nKeyError: 'Revenue'\n",
      .exit_code = 1, .probe_out = "sales.csv: 'region', 'revenue'\n",
      .expect = "[The table has no column 'Revenue': column names must match exactly (case and "
                "spaces count). The columns of sales.csv: 'region', 'revenue'. Use one of those "
                "as written.]\n" },
    { FIRE("pandas-column"),
      .cmd =
          "python3 -c \"import pandas as pd; df = pd.read_csv('s.csv'); print(df[['Revenue']])\"",
      .out = "KeyError: \"None of [Index(['Revenue'], dtype='object')] are in the [columns]\"\n",
      .exit_code = 1, .probe_rc = 1,
      .expect = "[The table has no column 'Revenue': column names must match exactly (case and "
                "spaces count). Print the real ones first: print(df.columns.tolist())" },
    { QUIET("pandas-column"), .cmd = "python3 -c \"d = {}; d['x']\"",
      .out = "Traceback (most recent call last):\nKeyError: 'x'\n", .exit_code = 1 },
    { FIRE("pandas-empty-file"), .cmd = "python3 a.py",
      .out = "pandas.errors.EmptyDataError: No columns to parse from file\n", .exit_code = 1,
      .expect = "[The file pandas read is empty" },
    { QUIET("pandas-empty-file"), .cmd = "python3 a.py", .out = "   a  b\n0  1  2\n",
      .exit_code = 0 },
    { FIRE("csv-fields"), .cmd = "python3 a.py",
      .out = "pandas.errors.ParserError: Error tokenizing data. C error: Expected 3 fields in "
             "line 5, saw 4\n",
      .exit_code = 1,
      .expect = "[Line 5 of the file has 4 fields where the header has 3: the separator or the "
                "quoting is not what pandas assumed. Look at it (sed -n '5p' FILE)" },
    { QUIET("csv-fields"), .cmd = "python3 a.py", .out = "ok\n", .exit_code = 0 },
    { FIRE("not-utf8"), .cmd = "python3 a.py",
      .out = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 12: invalid "
             "continuation byte\n",
      .exit_code = 1, .expect = "[The file is not UTF-8 text (byte 0xe9 cannot start" },
    { QUIET("not-utf8"), .cmd = "python3 a.py", .out = "caf\xc3\xa9\n", .exit_code = 0 },
    { FIRE("json-not-json"), .cmd = "python3 fetch.py",
      .out = "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n",
      .exit_code = 1, .expect = "[What was parsed as JSON is not JSON from its first character" },
    { QUIET("json-not-json"), .cmd = "python3 fetch.py", .out = "{'a': 1}\n", .exit_code = 0 },
    { FIRE("sqlite-no-table"), .cmd = "sqlite3 app.db 'select * from users'",
      .out = "Parse error: no such table: users\n", .exit_code = 1,
      .expect = "[The database has no table users: the file opened is not the one that has it" },
    { QUIET("sqlite-no-table"), .cmd = "sqlite3 app.db 'select count(*) from users'", .out = "3\n",
      .exit_code = 0 },
    { FIRE("number-with-text"), .cmd = "python3 a.py",
      .out = "ValueError: could not convert string to float: '1,234'\n", .exit_code = 1,
      .expect = "[A value is not a plain number: '1,234'." },
    { QUIET("number-with-text"), .cmd = "python3 a.py", .out = "1234.0\n", .exit_code = 0 },

    { FIRE("windows-path"), .cmd = "python3 load.py",
      .out = "FileNotFoundError: [Errno 2] No such file or directory: "
             "'C:\\\\Users\\\\me\\\\sales.csv'\n",
      .exit_code = 1, .probe_rc = 0, .probe_out = "/work/data/sales.csv\n",
      .probe_for = "b=${f##*/}",
      .expect = "[C:\\\\Users\\\\me\\\\sales.csv is a Windows path, and this sandbox is Linux: no "
                "drive letters, and / between folders. A file of that name is at "
                "/work/data/sales.csv: use that path.]\n" },
    { FIRE("windows-path"), .cmd = "node load.js",
      .out = "Error: ENOENT: no such file or directory, open 'D:\\data\\x.json'\n", .exit_code = 1,
      .probe_rc = 1, .probe_for = "b=${f##*/}",
      .expect = "[D:\\data\\x.json is a Windows path, and this sandbox is Linux" },
    { QUIET("windows-path"), .cmd = "python3 load.py", .out = "loaded\n", .exit_code = 0 },
    { FIRE("pandas-column"), .cmd = "python3 a.py",
      .out = "AttributeError: 'DataFrame' object has no attribute 'Revenue'\n", .exit_code = 1,
      .probe_rc = 1, .expect = "[The table has no column 'Revenue': column names must match" },
    { FIRE("table-key"), .cmd = "python3 totals.py",
      .out = "Traceback (most recent call last):\n  File \"/work/totals.py\", line 5, in <module>\n"
             "    total += float(row['Revenue'])\nKeyError: 'Revenue'\n",
      .exit_code = 1, .probe_out = "sales.csv: 'region', 'revenue'\n",
      .expect = "[The table has no column 'Revenue': column names must match exactly (case and "
                "spaces count). The columns of sales.csv: 'region', 'revenue'. Use one of those as "
                "written.]\n" },
    { QUIET("table-key"), .cmd = "python3 a.py", .out = "KeyError: 'x'\n", .exit_code = 1,
      .probe_rc = 1 },
    { FIRE("git-divergent"), .cmd = "git pull",
      .out = "hint: You have divergent branches and need to specify how to reconcile them.\n"
             "fatal: Need to specify how to reconcile divergent branches.\n",
      .exit_code = 128,
      .expect = "[This copy and the remote both have new commits, and git will not choose how to "
                "join them, so nothing was pulled." },
    { QUIET("git-divergent"), .cmd = "git pull --rebase", .out = "Successfully rebased\n",
      .exit_code = 0 },
    { FIRE("git-remote-exists"), .cmd = "git remote add origin /srv/r.git",
      .out = "error: remote origin already exists.\n", .exit_code = 3,
      .expect = "[Nothing changed: the remote origin exists already (git remote -v shows its "
                "URL). Point it elsewhere with git remote set-url origin URL.]\n" },
    { QUIET("git-remote-exists"), .cmd = "git remote add origin /srv/r.git", .out = "",
      .exit_code = 0 },
    { FIRE("git-no-branch"), .cmd = "git switch develop",
      .out = "fatal: invalid reference: develop\n", .exit_code = 128,
      .expect = "[Nothing changed: there is no branch develop here." },
    { FIRE("git-no-branch"), .cmd = "git merge feature",
      .out = "merge: feature - not something we can merge\n", .exit_code = 1,
      .expect = "[Nothing changed: there is no branch feature here." },
    { QUIET("git-no-branch"), .cmd = "git switch develop", .out = "Switched to branch 'develop'\n",
      .exit_code = 0 },

    /* round 3, tasks.c: files from other systems, text that is no command */
    { FIRE("crlf-script"), .cmd = "bash deploy.sh",
      .out = "deploy.sh: line 2: $'\\r': command not found\n", .exit_code = 127, .probe_rc = 0,
      .probe_out = "deploy.sh\n", .probe_for = "grep -q $'\\r$'",
      .expect = "[deploy.sh has Windows line endings (CR LF), and bash takes each CR as part of "
                "the line: $'\\r' is that CR, not a program, so nothing needs installing. Remove "
                "them: sed -i 's/\\r$//' deploy.sh, then run it again.]\n" },
    { FIRE("crlf-script"), .cmd = "./run.sh",
      .out = "./run.sh: line 3: cd: $'build\\r': No such file or directory\n", .exit_code = 1,
      .probe_rc = 1, .expect = "[The script has Windows line endings (CR LF)" },
    { FIRE("crlf-script"), .cmd = "./tool.py",
      .out = "/usr/bin/env: 'python3\r': No such file or directory\n", .exit_code = 127,
      .probe_rc = 1, .expect = "[The script has Windows line endings (CR LF)" },
    { QUIET("crlf-script"), .cmd = "bash deploy.sh", .out = "deployed\n", .exit_code = 0 },
    { FIRE("byte-order-mark"), .cmd = "python3 a.py",
      .out = "SyntaxError: invalid non-printable character U+FEFF\n", .exit_code = 1,
      .expect = "[The file starts with a byte order mark" },
    { FIRE("byte-order-mark"), .cmd = "bash a.sh",
      .out = "a.sh: line 1: $'\\357\\273\\277echo': command not found\n", .exit_code = 127,
      .expect = "[The file starts with a byte order mark" },
    { QUIET("byte-order-mark"), .cmd = "python3 a.py", .out = "ok\n", .exit_code = 0 },
    { FIRE("foreign-code"), .cmd = "bash solve.py",
      .out = "solve.py: line 1: import: command not found\nsolve.py: line 3: syntax error near "
             "unexpected token `('\n",
      .exit_code = 2, .probe_out = "solve.py\npython3 solve.py\n", .probe_for = "*.kt) r=",
      .expect = "[solve.py is not a shell script, but bash ran it line by line, so its code made "
                "no sense as commands (nothing needs installing). Run it with its interpreter: "
                "python3 solve.py]\n" },
    { FIRE("foreign-code"), .cmd = "./solve.py",
      .out = "./solve.py: line 1: import: command not found\n", .exit_code = 127,
      .probe_out = "./solve.py\npython3 ./solve.py\n",
      .probe_for = "*.kt) r=", .expect = "[./solve.py is not a shell script" },
    { QUIET("foreign-code"), .cmd = "python3 solve.py", .out = "42\n", .exit_code = 0 },
    { FIRE("bsd-sed"), .cmd = "sed -i '' 's/a/b/' f.txt",
      .out = "sed: can't read : No such file or directory\n", .exit_code = 2,
      .expect = "[sed -i '' is the macOS way" },
    { QUIET("bsd-sed"), .cmd = "sed -i 's/a/b/' f.txt", .out = "", .exit_code = 0 },

    /* round 3, codes.c: exit codes that are answers */
    { FIRE("grep-no-match"), .cmd = "grep -n TODO main.py", .out = "", .exit_code = 1,
      .expect = "[No line matched, so grep printed nothing and exited with 1: that is grep's "
                "answer \"not found\", not an error" },
    { FIRE("grep-no-match"), .cmd = "ps aux | grep -c '[n]ginx'", .out = "0\n", .exit_code = 1,
      .expect = "[No line matched" },
    { FIRE("grep-no-match"), .cmd = "cd src && grep -rq main . 2>&1", .out = "", .exit_code = 1,
      .expect = "[No line matched" },
    { FIRE("grep-no-match"), .cmd = "echo checking; grep -n TODO main.py", .out = "checking\n",
      .exit_code = 1, .expect = "[No line matched, so grep printed nothing" },
    { QUIET("grep-no-match"), .cmd = "grep -n TODO main.py", .out = "3:# TODO\n", .exit_code = 0 },
    { QUIET("grep-no-match"), .cmd = "grep -q x f || echo none", .out = "", .exit_code = 1 },
    { QUIET("grep-no-match"), .cmd = "grep x nofile",
      .out = "grep: nofile: No such file or directory\n", .exit_code = 2 },
    { FIRE("diff-differs"), .cmd = "diff a.txt b.txt", .out = "1c1\n< a\n---\n> b\n",
      .exit_code = 1,
      .expect = "[Exit code 1 from diff means the files differ (0: they are the same, 2: "
                "trouble), not that it failed: what it printed above are the differences.]\n" },
    { FIRE("diff-differs"), .cmd = "cmp a.bin b.bin", .out = "a.bin b.bin differ: byte 1, line 1\n",
      .exit_code = 1, .expect = "[Exit code 1 from cmp means the files differ" },
    { QUIET("diff-differs"), .cmd = "diff a.txt b.txt", .out = "", .exit_code = 0 },
    { QUIET("diff-differs"), .cmd = "diff a.txt nofile",
      .out = "diff: nofile: No such file or directory\n", .exit_code = 2 },
    { FIRE("pgrep-none"), .cmd = "pgrep -f 'python3 app.py'", .out = "", .exit_code = 1,
      .expect = "[No process matched, so pgrep printed nothing" },
    { QUIET("pgrep-none"), .cmd = "pgrep -f app.py", .out = "12\n", .exit_code = 0 },
    { FIRE("timeout-124"), .cmd = "timeout 3 python3 solve.py < in.txt", .out = "",
      .exit_code = 124,
      .expect = "[timeout stopped the command after 3 (exit code 124 is timeout's own" },
    { FIRE("timeout-124"), .cmd = "timeout -s INT 10s ./server", .out = "started\n",
      .exit_code = 124, .expect = "[timeout stopped the command after 10s" },
    { QUIET("timeout-124"), .cmd = "timeout 3 python3 solve.py < in.txt", .out = "42\n",
      .exit_code = 0 },

    { FIRE("which-none"), .cmd = "which node", .out = "", .exit_code = 1, .probe_rc = 0,
      .probe_out = "apt-get update && apt-get install -y nodejs\n",
      .expect = "[No program node is installed here (which found none: that is its answer, not an "
                "error). Install it: apt-get update && apt-get install -y nodejs]\n",
      .probe_has = "c='node'" },
    { FIRE("which-none"), .cmd = "command -v frob", .out = "", .exit_code = 1, .probe_rc = 1,
      .expect = "[No program frob is installed here (command -v found none" },
    { QUIET("which-none"), .cmd = "which node", .out = "/usr/bin/node\n", .exit_code = 0 },
    { FIRE("pytest-no-tests"), .cmd = "python3 -m pytest -q", .out = "no tests ran in 0.01s\n",
      .exit_code = 5, .expect = "[pytest found no tests, so none ran" },
    { QUIET("pytest-no-tests"), .cmd = "pytest -q", .out = "1 passed\n", .exit_code = 0 },
    { FIRE("make-no-makefile"), .cmd = "make",
      .out = "make: *** No targets specified and no makefile found.  Stop.\n", .exit_code = 2,
      .expect = "[make built nothing: there is no Makefile here" },
    { QUIET("make-no-makefile"), .cmd = "make", .out = "gcc -o main main.c\n", .exit_code = 0 },

    /* round 3, codes.c: signals */
    { FIRE("abort-uncaught"), .cmd = "./a.out",
      .out = "terminate called after throwing an instance of 'std::out_of_range'\n  what():  "
             "vector::_M_range_check\n",
      .exit_code = 134,
      .expect = "[The C++ program threw std::out_of_range and nothing caught it, so it aborted "
                "(SIGABRT, exit code 134)" },
    { QUIET("abort-uncaught"), .cmd = "./a.out", .out = "3\n", .exit_code = 0 },
    { FIRE("abort-assert"), .cmd = "./a.out",
      .out = "a.out: t.c:5: main: Assertion `n > 0' failed.\n", .exit_code = 134,
      .expect = "[The assert(n > 0) was false, so the program aborted itself (SIGABRT, exit code "
                "134)" },
    { QUIET("abort-assert"), .cmd = "./a.out", .out = "ok\n", .exit_code = 0 },
    { FIRE("abort-heap"), .cmd = "gcc -o t t.c && ./t",
      .out = "free(): double free detected in tcache 2\n", .exit_code = 134,
      .expect = "[The C library found the program's memory corrupted" },
    { FIRE("abort-heap"), .cmd = "./t", .out = "*** stack smashing detected ***: terminated\n",
      .exit_code = 134, .expect = "[The C library found the program's memory corrupted" },
    { QUIET("abort-heap"), .cmd = "./t", .out = "done\n", .exit_code = 0 },
    { FIRE("abort"), .cmd = "./t", .out = "", .exit_code = 134,
      .expect = "[Aborted (SIGABRT, exit code 134)" },
    { QUIET("abort"), .cmd = "./t", .out = "fine\n", .exit_code = 0 },
    { FIRE("sigbus"), .cmd = "./mapper", .out = "", .exit_code = 135,
      .expect = "[Bus error (SIGBUS, exit code 135)" },
    { QUIET("sigbus"), .cmd = "./mapper", .out = "ok\n", .exit_code = 0 },
    { FIRE("sigpipe"), .cmd = "set -o pipefail; yes | head -n 2", .out = "y\ny\n", .exit_code = 141,
      .expect = "[SIGPIPE (exit code 141)" },
    { QUIET("sigpipe"), .cmd = "yes | head -n 2", .out = "y\ny\n", .exit_code = 0 },
    { FIRE("sigterm"), .cmd = "python3 worker.py", .out = "working\n", .exit_code = 143,
      .expect = "[Terminated (SIGTERM, exit code 143)" },
    { QUIET("sigterm"), .cmd = "python3 worker.py", .out = "done\n", .exit_code = 0 },
    { FIRE("pkill-self-term"), .cmd = "pkill -f 'http.server 8471'; sleep 0.2", .out = "",
      .exit_code = 143, .expect = "[pkill -f matched this command's own shell too" },
    { FIRE("pkill-self-term"), .cmd = "cd /work && pkill -e -f app.py", .out = "", .exit_code = 143,
      .expect = "[pkill -f matched this command's own shell too" },
    { FIRE("pkill-self-kill"), .cmd = "pkill -9f 'node server.js' && echo stopped", .out = "",
      .exit_code = 137, .expect = "[pkill -f matched this command's own shell too" },
    { QUIET("pkill-self-term"), .cmd = "pkill -f app.py", .out = "", .exit_code = 0 },
    { QUIET("pkill-self-term"), .cmd = "pkill python3; sleep 1", .out = "", .exit_code = 1 },
    { FIRE("sigterm"), .cmd = "pkill python3; python3 w.py", .out = "", .exit_code = 143,
      .expect = "[Terminated (SIGTERM, exit code 143)" },
    { QUIET("pkill-self-kill"), .cmd = "pkill -f app.py; python3 big.py", .out = "ok\n",
      .exit_code = 0 },
    { FIRE("sigint"), .cmd = "./a.out", .out = "", .exit_code = 130,
      .expect = "[Interrupted (SIGINT, exit code 130)" },
    { QUIET("sigint"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sighup"), .cmd = "./a.out", .out = "", .exit_code = 129,
      .expect = "[Hung up (SIGHUP, exit code 129)" },
    { QUIET("sighup"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigquit"), .cmd = "./a.out", .out = "", .exit_code = 131,
      .expect = "[Quit (SIGQUIT, exit code 131)" },
    { QUIET("sigquit"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigill"), .cmd = "./a.out", .out = "", .exit_code = 132,
      .expect = "[Illegal instruction (SIGILL, exit code 132)" },
    { QUIET("sigill"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigtrap"), .cmd = "./a.out", .out = "", .exit_code = 133,
      .expect = "[Trace trap (SIGTRAP, exit code 133)" },
    { QUIET("sigtrap"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigusr"), .cmd = "./a.out", .out = "", .exit_code = 138,
      .expect = "[Killed by SIGUSR1 (exit code 138)" },
    { QUIET("sigusr"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigalrm"), .cmd = "./a.out", .out = "", .exit_code = 142,
      .expect = "[Alarm clock (SIGALRM, exit code 142)" },
    { QUIET("sigalrm"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigxcpu"), .cmd = "./a.out", .out = "", .exit_code = 152,
      .expect = "[CPU time limit exceeded (SIGXCPU, exit code 152)" },
    { QUIET("sigxcpu"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigxfsz"), .cmd = "./a.out", .out = "", .exit_code = 153,
      .expect = "[File size limit exceeded (SIGXFSZ, exit code 153)" },
    { QUIET("sigxfsz"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },
    { FIRE("sigsys"), .cmd = "./a.out", .out = "", .exit_code = 159,
      .expect = "[Bad system call (SIGSYS, exit code 159)" },
    { QUIET("sigsys"), .cmd = "./a.out", .out = "1\n", .exit_code = 0 },

    /* round 3, codes.c: output that is not there */
    { FIRE("no-output-program"), .cmd = "python3 solution.py", .out = "", .exit_code = 0,
      .expect = "[No output: the program ran and ended (exit code 0) without printing anything." },
    { FIRE("no-output-program"), .cmd = "g++ -O2 -o sol sol.cpp && ./sol < in.txt 2>&1",
      .out = "\n", .exit_code = 0, .expect = "[No output: the program ran and ended" },
    { FIRE("no-output-program"), .cmd = "node -e 'let x = 1'", .out = "", .exit_code = 0,
      .expect = "[No output: the program ran and ended" },
    { QUIET("no-output-program"), .cmd = "python3 solution.py", .out = "42\n", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "python3 gen.py > data.txt", .out = "", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "python3 -m http.server 8000 &", .out = "",
      .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "python3 a.py; mkdir out", .out = "", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "mkdir -p app && touch app/x", .out = "", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "ls /work", .out = "", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "sleep 2", .out = "", .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "python3 -m venv --without-pip venv", .out = "",
      .exit_code = 0 },
    { QUIET("no-output-program"), .cmd = "bash -n deploy.sh && node --check app.js", .out = "",
      .exit_code = 0 },
    { FIRE("no-output-failed"), .cmd = "./check", .out = "", .exit_code = 3,
      .expect = "[No output, and exit code 3: the program ended with a failure status without "
                "printing why (an exit(3) or a return from main on some path)." },
    { QUIET("no-output-failed"), .cmd = "ls -A /work; test -e /work/secret.txt", .out = "",
      .exit_code = 1 },
    { QUIET("no-output-failed"), .cmd = "./check", .out = "bad input\n", .exit_code = 3 },
    { FIRE("no-output-failed"), .cmd = "python3 -c \"import sys; sys.exit(3)\"", .out = "",
      .exit_code = 3, .expect = "[No output, and exit code 3" },
    { FIRE("grep-no-match"), .cmd = "grep -E 'a|b;c' f.txt", .out = "", .exit_code = 1,
      .expect = "[No line matched" },
    { FIRE("no-output-file"), .cmd = "cat results.txt", .out = "", .exit_code = 0, .probe_rc = 0,
      .expect = "[No output: results.txt is empty (0 bytes)." },
    { QUIET("no-output-file"), .cmd = "cat results.txt", .out = "", .exit_code = 0, .probe_rc = 1 },
    { QUIET("no-output-file"), .cmd = "cat results.txt", .out = "7\n", .exit_code = 0 },
    { FIRE("find-nothing"), .cmd = "find / -name 'sales*.csv' 2>/dev/null", .out = "",
      .exit_code = 0, .expect = "[No output: find found no file that matches" },
    { QUIET("find-nothing"), .cmd = "find . -name '*.pyc' -delete", .out = "", .exit_code = 0 },
    { QUIET("find-nothing"), .cmd = "find . -name '*.csv'", .out = "./a.csv\n", .exit_code = 0 },

    /* missing or empty files */
    { FIRE("missing-file"), .cmd = "kotlinc TwoSum.kt -include-runtime -d t.jar",
      .out = "error: source file or directory not found: TwoSum.kt\n", .exit_code = 1,
      .probe_out = "TwoSum.kt does not exist (no file /work/TwoSum.kt)\n",
      .expect =
          "[TwoSum.kt does not exist (no file /work/TwoSum.kt), so there was nothing to compile or "
          "run. Write it first (write_file), then run this command again.]\n",
      .probe_has = "'kotlinc TwoSum.kt -include-runtime -d t.jar'" },
    { FIRE("missing-file"), .cmd = "python3 x.py",
      .out = "python3: can't open file '/work/x.py': [Errno 2] "
             "No such file or directory\n",
      .exit_code = 2, .probe_out = "x.py does not exist (no file /work/x.py)",
      .expect = "[x.py does not exist (no file /work/x.py), so there was nothing" },
    { FIRE("missing-file"), .cmd = "gcc a.c -o a",
      .out = "/usr/bin/ld: (.text+0x1b): undefined reference to "
             "`main'\ncollect2: error: ld returned 1 exit status\n",
      .exit_code = 1, .probe_out = "a.c is empty (0 bytes)",
      .expect = "[a.c is empty (0 bytes), so there was nothing to compile or run." },
    { QUIET("missing-file"), .cmd = "python3 solve.py",
      .out = "FileNotFoundError: [Errno 2] No such file or "
             "directory: 'input.txt'\n",
      .exit_code = 1, .probe_rc = 1 },
    { QUIET("missing-file"), .cmd = "kotlinc TwoSum.kt -include-runtime -d t.jar", .out = "",
      .exit_code = 0, .probe_rc = 1 },
    { FIRE("missing-file"), .cmd = "echo 3 | timeout 5 python3 sol.py",
      .out = "python3: can't open file "
             "'/work/sol.py': [Errno 2] No such file or directory\n",
      .exit_code = 2, .probe_out = "sol.py does not exist (no file /work/sol.py)",
      .expect = "[sol.py does not exist" },
    { FIRE("missing-file"), .cmd = "./run.sh",
      .out = "bash: line 1: ./run.sh: No such file or directory\n", .exit_code = 127,
      .probe_out = "./run.sh does not exist (no file /work/run.sh)", .probe_for = "realpath",
      .expect = "[./run.sh does not exist (no file /work/run.sh), so there was nothing to compile "
                "or run." },
    { QUIET("missing-file"), .cmd = "rm old.py",
      .out = "rm: cannot remove 'old.py': No such file or directory\n", .exit_code = 1,
      .probe_out = "old.py does not exist (no file /work/old.py)" },
    { QUIET("missing-file"), .cmd = "cat notes.py",
      .out = "cat: notes.py: No such file or directory\n", .exit_code = 1,
      .probe_out = "notes.py does not exist (no file /work/notes.py)" },
    { FIRE("empty-file-ran"), .cmd = "python3 x.py", .out = "", .exit_code = 0,
      .probe_out = "x.py is empty (0 bytes)",
      .expect = "[x.py is empty (0 bytes), so there was nothing" },
    { QUIET("empty-file-ran"), .cmd = "python3 x.py", .out = "hello\n", .exit_code = 0 },
    { QUIET("empty-file-ran"), .cmd = "rm x.py", .out = "", .exit_code = 0 },
    { FIRE("missing-program"), .cmd = "./a.out",
      .out = "bash: line 1: ./a.out: No such file or directory\n", .exit_code = 127,
      .probe_out = "a main.c", .probe_for = "dirname",
      .expect = "[./a.out does not exist: nothing was built or "
                "written there. What is there now: a main.c]\n",
      .probe_has = "dirname -- './a.out'" },
    { QUIET("missing-program"), .cmd = "./a.out", .out = "42\n", .exit_code = 0 },

    /* builds that never reached the code */
    { FIRE("go-no-module"), .cmd = "go build",
      .out = "go: go.mod file not found in current directory or any "
             "parent directory; see 'go help modules'\n",
      .exit_code = 1, .probe_out = "go build -o main main.go\n", .probe_for = "*.go",
      .expect = "[There is no go.mod here, so go compiled nothing. Build the file itself: go build "
                "-o main "
                "main.go (or go run FILE.go), or make a module first: go mod init NAME.]\n" },
    { FIRE("go-no-module"), .cmd = "cd src && go run .",
      .out = "go: go.mod file not found in current "
             "directory or any parent directory; see 'go help modules'\n",
      .exit_code = 1, .probe_rc = 1,
      .expect = "[There is no go.mod here, so go compiled nothing. Build the file itself: go build "
                "-o NAME "
                "FILE.go" },
    { QUIET("go-no-module"), .cmd = "go build -o main main.go", .out = "", .exit_code = 0,
      .probe_rc = 1 },
    { FIRE("cargo-no-manifest"), .cmd = "cargo run",
      .out = "error: could not find `Cargo.toml` in `/work` or "
             "any parent directory\n",
      .exit_code = 101,
      .expect = "[There is no Cargo.toml here, so cargo compiled "
                "nothing. Build the file itself: rustc -O -o NAME FILE.rs" },
    { QUIET("cargo-no-manifest"), .cmd = "cargo run", .out = "Hello\n", .exit_code = 0 },
    { FIRE("java-public-class"), .cmd = "javac Solution.java",
      .out = "Solution.java:1: error: class Main is "
             "public, should be declared in a file named Main.java\npublic class Main {\n       "
             "^\n1 error\n",
      .exit_code = 1,
      .expect = "[javac needs the public class Main in a file named Main.java: write the code "
                "to Main.java" },
    { QUIET("java-public-class"), .cmd = "javac Main.java", .out = "", .exit_code = 0,
      .probe_rc = 1 },
    { FIRE("java-no-main-class"), .cmd = "java Main.class",
      .out = "Error: Could not find or load main class "
             "Main.class\nCaused by: java.lang.ClassNotFoundException: Main.class\n",
      .exit_code = 1,
      .expect = "[java runs a compiled class by its name: compile first (javac Main.java), then "
                "run java Main " },
    { QUIET("java-no-main-class"), .cmd = "java Main", .out = "42\n", .exit_code = 0 },
    { FIRE("mono-exe"), .cmd = "mcs -out:BinarySearch.exe BinarySearch.cs && ./BinarySearch.exe",
      .out = "bash: line 1: ./BinarySearch.exe: cannot execute binary file: Exec format error\n",
      .exit_code = 126,
      .expect = "[./BinarySearch.exe is a .NET program, which Linux cannot run directly. Run it "
                "with Mono: "
                "mono ./BinarySearch.exe]\n" },
    { FIRE("mono-exe"), .cmd = "./X.exe",
      .out = "bash: line 1: ./X.exe: cannot execute binary file: Exec "
             "format error\n",
      .exit_code = 126, .probe_rc = 1,
      .expect = "[./X.exe is a .NET program, which Linux "
                "cannot run directly. Install Mono (apt-get update && apt-get install -y "
                "mono-runtime), then run mono "
                "./X.exe]\n" },
    { QUIET("mono-exe"), .cmd = "mono BinarySearch.exe", .out = "5\n", .exit_code = 0 },
    { FIRE("crlf-or-interpreter"), .cmd = "./crlf.sh",
      .out = "bash: line 1: ./crlf.sh: cannot execute: "
             "required file not found\n",
      .exit_code = 127,
      .expect = "[./crlf.sh has Windows line endings (CR LF), "
                "so its #! line names a program that does not exist. Remove them: sed -i "
                "'s/\\r$//' ./crlf.sh]\n" },
    { FIRE("crlf-or-interpreter"), .cmd = "./x.py",
      .out = "bash: line 1: ./x.py: /usr/bin/python4: bad "
             "interpreter: No such file or directory\n",
      .exit_code = 126, .probe_rc = 1, .probe_out = "/usr/bin/python4",
      .expect = "[./x.py starts with #!/usr/bin/python4, which is not installed here" },
    { QUIET("crlf-or-interpreter"), .cmd = "./crlf.sh", .out = "hi\n", .exit_code = 0 },
    { FIRE("not-executable"), .cmd = "./np.sh", .out = "bash: line 1: ./np.sh: Permission denied\n",
      .exit_code = 126, .probe_out = "bash ./np.sh\n", .probe_for = "i=python3",
      .expect = "[./np.sh is not executable. Make it so with "
                "chmod +x ./np.sh, or run it with its interpreter: bash ./np.sh]\n" },
    { QUIET("not-executable"), .cmd = "./np.sh", .out = "hi\n", .exit_code = 0 },

    /* packages and modules */
    { FIRE("apt-no-lists"), .cmd = "apt-get install -y openjdk-17-jdk",
      .out = "Reading package lists...\n"
             "E: Unable to locate package openjdk-17-jdk\n",
      .exit_code = 100, .probe_rc = 1,
      .expect = "[apt has no package lists yet (a new sandbox starts without them), so it knows no "
                "package at "
                "all: run apt-get update first, then install.]\n" },
    { FIRE("apt-unknown-package"), .cmd = "apt-get update && apt-get install -y openjdk-17-jdk",
      .out = "E: Unable to locate package openjdk-17-jdk\n", .exit_code = 100,
      .probe_out = "openjdk-21-jdk openjdk-25-jdk\n",
      .expect = "[Debian 13 has no package openjdk-17-jdk. apt-cache search finds these instead: "
                "openjdk-21-jdk "
                "openjdk-25-jdk. Install one of those.]\n",
      .probe_has = "p='openjdk-17-jdk'" },
    { FIRE("apt-unknown-package"), .cmd = "apt-get install -y python-pip",
      .out = "E: Package 'python-pip' has "
             "no installation candidate\n",
      .exit_code = 100, .probe_out = "python3-pip",
      .expect = "[Debian 13 has no package python-pip. apt-cache search finds these instead: "
                "python3-pip." },
    { QUIET("apt-no-lists"), .cmd = "apt-get install -y curl",
      .out = "curl is already the newest version\n", .exit_code = 0 },
    { QUIET("apt-unknown-package"), .cmd = "apt-get install -y openjdk-21-jdk",
      .out = "Setting up "
             "openjdk-21-jdk\n",
      .exit_code = 0 },
    { FIRE("python-module"), .cmd = "python3 -c 'import cv2'",
      .out = "Traceback (most recent call last):\n"
             "ModuleNotFoundError: No module named 'cv2'\n",
      .exit_code = 1, .probe_out = "opencv-python-headless",
      .expect =
          "[No Python module named cv2 is installed. If it is a library, install it: pip install "
          "opencv-python-headless; if it is a file of yours, write cv2.py first.]\n" },
    { FIRE("python-module"), .cmd = "python3 gui.py",
      .out = "ModuleNotFoundError: No module named 'tkinter'\n", .exit_code = 1, .probe_rc = 2,
      .probe_out = "apt-get update && apt-get install -y python3-tk",
      .expect = "[tkinter comes from Debian, not pip: apt-get update && apt-get install -y "
                "python3-tk]\n" },
    { QUIET("python-module"), .cmd = "python3 -c 'import cv2'", .out = "ok\n", .exit_code = 0 },
    { QUIET("python-module"), .cmd = "python3 app.py",
      .out = "ModuleNotFoundError: No module named 'helpers'\n", .exit_code = 1, .probe_rc = 3 },
    { FIRE("pip-externally-managed"), .cmd = "pip install requests",
      .out = "error: externally-managed-"
             "environment\n",
      .exit_code = 1, .expect = "[pip refused because Debian manages this Python." },
    { QUIET("pip-externally-managed"), .cmd = "pip install requests",
      .out = "Successfully installed "
             "requests-2.32.3\n",
      .exit_code = 0 },
    { FIRE("node-module"), .cmd = "node app.js",
      .out = "Error: Cannot find module 'express'\nRequire stack:\n"
             "- /work/app.js\n",
      .exit_code = 1,
      .expect = "[The Node module express is not installed: npm install "
                "express (in the folder of the script), then run it again.]\n" },
    { FIRE("node-module"), .cmd = "node a.mjs",
      .out = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package "
             "'@scope/pkg' imported from /work/a.mjs\n",
      .exit_code = 1,
      .expect = "[The Node module @scope/pkg is not installed: npm install @scope/pkg " },
    { QUIET("node-module"), .cmd = "node x.js", .out = "Error: Cannot find module '/work/x.js'\n",
      .exit_code = 1, .probe_rc = 1 },
    { QUIET("node-module"), .cmd = "node app.js", .out = "listening on 3000\n", .exit_code = 0 },
    { FIRE("npm-no-package-json"), .cmd = "npm start",
      .out = "npm error enoent Could not read package.json: "
             "Error: ENOENT: no such file or directory, open '/work/package.json'\n",
      .exit_code = 254, .expect = "[There is no package.json here, so npm has nothing to run." },
    { QUIET("npm-no-package-json"), .cmd = "npm start", .out = "> app@1.0.0 start\n",
      .exit_code = 0 },
    { FIRE("command-not-found"), .cmd = "ssh-keygen -t ed25519",
      .out = "bash: line 1: ssh-keygen: command not "
             "found\n",
      .exit_code = 127, .probe_out = "apt-get update && apt-get install -y openssh-client\n",
      .probe_for = "openssh-client",
      .expect = "[ssh-keygen is not installed in this sandbox. Install it: apt-get update && "
                "apt-get install -y "
                "openssh-client]\n",
      .probe_has = "c='ssh-keygen'" },
    { FIRE("command-not-found"), .cmd = "dotnet run",
      .out = "bash: line 1: dotnet: command not found\n", .exit_code = 127, .probe_rc = 2,
      .probe_out = "There is no dotnet here: C# builds with Mono: mcs "
                   "-out:NAME.exe FILE.cs, then mono NAME.exe",
      .expect = "[There is no dotnet here: C# builds with Mono: "
                "mcs -out:NAME.exe FILE.cs, then mono NAME.exe.]\n" },
    { FIRE("command-not-found"), .cmd = "frobnicate",
      .out = "bash: line 1: frobnicate: command not found\n", .exit_code = 127, .probe_rc = 1,
      .expect = "[frobnicate is not installed in this sandbox. Find its "
                "package with apt-get update && apt-cache search frobnicate, then apt-get install "
                "-y PACKAGE.]\n" },
    { QUIET("command-not-found"), .cmd = "jq . x.json", .out = "{}\n", .exit_code = 0 },
    { FIRE("command-not-found-env"), .cmd = "sudo foo",
      .out = "env: \xe2\x80\x98"
             "foo\xe2\x80\x99: No such "
             "file or directory\n",
      .exit_code = 127, .probe_rc = 1, .expect = "[foo is not installed in this sandbox." },
    { QUIET("command-not-found-env"), .cmd = "sudo true", .out = "", .exit_code = 0 },

    /* servers and ports */
    { FIRE("connection-refused"), .cmd = "curl -sS http://localhost:8080/",
      .out = "curl: (7) Failed to "
             "connect to localhost port 8080 after 0 ms: Could not connect to server\n",
      .exit_code = 7, .probe_out = "8080\n127.0.0.1:5432 (postgres, pid 9)\n",
      .expect =
          "[Nothing listens on port 8080 in this sandbox, so the connection was refused: the "
          "server is not "
          "running (or listens on another port). Listening now: 127.0.0.1:5432 (postgres, pid 9). "
          "Start the "
          "server first, in the background (CMD > server.log 2>&1 &), then check with ss -ltnp.]\n",
      .probe_has = "t='curl -sS http://localhost:8080/'" },
    { FIRE("connection-refused"), .cmd = "python3 client.py",
      .out = "ConnectionRefusedError: [Errno 111] "
             "Connection refused\n",
      .exit_code = 1, .probe_rc = 1, .probe_out = "nothing\n",
      .expect = "[Connection refused: nothing listened at the address and port this connected to. "
                "Listening in "
                "this sandbox now: nothing." },
    { FIRE("connection-refused"), .cmd = "python3 -m http.server 8000 & curl -s localhost:8000",
      .out = "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Could not connect to "
             "server\n",
      .exit_code = 7, .probe_rc = 2, .probe_out = "8000\n0.0.0.0:8000 (python3, pid 7)\n",
      .expect = "[Port 8000 has a listener now (0.0.0.0:8000 (python3, pid 7)), but it was not "
                "ready when this "
                "connected." },
    { QUIET("connection-refused"), .cmd = "curl -sS http://localhost:8080/",
      .out = "<html>ok</html>\n", .exit_code = 0 },
    { FIRE("connection-refused-ipv6"),
      .cmd = "python3 -c \"import socket; socket.create_connection(('localhost', "
             "8081))\"",
      .out = "OSError: [Errno 99] Cannot assign requested address\n", .exit_code = 1,
      .probe_out = "8081\nnothing\n", .expect = "[Nothing listens on port 8081 in this sandbox" },
    { QUIET("connection-refused-ipv6"), .cmd = "python3 client.py",
      .out = "OSError: [Errno 99] Cannot assign "
             "requested address\n",
      .exit_code = 1, .probe_rc = 1, .probe_out = "nothing\n" },
    { FIRE("connection-refused-nc"), .cmd = "nc -z localhost 8080", .out = "", .exit_code = 1,
      .probe_out = "8080\nnothing\n", .expect = "[Nothing listens on port 8080 in this sandbox" },
    { QUIET("connection-refused-nc"), .cmd = "nc -z localhost 8080", .out = "", .exit_code = 0 },
    { FIRE("address-in-use"), .cmd = "python3 -m http.server 8000",
      .out = "OSError: [Errno 98] Address "
             "already in use\n",
      .exit_code = 1, .probe_out = "0.0.0.0:8000 (python3, pid 12)\n",
      .expect = "[That port is taken already. Listening now: 0.0.0.0:8000 (python3, pid 12). Stop "
                "the old "
                "server first (kill PID) or use another port.]\n" },
    { QUIET("address-in-use"), .cmd = "python3 -m http.server 8000 &", .out = "", .exit_code = 0 },

    /* what really happened after a success */
    { FIRE("ownership-after"), .cmd = "chmod g+w /srv/shared", .out = "", .exit_code = 0,
      .probe_out = "drwxrwxr-x root:root /srv/shared\n",
      .expect = "[Now (mode owner:group path): drwxrwxr-x root:root /srv/shared]\n",
      .probe_has = "<<< ' /srv/shared'" },
    { FIRE("ownership-after"), .cmd = "sudo chown -R www-data:www-data /var/www /srv/a && ls",
      .out = "", .exit_code = 0,
      .probe_out = "drwxr-xr-x www-data:www-data /var/www; drwxr-xr-x www-data:www-data /srv/a",
      .expect = "[Now (mode owner:group path): drwxr-xr-x www-data:www-data /var/www; ",
      .probe_has = "<<< ' /var/www /srv/a'" },
    { QUIET("ownership-after"), .cmd = "chmod g+w /nope",
      .out = "chmod: cannot access '/nope': No such file or "
             "directory\n",
      .exit_code = 1, .probe_rc = 1 },
    { QUIET("ownership-after"), .cmd = "ls -l /srv", .out = "drwxr-xr-x 2 root root 4096 shared\n",
      .exit_code = 0 },
    { FIRE("host-figures"), .cmd = "free -h", .out = "Mem: 23Gi 1.0Gi\n", .exit_code = 0,
      .expect = "[Those figures are the host's, not this sandbox's. This sandbox has 256 MiB of "
                "memory plus "
                "768 MiB of swap, 1 CPU, at most 512 processes and 2 GiB of disk.]\n" },
    { FIRE("host-figures"), .cmd = "nproc", .out = "4\n", .exit_code = 0,
      .expect = "[Those figures are" },
    { FIRE("host-figures"), .cmd = "df -h /work && grep MemTotal /proc/meminfo", .out = "x\n",
      .exit_code = 0, .expect = "[Those figures are" },
    { FIRE("host-figures"), .cmd = "cat /proc/cpuinfo | grep -c processor", .out = "4\n",
      .exit_code = 0, .expect = "[Those figures are" },
    { QUIET("host-figures"), .cmd = "echo free nproc", .out = "free nproc\n", .exit_code = 0 },
    { QUIET("host-figures"), .cmd = "freeze", .out = "", .exit_code = 0 },

    /* nobody at a terminal */
    { FIRE("passwd-no-tty"), .cmd = "passwd",
      .out = "New password: Password change has been aborted.\npasswd: "
             "Authentication token manipulation error\npasswd: password unchanged\n",
      .exit_code = 10,
      .expect =
          "[Nobody types here (no terminal, stdin closed), so passwd could not read a password: "
          "the "
          "password was NOT changed. Set it in the command: echo 'USER:PASSWORD' | chpasswd]\n" },
    { QUIET("passwd-no-tty"), .cmd = "echo 'root:pw' | chpasswd", .out = "", .exit_code = 0 },
    { FIRE("gpg-no-tty"), .cmd = "gpg -c f.txt",
      .out = "gpg: problem with the agent: Inappropriate ioctl for "
             "device\ngpg: error creating passphrase: Operation cancelled\n",
      .exit_code = 2,
      .expect = "[Nobody types here (no terminal), so gpg could not ask for a passphrase and did "
                "nothing." },
    { FIRE("gpg-no-tty"), .cmd = "gpg --quick-generate-key me@x",
      .out = "gpg: cannot open '/dev/tty': No such "
             "device or address\n",
      .exit_code = 2, .expect = "[Nobody types here (no terminal), so gpg" },
    { QUIET("gpg-no-tty"), .cmd = "gpg --batch --pinentry-mode loopback --passphrase x -c f.txt",
      .out = "", .exit_code = 0 },
    { FIRE("ssh-keygen-no-tty"), .cmd = "ssh-keygen -t ed25519",
      .out = "Generating public/private ed25519 key "
             "pair.\nEnter file in which to save the key (/root/.ssh/id_ed25519): ",
      .exit_code = 1,
      .expect = "[Nobody types here, so ssh-keygen could not ask where to save the key" },
    { QUIET("ssh-keygen-no-tty"), .cmd = "ssh-keygen -t ed25519 -N '' -f k",
      .out = "Your identification has "
             "been saved in k\n",
      .exit_code = 0 },
    { FIRE("mysql-secure-no-tty"), .cmd = "mysql_secure_installation",
      .out = "Enter current password for root "
             "(enter for none): \n",
      .exit_code = 1, .expect = "[Nobody types here, so mysql_secure_installation" },
    { QUIET("mysql-secure-no-tty"), .cmd = "mysql_secure_installation", .out = "All done!\n",
      .exit_code = 0 },
    { FIRE("no-tty"), .cmd = "docker run -it debian", .out = "the input device is not a TTY\n",
      .exit_code = 1, .expect = "[Nobody types here: there is no terminal and stdin is closed" },
    { QUIET("no-tty"), .cmd = "docker run debian true", .out = "", .exit_code = 0 },
    { FIRE("stdin-eof"), .cmd = "python3 sum.py",
      .out = "Traceback (most recent call last):\n  File \"sum.py\", "
             "line 1\nEOFError: EOF when reading a line\n",
      .exit_code = 1,
      .expect = "[The program read input, but stdin is closed here and nobody types. Give it its "
                "input in the "
                "command: printf 'LINE1\\nLINE2\\n' | CMD, or CMD < input.txt.]\n" },
    { FIRE("stdin-eof"), .cmd = "java Main",
      .out = "Exception in thread \"main\" java.util.NoSuchElementException"
             "\n\tat java.base/java.util.Scanner.throwFor(Scanner.java:945)\n",
      .exit_code = 1, .expect = "[The program read input, but stdin is closed" },
    { QUIET("stdin-eof"), .cmd = "python3 sum.py < in.txt", .out = "6\n", .exit_code = 0 },

    /* killed */
    { FIRE("killed-137"), .cmd = "python3 big.py", .out = "", .exit_code = 137,
      .expect = "[Killed for lack of memory: this sandbox has 256 MiB of memory plus 768 MiB of "
                "swap, and the "
                "program needed more. Make it use less memory; running it again as is ends the "
                "same way.]\n" },
    { FIRE("killed-137"), .cmd = "sleep 100 & kill -9 $!; wait $!", .out = "", .exit_code = 137,
      .probe_rc = 1,
      .expect = "[Killed with SIGKILL (exit 137), and not for lack of memory (this sandbox counts "
                "no out-of-memory kill): something sent it kill -9" },
    { QUIET("killed-137"), .cmd = "sleep 100 & kill -9 $!; wait", .out = "", .exit_code = 137,
      .probe_rc = 3 },
    { QUIET("killed-137"), .cmd = "python3 big.py", .out = "done\n", .exit_code = 0 },
    { FIRE("killed-line"), .cmd = "python3 big.py | head",
      .out = "bash: line 1:    52 Killed                  "
             "python3 big.py\n",
      .exit_code = 0, .expect = "[Killed for lack of memory: this sandbox has 256 MiB" },
    { QUIET("killed-line"), .cmd = "grep Killed log.txt", .out = "Killed 3 processes\n",
      .exit_code = 0 },
    { FIRE("segfault"), .cmd = "./a.out", .out = "", .exit_code = 139,
      .expect = "[Segmentation fault: the "
                "program read or wrote memory it does not own" },
    { QUIET("segfault"), .cmd = "./a.out", .out = "42\n", .exit_code = 0 },
    { FIRE("sigfpe"), .cmd = "./div", .out = "", .exit_code = 136,
      .expect = "[Floating point exception: the "
                "program divided an integer by zero" },
    { QUIET("sigfpe"), .cmd = "./div", .out = "3\n", .exit_code = 0 },

    /* shell scripts */
    { FIRE("shellcheck-run"), .cmd = "bash dups.sh /data", .out = "Found 0 groups of duplicates\n",
      .exit_code = 0, .probe_for = "shellcheck",
      .probe_out = "ShellCheck on dups.sh:\nline 9: note: count was modified in a subshell. "
                   "That change might be lost. [SC2031]\n",
      .expect = "[ShellCheck on dups.sh:\nline 9: note: count was modified in a subshell. That "
                "change might be "
                "lost. [SC2031]]\n",
      .probe_has = "f='dups.sh'" },
    { QUIET("shellcheck-run"), .cmd = "bash clean.sh", .out = "ok\n", .exit_code = 0,
      .probe_rc = 1 },
    { QUIET("shellcheck-run"), .cmd = "bash -c 'echo hi'", .out = "hi\n", .exit_code = 0 },
    { FIRE("shellcheck-run-direct"), .cmd = "chmod +x dups.sh; ./dups.sh /data", .out = "0\n",
      .exit_code = 0, .probe_for = "shellcheck",
      .probe_out =
          "ShellCheck on ./dups.sh:\nline 3: warning: x is referenced but not assigned. [SC2154]\n",
      .expect = "[ShellCheck on ./dups.sh:\nline 3: warning:", .probe_has = "f='./dups.sh'" },
    { QUIET("shellcheck-run-direct"), .cmd = "./clean.sh", .out = "ok\n", .exit_code = 0,
      .probe_rc = 1 },

    /* habits: clients that fail without a word */
    { FIRE("curl-refused"), .cmd = "curl -s http://localhost:3000/api", .out = "", .exit_code = 7,
      .probe_out = "3000\n127.0.0.1:5432 (postgres, pid 9)\n",
      .expect = "[curl could not connect (exit 7, it "
                "printed nothing), and nothing listens on port 3000 in this sandbox",
      .probe_has = "t='curl -s http://localhost:3000/api'" },
    { FIRE("curl-refused"), .cmd = "curl -s http://10.1.2.3/", .out = "", .exit_code = 7,
      .probe_rc = 1, .probe_out = "nothing\n",
      .expect = "[curl could not connect (exit 7): nothing accepted the connection" },
    { QUIET("curl-refused"), .cmd = "curl -s http://localhost:3000/api", .out = "",
      .exit_code = 0 },
    { QUIET("curl-refused"), .cmd = "grep -c x f", .out = "", .exit_code = 7,
      .probe_out = "3000\nnothing\n" },
    { FIRE("curl-http-error"), .cmd = "curl -sf http://localhost:8000/missing", .out = "",
      .exit_code = 22,
      .expect = "[curl -f got an HTTP error status (400 or above) and printed nothing (exit 22)" },
    { FIRE("curl-http-error"), .cmd = "curl --fail -s localhost:8000/x", .out = "", .exit_code = 22,
      .expect = "[curl -f got an HTTP error status" },
    { QUIET("curl-http-error"), .cmd = "curl -sf http://localhost:8000/", .out = "ok\n",
      .exit_code = 0 },
    { FIRE("curl-timeout"), .cmd = "curl -s -m 2 http://127.0.0.1:9000/", .out = "",
      .exit_code = 28, .probe_out = "127.0.0.1:9000 (python3, pid 4)\n",
      .expect = "[curl gave up waiting (exit 28, timed out)" },
    { QUIET("curl-timeout"), .cmd = "curl -s -m 2 http://127.0.0.1:9000/", .out = "hi\n",
      .exit_code = 0 },
    { FIRE("curl-empty-reply"), .cmd = "curl -s localhost:9000", .out = "", .exit_code = 52,
      .expect = "[The server closed the connection without answering (curl exit 52)" },
    { QUIET("curl-empty-reply"), .cmd = "curl -s localhost:9000", .out = "", .exit_code = 0 },
    { FIRE("curl-recv-error"), .cmd = "curl -s localhost:9000", .out = "", .exit_code = 56,
      .probe_out = "nothing\n",
      .expect = "[The connection broke while curl was receiving (exit 56)" },
    { QUIET("curl-recv-error"), .cmd = "wc -l f", .out = "", .exit_code = 56 },
    { FIRE("wget-failed"), .cmd = "wget -q http://localhost:8080/", .out = "", .exit_code = 4,
      .probe_out = "8080\nnothing\n",
      .expect = "[wget failed at the network level (exit 4): nothing listens on port 8080" },
    { QUIET("wget-failed"), .cmd = "wget -q http://localhost:8080/", .out = "", .exit_code = 0 },
    { FIRE("wget-tls"), .cmd = "wget -q https://localhost:8443/", .out = "", .exit_code = 5,
      .expect = "[wget could not check the server's TLS certificate (exit 5)" },
    { QUIET("wget-tls"), .cmd = "wget -q https://localhost:8443/", .out = "", .exit_code = 0 },
    { FIRE("wget-http-error"), .cmd = "wget -q http://localhost:8000/x", .out = "", .exit_code = 8,
      .expect = "[The server answered with an error status (wget exit 8" },
    { QUIET("wget-http-error"), .cmd = "wget -q http://localhost:8000/", .out = "",
      .exit_code = 0 },
    { FIRE("name-not-resolved"), .cmd = "python3 app.py",
      .out = "requests.exceptions.ConnectionError: "
             "HTTPConnectionPool(host='db', port=5432): Max retries exceeded with url: / (Caused "
             "by NameResolutionError"
             "(\"Failed to resolve 'db' ([Errno -3] Temporary failure in name resolution)\"))\n",
      .exit_code = 1, .probe_out = "db\n",
      .expect = "[No machine is called db here: this sandbox is one machine, not a Docker "
                "Compose network" },
    { FIRE("name-not-resolved"), .cmd = "curl http://api.exmaple.com/",
      .out = "curl: (6) Could not resolve host: "
             "api.exmaple.com\n",
      .exit_code = 6, .probe_rc = 2, .probe_out = "api.exmaple.com\n",
      .expect = "[The name api.exmaple.com does not resolve from this sandbox" },
    { QUIET("name-not-resolved"), .cmd = "grep 'name resolution' notes.txt",
      .out = "Temporary failure in name "
             "resolution\n",
      .exit_code = 0 },
    { FIRE("curl-no-host"), .cmd = "curl -s http://redis:6379/", .out = "", .exit_code = 6,
      .probe_out = "redis\n",
      .expect =
          "[curl could not resolve the host name (exit 6): no machine is called redis here." },
    { QUIET("curl-no-host"), .cmd = "curl -s http://redis:6379/", .out = "", .exit_code = 0,
      .probe_out = "redis\n" },
    { FIRE("psql-no-server"), .cmd = "psql -U postgres -c 'select 1'",
      .out = "psql: error: connection to server on "
             "socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory\n\tIs "
             "the server running "
             "locally and accepting connections on that socket?\n",
      .exit_code = 2, .probe_rc = 1,
      .expect = "[No PostgreSQL server is running in this sandbox, and none is installed" },
    { FIRE("psql-no-server"), .cmd = "psql -h localhost -U postgres",
      .out = "psql: error: connection to server at "
             "\"localhost\" (127.0.0.1), port 5432 failed: Connection refused\n",
      .exit_code = 2, .probe_rc = 0,
      .expect = "[No PostgreSQL server is running in this sandbox, so there was nothing to connect "
                "to. Start it "
                "first: service postgresql start" },
    { QUIET("psql-no-server"), .cmd = "psql -U postgres -c 'select 1'",
      .out = " ?column? \n----------\n        1\n", .exit_code = 0 },
    { FIRE("mysql-no-server"), .cmd = "mysql -u root -e 'show databases'",
      .out = "ERROR 2002 (HY000): Can't "
             "connect to local server through socket '/run/mysqld/mysqld.sock' (2)\n",
      .exit_code = 1, .probe_rc = 0,
      .expect = "[No MariaDB/MySQL server is running in this sandbox, so there was nothing to "
                "connect to. Start it "
                "first: service mariadb start" },
    { QUIET("mysql-no-server"), .cmd = "mysql -u root -e 'show databases'",
      .out = "Database\nmysql\n", .exit_code = 0 },

    /* habits: what a container cannot do */
    { FIRE("systemctl"), .cmd = "systemctl restart postgresql",
      .out = "bash: line 1: systemctl: command not "
             "found\n",
      .exit_code = 127, .probe_out = "postgresql\n", .probe_rc = 0, .probe_for = "init.d",
      .expect = "[systemctl cannot work here: this sandbox is a container with no systemd, and "
                "installing anything "
                "won't change that. postgresql has an init script: service postgresql start" },
    { FIRE("systemctl"), .cmd = "sudo systemctl daemon-reload",
      .out = "env: 'systemctl': No such file or "
             "directory\n",
      .exit_code = 127, .probe_rc = 1,
      .expect = "[systemctl cannot work here: this sandbox is a "
                "container with no systemd, and installing anything won't change that. Start the "
                "daemon's own program" },
    { FIRE("systemctl"), .cmd = "systemctl start myapp.service",
      .out = "System has not been booted with systemd "
             "as init system (PID 1). Can't operate.\n",
      .exit_code = 1, .probe_rc = 2, .probe_out = "myapp\n",
      .expect = "[systemctl cannot work here: this sandbox is a container with no systemd, and "
                "installing anything "
                "won't change that. myapp has no init script here" },
    { QUIET("systemctl"), .cmd = "echo systemctl", .out = "systemctl\n", .exit_code = 0 },
    { FIRE("service-unknown"), .cmd = "service nginx start", .out = "nginx: unrecognized service\n",
      .exit_code = 1, .probe_rc = 2, .probe_out = "nginx\n",
      .expect = "[There is no /etc/init.d/nginx, so service cannot start it" },
    { QUIET("service-unknown"), .cmd = "service nginx start", .out = "Starting nginx: nginx.\n",
      .exit_code = 0 },
    { FIRE("journalctl"), .cmd = "journalctl -u nginx -n 50",
      .out = "bash: line 1: journalctl: command not "
             "found\n",
      .exit_code = 127, .expect = "[There is no journal here" },
    { QUIET("journalctl"), .cmd = "cat journalctl.txt", .out = "x\n", .exit_code = 0 },
    { FIRE("container-in-container"), .cmd = "docker compose up -d",
      .out = "bash: line 1: docker: command not "
             "found\n",
      .exit_code = 127,
      .expect = "[You are inside a container already (this sandbox), so docker cannot "
                "run containers here" },
    { FIRE("container-in-container"), .cmd = "sudo docker ps",
      .out = "Cannot connect to the Docker daemon at "
             "unix:///var/run/docker.sock. Is the docker daemon running?\n",
      .exit_code = 1, .expect = "[You are inside a container already" },
    { QUIET("container-in-container"), .cmd = "cat Dockerfile", .out = "FROM debian\n",
      .exit_code = 0 },
    { FIRE("reboot"), .cmd = "reboot", .out = "bash: line 1: reboot: command not found\n",
      .exit_code = 127, .expect = "[This sandbox cannot be rebooted or shut down from inside" },
    { QUIET("reboot"), .cmd = "echo reboot later", .out = "reboot later\n", .exit_code = 0 },
    { FIRE("kernel-rights"), .cmd = "mount -t tmpfs none /mnt",
      .out = "mount: /mnt: permission denied.\n       "
             "dmesg(1) may have more information after failed mount system call.\n",
      .exit_code = 32, .expect = "[mount needs rights over the kernel" },
    { FIRE("kernel-rights"), .cmd = "sysctl -w net.core.somaxconn=1024",
      .out = "sysctl: permission denied on key "
             "\"net.core.somaxconn\"\n",
      .exit_code = 1, .expect = "[sysctl needs rights over the kernel" },
    { FIRE("kernel-rights"), .cmd = "modprobe fuse",
      .out = "bash: line 1: modprobe: command not found\n", .exit_code = 127,
      .expect = "[modprobe needs rights over the kernel" },
    { QUIET("kernel-rights"), .cmd = "mount", .out = "overlay on / type overlay (rw)\n",
      .exit_code = 0 },
    { QUIET("kernel-rights"), .cmd = "sysctl net.ipv4.nope",
      .out = "sysctl: cannot stat /proc/sys/net/ipv4/nope: "
             "No such file or directory\n",
      .exit_code = 255 },
    { FIRE("ulimit-raise"), .cmd = "ulimit -n 1000000 && ./server",
      .out = "bash: line 1: ulimit: open files: "
             "cannot modify limit: Operation not permitted\n",
      .exit_code = 1,
      .expect = "[This sandbox's limits are "
                "fixed from outside" },
    { QUIET("ulimit-raise"), .cmd = "ulimit -n 256 && ./server", .out = "up\n", .exit_code = 0 },

    /* habits: programs that want a terminal */
    { FIRE("screen-monitor"), .cmd = "top", .out = "", .exit_code = 1,
      .expect = "[top draws a live screen on a "
                "terminal, and there is none here" },
    { FIRE("screen-monitor"), .cmd = "htop", .out = "bash: line 1: htop: command not found\n",
      .exit_code = 127, .expect = "[htop draws a live screen on a terminal" },
    { QUIET("screen-monitor"), .cmd = "top -b -n 1 | head", .out = "top - 10:00:00\n",
      .exit_code = 1 },
    { FIRE("screen-editor"), .cmd = "nano main.py",
      .out = "bash: line 1: nano: command not found\n", .exit_code = 127,
      .expect = "[Nobody types here (no terminal, stdin closed), so a screen editor like nano "
                "cannot be used" },
    { FIRE("screen-editor"), .cmd = "vim app.js",
      .out = "Vim: Warning: Output is not to a terminal\n", .exit_code = 1,
      .expect = "[Nobody types here (no terminal, stdin closed), so a screen editor like vim" },
    { QUIET("screen-editor"), .cmd = "vim --version | head -1", .out = "VIM - Vi IMproved 9.1\n",
      .exit_code = 0 },
    { FIRE("watch-screen"), .cmd = "watch -n 1 'ls -l'",
      .out = "Error opening terminal: unknown.\n", .exit_code = 1,
      .expect = "[watch redraws a terminal screen, and there is none here" },
    { QUIET("watch-screen"), .cmd = "cat watch.log", .out = "x\n", .exit_code = 0 },
    { FIRE("watch-forever"), .cmd = "watch -n 1 date", .out = "Every 1.0s: date\n",
      .exit_code = 137, .timed_out = true,
      .expect = "[watch repeats a command for ever on a terminal screen, so it ran until the "
                "timeout" },
    { QUIET("watch-forever"), .cmd = "python3 watcher.py", .out = "watching\n", .exit_code = 137,
      .timed_out = true },
    { FIRE("follow-forever"), .cmd = "tail -f server.log", .out = "GET / 200\n", .exit_code = 137,
      .timed_out = true, .expect = "[tail -f never ends by itself (it follows for ever)" },
    { FIRE("follow-forever"), .cmd = "ping localhost", .out = "64 bytes from localhost\n",
      .exit_code = 137, .timed_out = true, .expect = "[ping never ends by itself" },
    { QUIET("follow-forever"), .cmd = "tail -n 5 server.log", .out = "GET / 200\n",
      .exit_code = 137, .timed_out = true },
    { QUIET("follow-forever"), .cmd = "ping -c 3 localhost", .out = "64 bytes\n", .exit_code = 137,
      .timed_out = true },
    { FIRE("terminal-multiplexer"), .cmd = "tmux new -d -s app 'node app.js'",
      .out = "bash: line 1: tmux: "
             "command not found\n",
      .exit_code = 127,
      .expect = "[tmux keeps programs running for a terminal, and "
                "there is none here (installing anything won't change that)" },
    { QUIET("terminal-multiplexer"), .cmd = "ls screenshots", .out = "a.png\n", .exit_code = 0 },
    { FIRE("apt-no-yes"), .cmd = "apt-get install nodejs",
      .out = "The following NEW packages will be installed:\n"
             "  nodejs\nContinue? [Y/n] Abort.\n",
      .exit_code = 1,
      .expect = "[Nobody types here, so apt could not ask "
                "whether to continue, and did nothing. Add -y" },
    { FIRE("apt-no-yes"), .cmd = "apt remove less",
      .out = "Do you want to continue? [Y/n] Abort.\n", .exit_code = 1,
      .expect = "[Nobody types here, so apt could not ask whether to continue" },
    { QUIET("apt-no-yes"), .cmd = "apt-get install -y nodejs", .out = "Setting up nodejs\n",
      .exit_code = 0 },
    { FIRE("crontab-edit"), .cmd = "crontab -e",
      .out = "no crontab for root - using an empty one\n", .exit_code = 1,
      .expect = "[Nobody types here, so crontab -e cannot open an editor" },
    { QUIET("crontab-edit"), .cmd = "crontab -l", .out = "no crontab for root\n", .exit_code = 1 },
    { FIRE("psql-password"), .cmd = "psql -h localhost -U app appdb",
      .out = "psql: error: connection to server at "
             "\"localhost\" (127.0.0.1), port 5432 failed: fe_sendauth: no password supplied\n",
      .exit_code = 2, .expect = "[Nobody types here, so psql could not ask for a password" },
    { QUIET("psql-password"), .cmd = "PGPASSWORD=x psql -h localhost -U app appdb -c 'select 1'",
      .out = "1\n", .exit_code = 0 },
    { FIRE("mysql-password"), .cmd = "mysql -u app -p appdb",
      .out = "Enter password: ERROR 1045 (28000): Access "
             "denied for user 'app'@'localhost' (using password: NO)\n",
      .exit_code = 1, .expect = "[No password was sent: nobody types here" },
    { QUIET("mysql-password"), .cmd = "mysql -u app -pX appdb",
      .out = "ERROR 1045 (28000): Access denied for user "
             "'app'@'localhost' (using password: YES)\n",
      .exit_code = 1 },
    { FIRE("git-credentials"), .cmd = "git push origin main",
      .out = "fatal: could not read Username for "
             "'https://github.com': No such device or address\n",
      .exit_code = 128,
      .expect = "[Nobody types here, so "
                "git could not ask for a user name or password for https://github.com, and did "
                "nothing." },
    { QUIET("git-credentials"), .cmd = "git push origin main", .out = "Everything up-to-date\n",
      .exit_code = 0 },
    { FIRE("ssh-host-key"), .cmd = "git clone git@example.com:me/repo.git",
      .out = "Host key verification "
             "failed.\nfatal: Could not read from remote repository.\n",
      .exit_code = 128,
      .expect = "[Nobody types here, so ssh could not ask you to accept the server's host key" },
    { QUIET("ssh-host-key"), .cmd = "ssh -o StrictHostKeyChecking=accept-new me@host true",
      .out = "", .exit_code = 0 },
    { FIRE("ssh-password"), .cmd = "ssh me@host uptime",
      .out = "me@host: Permission denied "
             "(publickey,password).\n",
      .exit_code = 255,
      .expect = "[Nobody types here, so ssh could not ask for a "
                "password" },
    { QUIET("ssh-password"), .cmd = "ssh me@host uptime", .out = "up 3 days\n", .exit_code = 0 },

    /* habits: a shell that does not last */
    { FIRE("shell-state-only"), .cmd = "cd app", .out = "", .exit_code = 0,
      .expect = "[That only changed this "
                "call's shell, and that shell is gone now" },
    { FIRE("shell-state-only"), .cmd = "source venv/bin/activate", .out = "", .exit_code = 0,
      .expect = "[That only changed this call's shell" },
    { FIRE("shell-state-only"), .cmd = "export NODE_ENV=production && cd /work/app", .out = "",
      .exit_code = 0, .expect = "[That only changed this call's shell" },
    { FIRE("shell-state-only"), .cmd = ". ~/.nvm/nvm.sh; nvm use 20", .out = "Now using node v20\n",
      .exit_code = 0, .expect = "[That only changed this call's shell" },
    { QUIET("shell-state-only"), .cmd = "cd app && npm test", .out = "ok\n", .exit_code = 0 },
    { QUIET("shell-state-only"), .cmd = "PORT=8000 python3 app.py", .out = "", .exit_code = 0 },
    { QUIET("shell-state-only"), .cmd = "cd nowhere",
      .out = "bash: line 1: cd: nowhere: No such file or "
             "directory\n",
      .exit_code = 1 },

    /* habits: servers */
    { FIRE("server-foreground"), .cmd = "node server.js", .out = "Server listening on port 3000\n",
      .exit_code = 137, .timed_out = true, .probe_out = "3000\n",
      .expect = "[That was a server: it listened on "
                "port 3000, and a server never ends by itself, so it ran until the timeout and was "
                "killed with it. Start it "
                "in the background: node server.js > server.log 2>&1 & then use it in later runs "
                "(curl -s localhost:3000/)" },
    { FIRE("server-foreground"), .cmd = "flask run", .out = " * Running on http://127.0.0.1:5000\n",
      .exit_code = 137, .timed_out = true, .probe_out = "5000\n",
      .expect = "[That was a server: it listened on "
                "port 5000" },
    { QUIET("server-foreground"), .cmd = "node server.js", .out = "Server listening on port 3000\n",
      .exit_code = 0, .probe_out = "3000\n" },
    { QUIET("server-foreground"), .cmd = "python3 slow.py", .out = "step 1\n", .exit_code = 137,
      .timed_out = true, .probe_out = "3000\n" },
    { FIRE("server-foreground-cmd"), .cmd = "python3 -m http.server 8000", .out = "",
      .exit_code = 137, .timed_out = true, .probe_out = "8000\n",
      .expect = "[That was a server (port 8000), and a server never ends "
                "by itself" },
    { QUIET("server-foreground-cmd"), .cmd = "python3 -m http.server 8000 &", .out = "",
      .exit_code = 0, .probe_rc = 1 },
};

#define NCASES (sizeof cases / sizeof cases[0])

static int run_case(const hcase_t *c, size_t idx)
{
    fake_t f = { .rc = c->probe_rc, .out = c->probe_out, .only = c->probe_for };
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run(c->cmd, c->out, strlen(c->out), c->exit_code, c->timed_out, fake_probe, NULL, &f,
                  &tmpl, &out);
    const char *got = out.buf ? out.buf : "";
    int bad = 0;
    if (c->quiet) {
        if (out.len) {
            fprintf(stderr, "case %zu (%s, quiet) got: %s", idx, c->name, got);
            bad = 1;
        }
    } else {
        if (strncmp(got, c->expect, strlen(c->expect)) != 0) {
            fprintf(stderr, "case %zu (%s)\n  want: %s\n  got:  %s\n", idx, c->name, c->expect,
                    got);
            bad = 1;
        }
        /* One bracketed line (ShellCheck's may span several). */
        bool one =
            out.len >= 3 && got[0] == '[' && got[out.len - 2] == ']' && got[out.len - 1] == '\n' &&
            (strncmp(c->name, "shellcheck", 10) == 0 || strchr(got, '\n') + 1 == got + out.len);
        if (!one) {
            fprintf(stderr, "case %zu (%s): not one bracketed line: %s", idx, c->name, got);
            bad = 1;
        }
    }
    if (c->probe_has && !strstr(f.last, c->probe_has)) {
        fprintf(stderr, "case %zu (%s): probe lacks %s:\n%s\n", idx, c->name, c->probe_has, f.last);
        bad = 1;
    }
    textbuf_free(&out);
    return bad;
}

static void table_cases(void **state)
{
    (void)state;
    size_t failed = 0;
    for (size_t i = 0; i < NCASES; i++)
        failed += run_case(&cases[i], i);
    assert_int_equal(failed, 0);
}

/* Every entry has a case where it speaks and one where it stays silent. */
static void every_entry_tested(void **state)
{
    (void)state;
    for (size_t i = 0; hints_entry_name(i); i++) {
        const char *name = hints_entry_name(i);
        if (strncmp(name, "shellcheck-write", 16) == 0)
            continue; /* tested by write_hints below */
        bool fire = false, quiet = false;
        for (size_t k = 0; k < NCASES; k++)
            if (strcmp(cases[k].name, name) == 0) {
                if (cases[k].quiet)
                    quiet = true;
                else
                    fire = true;
            }
        if (!fire || !quiet) {
            fprintf(stderr, "hint %s lacks a %s case\n", name, fire ? "quiet" : "firing");
            fail();
        }
    }
    for (size_t k = 0; k < NCASES; k++) {
        bool known = false;
        for (size_t i = 0; hints_entry_name(i); i++)
            known |= strcmp(cases[k].name, hints_entry_name(i)) == 0;
        assert_true(known);
    }
}

static void table_is_valid(void **state)
{
    (void)state;
    char err[512] = "";
    int rc = hints_check(err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
}

/* No hint for a timed-out run, nor without a probe for entries needing one. */
static void timeouts_and_no_probe(void **state)
{
    (void)state;
    fake_t f = { .rc = 0, .out = "x" };
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run("python3 big.py", "", 0, 137, true, fake_probe, NULL, &f, &tmpl, &out);
    assert_int_equal(out.len, 0);
    assert_int_equal(f.calls, 0);
    hints_for_run("python3 x.py",
                  "python3: can't open file '/work/x.py': [Errno 2] No such file or directory\n",
                  75, 2, false, NULL, NULL, NULL, &tmpl, &out);
    assert_int_equal(out.len, 0);
    /* Entries without a probe still speak. */
    hints_for_run("./a.out", "", 0, 139, false, NULL, NULL, NULL, &tmpl, &out);
    assert_non_null(strstr(out.buf, "[Segmentation fault"));
    textbuf_free(&out);
    /* A probe that could not run says nothing. */
    fake_t broken = { .rc = -1 };
    textbuf_init(&out);
    hints_for_run("chmod 755 /srv", "", 0, 0, false, fake_probe, NULL, &broken, &tmpl, &out);
    assert_int_equal(out.len, 0);
    assert_int_equal(broken.calls, 1);
    textbuf_free(&out);
}

/* The limits come from the configuration. */
static void limits_from_config(void **state)
{
    (void)state;
    hints_limits_t saved = tmpl;
    tmpl = (hints_limits_t){ .memory = 96 << 20,
                             .memory_swap = 192 << 20,
                             .nano_cpus = 500000000,
                             .pids = 100,
                             .disk_cap = INT64_C(1536) << 20 };
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run("nproc", "4\n", 2, 0, false, NULL, NULL, NULL, &tmpl, &out);
    assert_string_equal(
        out.buf, "[Those figures are the host's, not this sandbox's. This sandbox has 96 MiB of "
                 "memory plus 96 MiB of swap, 0.5 CPU, at most 100 processes and 1.5 GiB of "
                 "disk.]\n");
    textbuf_free(&out);
    tmpl.memory_swap = 96 << 20;
    tmpl.nano_cpus = 2000000000;
    textbuf_init(&out);
    hints_for_run("free -m", "x\n", 2, 0, false, NULL, NULL, NULL, &tmpl, &out);
    assert_non_null(strstr(out.buf, "96 MiB of memory and no swap, 2 CPUs,"));
    textbuf_free(&out);
    tmpl = saved;
}

/* A fake of the sandbox's cgroup, as its agent reads it. */
typedef struct {
    int rc, calls;
    hints_limits_t lim;
} fake_limits_t;

static int fake_limits(void *ctx, hints_limits_t *out)
{
    fake_limits_t *f = ctx;
    f->calls++;
    *out = f->lim;
    return f->rc;
}

/* The limits the sandbox really has win over the configuration, are asked
 * for only by a text that says them, and the configuration speaks when
 * they cannot be read. */
static void limits_from_sandbox(void **state)
{
    (void)state;
    fake_limits_t f = {
        .rc = 0,
        .lim = { .memory = 128 << 20, .memory_swap = 128 << 20, .nano_cpus = 1500000000, .pids = 0 }
    };
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run("nproc", "4\n", 2, 0, false, NULL, fake_limits, &f, &tmpl, &out);
    assert_string_equal(
        out.buf, "[Those figures are the host's, not this sandbox's. This sandbox has 128 MiB of "
                 "memory and no swap, 1.5 CPUs, no process limit and 2 GiB of disk.]\n");
    assert_int_equal(f.calls, 1);
    textbuf_free(&out);
    textbuf_init(&out);
    hints_for_run("echo hi", "hi\n", 3, 0, false, NULL, fake_limits, &f, &tmpl, &out);
    assert_int_equal(out.len, 0);
    assert_int_equal(f.calls, 1);
    f.rc = -1;
    hints_for_run("free -m", "x\n", 2, 0, false, NULL, fake_limits, &f, &tmpl, &out);
    assert_non_null(
        strstr(out.buf, "256 MiB of memory plus 768 MiB of swap, 1 CPU, at most 512 processes"));
    assert_int_equal(f.calls, 2);
    textbuf_free(&out);
}

/* ---- ShellCheck on writes ------------------------------------------------------- */

static void write_hints(void **state)
{
    (void)state;
    const char *report =
        "ShellCheck on /work/dups.sh:\nline 9: note: count was modified in a subshell. "
        "That change might be lost. [SC2031]\n";
    fake_t f = { .rc = 0, .out = report };
    textbuf_t out;
    textbuf_init(&out);
    const char *script =
        "#!/bin/bash\ncount=0\nfind . | while read f; do count=$((count+1)); done\necho $count\n";
    hints_for_write("/work/dups.sh", script, strlen(script), fake_probe, &f, &out);
    assert_int_equal(f.calls, 1);
    assert_non_null(strstr(f.last, "f='/work/dups.sh'"));
    assert_string_equal(out.buf,
                        "[ShellCheck on /work/dups.sh:\nline 9: note: count was modified in a "
                        "subshell. That change might be lost. [SC2031]]\n");
    textbuf_free(&out);

    /* A #! line naming a shell makes a script without .sh one too. */
    f.calls = 0;
    textbuf_init(&out);
    hints_for_write("/work/dups", "#!/usr/bin/env bash\necho hi\n", 27, fake_probe, &f, &out);
    assert_int_equal(f.calls, 1);
    assert_true(out.len > 0);
    textbuf_free(&out);

    /* Nothing found: nothing said. */
    fake_t clean = { .rc = 1 };
    textbuf_init(&out);
    hints_for_write("/work/ok.sh", "#!/bin/sh\necho \"$1\"\n", 20, fake_probe, &clean, &out);
    assert_int_equal(clean.calls, 1);
    assert_int_equal(out.len, 0);

    /* Not shell scripts: ShellCheck is not even asked. */
    fake_t none = { .rc = 0, .out = "x" };
    hints_for_write("/work/x.py", "#!/usr/bin/env python3\nprint(1)\n", 32, fake_probe, &none,
                    &out);
    hints_for_write("/work/notes.txt", "notes\n#!/bin/sh\n", 16, fake_probe, &none, &out);
    hints_for_write("/work/main.c", "int main(void) { return 0; }\n", 29, fake_probe, &none, &out);
    assert_int_equal(none.calls, 0);
    assert_int_equal(out.len, 0);
    textbuf_free(&out);
}

/* ---- probes for real, with bash in a temporary folder ---------------------------- */

static char tmpdir[256];

static int real_probe(void *ctx, const char *command, textbuf_t *out)
{
    (void)ctx;
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        close(fds[0]);
        if (chdir(tmpdir))
            _exit(126);
        execlp("bash", "bash", "-c", command, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        textbuf_append(out, buf, (size_t)n);
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_tmp(const char *name, const char *content, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(content, fp);
    fclose(fp);
    chmod(path, mode);
}

static char *run_real(const char *cmd, const char *output, int exit_code)
{
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run(cmd, output, strlen(output), exit_code, false, real_probe, NULL, NULL, &tmpl,
                  &out);
    if (!out.buf)
        textbuf_puts(&out, "");
    return textbuf_take(&out, NULL);
}

static void probes_for_real(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_hints.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char want[1024];
    char *got;

    /* A missing source file, and an empty one. */
    got = run_real("kotlinc NoSuchFile42.kt -d t.jar",
                   "error: source file or directory not found: "
                   "NoSuchFile42.kt\n",
                   1);
    snprintf(
        want, sizeof want,
        "[NoSuchFile42.kt does not exist (no file %s/NoSuchFile42.kt), so there was "
        "nothing to compile or run. Write it first (write_file), then run this command again.]\n",
        tmpdir);
    assert_string_equal(got, want);
    free(got);
    write_tmp("empty.py", "", 0644);
    got = run_real("python3 empty.py", "", 0);
    assert_string_equal(
        got, "[empty.py is empty (0 bytes), so there was nothing to compile or run. Write it "
             "first (write_file), then run this command again.]\n");
    free(got);
    write_tmp("full.py", "print(1)\n", 0644);
    got = run_real("python3 full.py > out.txt", "", 0);
    assert_string_equal(got, "");
    free(got);
    /* After a cd, relative paths are not checked. */
    got = run_real("cd /tmp && python3 NoSuchFile42.py",
                   "python3: can't open file '/tmp/NoSuchFile42.py': "
                   "[Errno 2] No such file or directory\n",
                   2);
    assert_string_equal(got, "");
    free(got);

    /* Not executable: the #! line names the interpreter. */
    write_tmp("np.sh", "#!/bin/bash\necho hi\n", 0644);
    got = run_real("./np.sh", "bash: line 1: ./np.sh: Permission denied\n", 126);
    assert_string_equal(
        got, "[./np.sh is not executable. Make it so with chmod +x ./np.sh, or run it with "
             "its interpreter: bash ./np.sh]\n");
    free(got);
    write_tmp("tool.py", "#!/usr/bin/env python3\nprint(1)\n", 0644);
    got = run_real("./tool.py", "bash: line 1: ./tool.py: Permission denied\n", 126);
    assert_non_null(strstr(got, "its interpreter: python3 ./tool.py]"));
    free(got);

    /* CR LF line endings. */
    write_tmp("crlf.sh", "#!/bin/bash\r\necho hi\r\n", 0755);
    got = run_real("./crlf.sh",
                   "bash: line 1: ./crlf.sh: cannot execute: required file not found\n", 127);
    assert_non_null(strstr(got, "[./crlf.sh has Windows line endings (CR LF)"));
    free(got);

    /* go without go.mod: one .go file here gives the exact command. */
    write_tmp("main.go", "package main\nfunc main() {}\n", 0644);
    got = run_real("go build",
                   "go: go.mod file not found in current directory or any parent directory; see "
                   "'go help modules'\n",
                   1);
    assert_non_null(
        strstr(got, "Build the file itself: go build -o main main.go (or go run FILE.go)"));
    free(got);

    /* chmod: the mode after, from stat. */
    write_tmp("shared.txt", "x", 0664);
    got = run_real("chmod 664 shared.txt", "", 0);
    assert_true(strncmp(got, "[Now (mode owner:group path): -rw-rw-r-- ", 41) == 0);
    assert_non_null(strstr(got, " shared.txt]\n"));
    free(got);

    /* Which package has a missing command; a file that is not a command. */
    got = run_real("ssh-keygen -t ed25519", "bash: line 1: ssh-keygen: command not found\n", 127);
    assert_string_equal(
        got, "[ssh-keygen is not installed in this sandbox. Install it: apt-get update && "
             "apt-get install -y openssh-client]\n");
    free(got);
    got = run_real("full.py", "bash: line 1: full.py: command not found\n", 127);
    assert_string_equal(
        got, "[full.py is a file here, not an installed command: run it as ./full.py.]\n");
    free(got);

    /* npm's and pip's command-line tools come from npm and pip, not apt. */
    got = run_real("ng new app", "bash: line 1: ng: command not found\n", 127);
    assert_string_equal(got, "[ng is not installed in this sandbox. Install it: npm install -g "
                             "@angular/cli]\n");
    free(got);
    got = run_real("flask run", "bash: line 1: flask: command not found\n", 127);
    assert_string_equal(got, "[flask is not installed in this sandbox. Install it: pip install "
                             "flask]\n");
    free(got);
    /* Words that are no program's name never reach apt. */
    static const struct {
        const char *cmd, *out, *says;
    } notcmd[] = {
        { "x = 5", "bash: line 1: x: command not found\n", "in bash an assignment has no spaces" },
        { "total += 1", "bash: line 1: total: command not found\n", "an assignment has no spaces" },
        { "bash run.sh", "run.sh: line 4: import: command not found\n", "a word of program code" },
        { "brew install jq", "bash: line 1: brew: command not found\n",
          "another system's package manager" },
        { "ipconfig", "bash: line 1: ipconfig: command not found\n", "ip addr" },
        { "open index.html", "bash: line 1: open: command not found\n", "has none" },
        { "./go.sh", "./go.sh: line 2: [[x: command not found\n", "not a program's name" },
    };
    for (size_t i = 0; i < sizeof notcmd / sizeof notcmd[0]; i++) {
        got = run_real(notcmd[i].cmd, notcmd[i].out, 127);
        /* (brew's text names apt-get itself: Debian's packages, not brew's) */
        if (!strstr(got, notcmd[i].says) || strstr(got, "apt-cache search") ||
            strstr(got, "not installed") ||
            (strstr(got, "apt-get install") && strncmp(notcmd[i].cmd, "brew", 4) != 0))
            fail_msg("%s: %s", notcmd[i].cmd, got);
        free(got);
    }

    /* Python import names that differ from pip names. */
    got = run_real("python3 -c 'import sklearn'",
                   "ModuleNotFoundError: No module named 'sklearn'\n", 1);
    assert_non_null(strstr(got, "pip install scikit-learn;"));
    free(got);

    /* A port nobody listens on (port 1 is never used by a server here). */
    got = run_real("curl -sS http://127.0.0.1:1/",
                   "curl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: "
                   "Could not connect to server\n",
                   7);
    assert_true(strncmp(got,
                        "[Nothing listens on port 1 in this sandbox, so the connection was refused",
                        73) == 0);
    free(got);
    got = run_real("python3 -c \"import socket; socket.create_connection(('localhost', 1))\"",
                   "ConnectionRefusedError: [Errno 111] Connection refused\n", 1);
    assert_true(strncmp(got, "[Nothing listens on port 1 in this sandbox", 42) == 0);
    free(got);

    /* ShellCheck (when the host has it): the pipeline-subshell bug. */
    if (system("command -v shellcheck >/dev/null 2>&1") == 0) {
        const char *dups = "#!/bin/bash\ncount=0\nfind . -type f | while read -r f; do\n"
                           "  count=$((count + 1))\ndone\necho \"$count files\"\n";
        write_tmp("dups.sh", dups, 0755);
        got = run_real("bash dups.sh", "0 files\n", 0);
        assert_true(strncmp(got, "[ShellCheck on dups.sh:\n", 24) == 0);
        assert_non_null(strstr(got, "[SC2031]"));
        assert_non_null(strstr(got, "done < <(cmd) instead.)]\n"));
        free(got);
        write_tmp("clean.sh", "#!/bin/sh\necho \"$1\"\n", 0755);
        got = run_real("./clean.sh x", "x\n", 0);
        assert_string_equal(got, "");
        free(got);
    }

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* ---- habits: the probes for real, and no install that cannot help ----------------- */

/* Run with the real probe on a timed-out run. */
static char *run_real_timeout(const char *cmd, const char *output)
{
    textbuf_t out;
    textbuf_init(&out);
    hints_for_run(cmd, output, strlen(output), 137, true, real_probe, NULL, NULL, &tmpl, &out);
    if (!out.buf)
        textbuf_puts(&out, "");
    return textbuf_take(&out, NULL);
}

static void habits_for_real(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_hints.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    /* The unit a systemctl names, and whether it has an init script here. */
    char *got = run_real("systemctl restart no-such-daemon42.service",
                         "bash: line 1: systemctl: command "
                         "not found\n",
                         127);
    if (!strstr(got, "no-such-daemon42 has no init script here"))
        fail_msg("%s", got);
    free(got);
    got = run_real("service no-such-daemon42 start", "no-such-daemon42: unrecognized service\n", 1);
    assert_non_null(
        strstr(got, "[There is no /etc/init.d/no-such-daemon42, so service cannot start it"));
    free(got);
    /* The port of a server, from what it printed, else from its command. */
    got = run_real_timeout("node app.js", "App listening at http://localhost:3456\n");
    assert_non_null(strstr(got, "it listened on port 3456"));
    free(got);
    got = run_real_timeout("python3 -m http.server 8123", "");
    assert_non_null(strstr(got, "That was a server (port 8123)"));
    free(got);
    got = run_real_timeout("uvicorn main:app --port 9001",
                           "INFO:     Waiting for application startup.\n");
    assert_non_null(strstr(got, "That was a server (port 9001)"));
    free(got);
    /* The host a lookup failed on: a Compose name, or a real one. */
    got = run_real("curl -s http://db:5432/", "", 6);
    assert_non_null(strstr(got, "no machine is called db here"));
    free(got);
    got = run_real(
        "python3 -c 'import urllib.request as u; u.urlopen(\"http://api.exmaple.org/x\")'",
        "urllib.error.URLError: <urlopen error [Errno -2] Name or service not known>\n", 1);
    assert_non_null(strstr(got, "[The name api.exmaple.org does not resolve from this sandbox"));
    free(got);
    assert_int_equal(rmdir(tmpdir), 0);
}

/* What cannot work in a container never gets "install it": not from its
 * own entry, nor from the command-not-found one behind it. */
static void never_install_what_cannot_work(void **state)
{
    (void)state;
    static const struct {
        const char *cmd, *out;
        int rc;
    } runs[] = {
        { "systemctl restart postgresql", "bash: line 1: systemctl: command not found\n", 127 },
        { "sudo systemctl enable --now nginx", "env: 'systemctl': No such file or directory\n",
          127 },
        { "journalctl -xe", "bash: line 1: journalctl: command not found\n", 127 },
        { "docker run -d redis", "bash: line 1: docker: command not found\n", 127 },
        { "podman ps", "bash: line 1: podman: command not found\n", 127 },
        { "reboot", "bash: line 1: reboot: command not found\n", 127 },
        { "shutdown -r now", "bash: line 1: shutdown: command not found\n", 127 },
        { "modprobe overlay", "bash: line 1: modprobe: command not found\n", 127 },
        { "htop", "bash: line 1: htop: command not found\n", 127 },
        { "vim main.c", "bash: line 1: vim: command not found\n", 127 },
        { "nano main.c", "bash: line 1: nano: command not found\n", 127 },
        { "emacs main.c", "bash: line 1: emacs: command not found\n", 127 },
        { "top", "", 1 },
        { "watch -n 1 date", "Error opening terminal: unknown.\n", 1 },
        { "tmux new -s x", "bash: line 1: tmux: command not found\n", 127 },
        { "screen -S x", "bash: line 1: screen: command not found\n", 127 },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        fake_t f = { .rc = 1 };
        textbuf_t out;
        textbuf_init(&out);
        hints_for_run(runs[i].cmd, runs[i].out, strlen(runs[i].out), runs[i].rc, false, fake_probe,
                      NULL, &f, &tmpl, &out);
        const char *t = out.buf ? out.buf : "";
        if (!out.len || strstr(t, "apt-get install") || strstr(t, "apt-cache search") ||
            strstr(t, "not installed"))
            fail_msg("%s: %s", runs[i].cmd, t);
        assert_non_null(strstr(t, "won't change that"));
        textbuf_free(&out);
    }
}

/* ---- output that is not text (output.c) ---------------------------------------------- */

static char *render_bytes(const char *data, size_t len, size_t cap)
{
    capbuf_t c;
    assert_int_equal(capbuf_init(&c, cap), 0);
    capbuf_append(&c, data, len);
    textbuf_t t;
    textbuf_init(&t);
    hints_output_render(&c, &t);
    capbuf_free(&c);
    if (!t.buf)
        textbuf_puts(&t, "");
    return textbuf_take(&t, NULL);
}

/* No byte the model reads is a control byte other than a newline. */
static void assert_no_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            fail_msg("control byte 0x%02x in: %s", *p, s);
}

static void binary_output(void **state)
{
    (void)state;
    /* A compiled program: kind, size, a hex preview, no raw bytes. */
    char elf[20000];
    for (size_t i = 0; i < sizeof elf; i++)
        elf[i] = (char)(i * 7 % 256);
    memcpy(elf,
           "\x7f"
           "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0",
           16);
    char *got = render_bytes(elf, sizeof elf, 4096);
    const char *head = "[The output is binary, not text: 20000 bytes of an ELF program or "
                       "library (a compiled Linux binary: run it, do not print it). Its raw "
                       "bytes are not shown; the first 64 in hex:]\n"
                       "00000000: 7f45 4c46 0201 0100 0000 0000 0000 0000  .ELF............\n";
    if (strncmp(got, head, strlen(head)) != 0)
        fail_msg("%s", got);
    assert_non_null(strstr(got, "[To look inside, use a tool that prints text: file FILE, xxd "
                                "FILE | head, strings FILE | head."));
    assert_no_control(got);
    assert_int_equal(strlen(got) < 1200, 1);
    free(got);
    /* Random bytes without a NUL: invalid UTF-8 makes them binary too. */
    char rnd[300];
    unsigned x = 12345;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (char)(0x80 | (x >> 16));
    }
    got = render_bytes(rnd, sizeof rnd, 65536);
    assert_true(strncmp(got, "[The output is binary, not text: 300 bytes of binary data.", 58) ==
                0);
    assert_no_control(got);
    free(got);
    /* Text from Windows: UTF-16 without a byte order mark, and a PNG. */
    const char u16[] = "h\0e\0l\0l\0o\0 \0w\0o\0r\0l\0d\0\r\0\n\0";
    got = render_bytes(u16, sizeof u16 - 1, 65536);
    assert_non_null(strstr(got, "bytes of UTF-16 text without a byte order mark, from Windows "
                                "(iconv -f UTF-16LE -t UTF-8 FILE turns it into text)"));
    free(got);
    got = render_bytes("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, 65536);
    assert_non_null(strstr(got, "16 bytes of a PNG image."));
    free(got);
    /* Text stays as it is: UTF-8, CR LF line ends. */
    const char *plain = "hello\nw\xc3\xb6rld\r\nline\r\n";
    got = render_bytes(plain, strlen(plain), 65536);
    assert_string_equal(got, plain);
    free(got);
    /* Colours are taken out, a redrawn progress line keeps its last state,
     * another control byte is shown as ^X. */
    const char *tty = "\x1b[1;31mred\x1b[0m ok\n10%\r50%\r100%\ndone\x07\n\x1b]0;title\x07x\n";
    got = render_bytes(tty, strlen(tty), 65536);
    assert_string_equal(got, "red ok\n100%\ndone^G\nx\n");
    free(got);
    assert_false(hints_output_is_binary("caf\xc3\xa9 au lait\n", 14));
    assert_true(hints_output_is_binary("a\0b", 3));
    got = render_bytes("", 0, 64);
    assert_string_equal(got, "");
    free(got);
    /* Bytes held whole (run_code's output): the same description. */
    textbuf_t b;
    textbuf_init(&b);
    hints_output_render_bytes("\x1f\x8b\x08\0\0\0", 6, &b);
    assert_true(strncmp(b.buf, "[The output is binary, not text: 6 bytes of gzip-compressed data",
                        64) == 0);
    textbuf_free(&b);
    hints_output_render_bytes("ok\x1b[0m\n", 7, &b);
    assert_string_equal(b.buf, "ok\n");
    textbuf_free(&b);
}

/* ---- retry memory ------------------------------------------------------------------ */

static void retry_memory(void **state)
{
    (void)state;
    hints_retry_t *s = hints_retry_new();
    assert_non_null(s);
    const char *err = "error[E0308]: mismatched types\n";
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 1, err, strlen(err)));
    assert_true(hints_retry_note(s, "c1", "rustc coin_change.rs", 1, err, strlen(err)));
    assert_true(hints_retry_note(s, "c1", "rustc coin_change.rs", 1, err, strlen(err)));
    /* Another chat has its own memory. */
    assert_false(hints_retry_note(s, "c2", "rustc coin_change.rs", 1, err, strlen(err)));
    /* A write clears it: re-running after a fix is not a pointless retry. */
    hints_retry_clear(s, "c1");
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 1, err, strlen(err)));
    /* A different failure is not "the same failure". */
    const char *err2 = "error[E0425]: cannot find value `dp`\n";
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 1, err2, strlen(err2)));
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 2, err2, strlen(err2)));
    /* Other commands in between do not hide a repeat. */
    assert_false(hints_retry_note(s, "c1", "cat coin_change.rs", 0, "fn main", 7));
    assert_false(hints_retry_note(s, "c1", "ls", 2, "x", 1));
    assert_true(hints_retry_note(s, "c1", "rustc coin_change.rs", 2, err2, strlen(err2)));
    /* A success forgets the command. */
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 0, "", 0));
    assert_false(hints_retry_note(s, "c1", "rustc coin_change.rs", 2, err2, strlen(err2)));
    /* Many chats: memory stays bounded, the newest are kept. */
    char conv[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(conv, sizeof conv, "many-%d", i);
        hints_retry_note(s, conv, "false", 1, "", 0);
    }
    assert_true(hints_retry_note(s, "many-4999", "false", 1, "", 0));
    hints_retry_clear(s, "never-seen");
    hints_retry_free(&s);
    assert_null(s);
    hints_retry_free(&s);
    assert_string_equal(HINTS_RETRY_LINE,
                        "[Same command, same failure as last time: running it again won't "
                        "change it. Change the code or the command first.]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_valid),     cmocka_unit_test(table_cases),
        cmocka_unit_test(every_entry_tested), cmocka_unit_test(timeouts_and_no_probe),
        cmocka_unit_test(limits_from_config), cmocka_unit_test(limits_from_sandbox),
        cmocka_unit_test(write_hints),        cmocka_unit_test(probes_for_real),
        cmocka_unit_test(habits_for_real),    cmocka_unit_test(never_install_what_cannot_work),
        cmocka_unit_test(retry_memory),       cmocka_unit_test(binary_output),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hints_shutdown();
    return rc;
}
