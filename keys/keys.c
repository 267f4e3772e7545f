/* keys.c -- talkback-keys: makes the CURVE keys of a tcp:// hub.
 *
 *   talkback-keys DIR              the hub's keys and one client
 *                                  certificate per worker kind
 *   talkback-keys DIR KIND NAME [HOST]
 *                                  one more client certificate, for a
 *                                  worker of KIND named NAME (a judge on
 *                                  another host: `judge judge-host2`); a
 *                                  sandbox or reaper key is made for one
 *                                  host, HOST or NAME without "KIND-"
 *                                  (`sandbox beta`, `sandbox sandbox-beta`:
 *                                  host beta), named in its metadata
 *
 * What it writes (hubkeys.h has the names):
 *   DIR/hub.key              the hub's public certificate: every worker
 *   DIR/hub.key_secret       the hub's secret certificate: the gateway only
 *   DIR/allowed/NAME.key     a worker's public certificate, with what it
 *                            may do: the allow list the gateway reads
 *   DIR/NAME.key_secret      a worker's secret certificate: that worker only
 *
 * Files that exist are kept, never replaced: a deployment runs it on every
 * start, and a key that changed under a running judge would lock it out.
 * Secret files are mode 0600 and DIR 0700, whatever the umask.
 */
#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub/hubkeys.h"
#include "proto/ops.h"

static const char *keys_dir;

/* DIR/a + b into out ("" b allowed); exits when too long. */
static void keys_path(char *out, size_t n, const char *a, const char *b)
{
    if (snprintf(out, n, "%s/%s%s", keys_dir, a, b) >= (int)n) {
        fprintf(stderr, "talkback-keys: %s is too long a folder name\n", keys_dir);
        exit(1);
    }
}

/* Whether a file is there (existing keys are never replaced). */
static bool keys_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Write a certificate's public (secret == false) or secret file. */
static int keys_save(zcert_t *cert, const char *path, bool secret)
{
    int rc = secret ? zcert_save_secret(cert, path) : zcert_save_public(cert, path);
    if (rc != 0 || chmod(path, secret ? 0600 : 0644) != 0) {
        fprintf(stderr, "talkback-keys: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    printf("wrote %s\n", path);
    return 0;
}

/* Keep the certificate in sec, or make one named name (with kinds,
 * submit and host when given) and save it there; then write its public
 * half to pub unless pub exists.  A file in sec that is no certificate is
 * an error: a key is never replaced. */
static int keys_keep_or_make(const char *sec, const char *pub, const char *name, const char *kind,
                             const char *submit, const char *host)
{
    zcert_t *cert = keys_exists(sec) ? zcert_load(sec) : NULL;
    if (keys_exists(sec) && !cert) {
        fprintf(stderr, "talkback-keys: %s is not a certificate; move it away first\n", sec);
        return -1;
    }
    int rc = 0;
    if (!cert) {
        cert = zcert_new();
        if (!cert)
            return -1;
        zcert_set_meta(cert, HUBKEYS_META_NAME, "%s", name);
        if (kind)
            zcert_set_meta(cert, HUBKEYS_META_KINDS, "%s", kind);
        if (submit)
            zcert_set_meta(cert, HUBKEYS_META_SUBMIT, "%s", submit);
        if (host)
            zcert_set_meta(cert, HUBKEYS_META_HOST, "%s", host);
        rc = keys_save(cert, sec, true);
    } else {
        const char *had = zcert_meta(cert, HUBKEYS_META_HOST);
        printf("kept %s\n", sec);
        if (host && (!had || strcmp(had, host) != 0))
            fprintf(stderr,
                    "talkback-keys: %s was made before and is for %s%s, not for host %s: to bind "
                    "it, remove it and %s, run this again and copy the new key to its host\n",
                    sec, had ? "host " : "any host", had ? had : "", host, pub);
    }
    if (rc == 0 && !keys_exists(pub))
        rc = keys_save(cert, pub, false);
    zcert_destroy(&cert);
    return rc;
}

/* The hub's own certificate. */
static int keys_hub(void)
{
    char pub[4096], sec[4096];
    keys_path(pub, sizeof pub, HUBKEYS_SERVER_PUBLIC, "");
    keys_path(sec, sizeof sec, HUBKEYS_SERVER_SECRET, "");
    return keys_keep_or_make(sec, pub, KIND_HUB, NULL, NULL, NULL);
}

/* A worker's certificate: NAME.key_secret and allowed/NAME.key, for one
 * host when host is not NULL. */
static int keys_client(const char *kind, const char *name, const char *submit, const char *host)
{
    char pub[4096], sec[4096];
    keys_path(sec, sizeof sec, name, HUBKEYS_SECRET_SUFFIX);
    keys_path(pub, sizeof pub, HUBKEYS_ALLOWED "/", name);
    if (strlen(pub) + strlen(HUBKEYS_PUBLIC_SUFFIX) >= sizeof pub)
        return -1;
    strcat(pub, HUBKEYS_PUBLIC_SUFFIX);
    return keys_keep_or_make(sec, pub, name, kind, submit, host);
}

/* DIR and DIR/allowed, mode 0700. */
static int keys_dirs(void)
{
    char allowed[4096];
    keys_path(allowed, sizeof allowed, HUBKEYS_ALLOWED, "");
    if ((mkdir(keys_dir, 0700) != 0 && errno != EEXIST) ||
        (mkdir(allowed, 0700) != 0 && errno != EEXIST)) {
        fprintf(stderr, "talkback-keys: cannot make %s: %s\n", allowed, strerror(errno));
        return -1;
    }
    return 0;
}

/* The two ways to call it, on stderr; exit status 2. */
static int keys_usage(void)
{
    fprintf(stderr, "usage: talkback-keys DIR             the hub's keys and one certificate per "
                    "worker kind (sandbox, judge, reaper, ctl)\n"
                    "       talkback-keys DIR KIND NAME [HOST]   one more certificate for a "
                    "worker of KIND, named NAME; a sandbox or reaper key is for one host: HOST, "
                    "or NAME without a leading KIND- (sandbox-beta: host beta)\n"
                    "Existing files are kept.  docs/security.md says where each goes.\n");
    return 2;
}

/* DIR KIND NAME [HOST]: one more certificate, for one host when its kind
 * serves one (hubkeys.h). */
static int keys_one(const char *kind, const char *name, const char *host_arg)
{
    const hubkeys_role_t *r = hubkeys_role(kind);
    if (!r || !hubkeys_meta_valid(name, "") || strchr(name, ',')) {
        fprintf(stderr, "talkback-keys: KIND is sandbox, judge, reaper or ctl, and NAME is made of "
                        "a-z, 0-9, _ and -\n");
        return 2;
    }
    char host[HUBKEYS_META_MAX + 1];
    bool per_host = hubkeys_kind_per_host(r->kind);
    if (host_arg && !per_host) {
        fprintf(stderr,
                "talkback-keys: a %s key serves every host, so it names none: leave HOST out\n",
                r->kind);
        return 2;
    }
    if (per_host && (host_arg ? snprintf(host, sizeof host, "%s", host_arg) >= (int)sizeof host
                              : hubkeys_host_for(r->kind, name, host, sizeof host) < 0)) {
        fprintf(stderr, "talkback-keys: HOST is too long\n");
        return 2;
    }
    if (per_host && !hubkeys_host_valid(host)) {
        fprintf(stderr, "talkback-keys: HOST is made of A-Z, a-z, 0-9, ., _ and -\n");
        return 2;
    }
    if (keys_client(r->kind, name, r->submit, per_host ? host : NULL) < 0)
        return 1;
    if (per_host)
        printf("%s is for host %s only: its %s must run with host_name %s\n", name, host, r->kind,
               host);
    return 0;
}

/* DIR: the hub and one certificate per kind; DIR KIND NAME [HOST]: one
 * more. */
int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4 && argc != 5)
        return keys_usage();
    if (argv[1][0] == '-')
        return keys_usage();
    umask(077);
    zsys_init();
    keys_dir = argv[1];
    if (keys_dirs() < 0 || keys_hub() < 0)
        return 1;
    if (argc >= 4)
        return keys_one(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    /* The default set names no host: its sandbox and reaper keys act for
     * any host no other key names (hubkeys.h). */
    for (const hubkeys_role_t *r = hubkeys_roles(); r->kind; r++)
        if (keys_client(r->kind, r->kind, r->submit, NULL) < 0)
            return 1;
    return 0;
}
