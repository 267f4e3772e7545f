/* main.c -- talkback-guard: the Docker guard between talkback and dockerd.
 *
 * The sandbox manager and the reaper reach Docker only through it.  It
 * listens on $TALKBACK_PROXY_BIND -- unix@PATH (default
 * unix@/run/talkback-docker/docker.sock, mode 0660 in a folder it makes
 * 0750), HOST:PORT, or fd@N (a socket passed in by systemd) -- and
 * forwards to dockerd's
 * unix socket $TALKBACK_DOCKER_SOCKET (default /var/run/docker.sock) only
 * the calls the rules (rules.c) allow, with bodies checked and rebuilt
 * (template.c, bodies.c) and only for talkback's own containers
 * (owner.c).  The template values are the sandbox manager's config keys
 * (image, memory, ..., network), read the same way.  One thread per client
 * connection, one request per connection.  deploy/docker-proxy starts it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/config.h"
#include "common/listen.h"
#include "common/log.h"
#include "guard/conn.h"

#define GUARD_MAX_CONNS    1024
/* Without TALKBACK_PROXY_BIND: a unix socket only its group can open,
 * never a TCP port (it has no authentication of its own); the path of
 * deploy/systemd/talkback-docker-proxy.socket. */
#define GUARD_DEFAULT_BIND "unix@/run/talkback-docker/docker.sock"

static guard_t guard;
static atomic_int conns;

/* Open the listening socket named by bind; the fd, or -1 (logged). */
static int guard_listen(const char *bind_to)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    bool loopback = false;
    if (!strncmp(bind_to, "fd@", 3))
        return atoi(bind_to + 3);
    int fd;
    if (!strncmp(bind_to, "unix@", 5)) {
        struct sockaddr_un *sa = (struct sockaddr_un *)&ss;
        memset(sa, 0, sizeof *sa);
        sa->sun_family = AF_UNIX;
        if (strlen(bind_to + 5) >= sizeof sa->sun_path)
            return -1;
        strcpy(sa->sun_path, bind_to + 5);
        char dir[sizeof sa->sun_path];
        snprintf(dir, sizeof dir, "%s", sa->sun_path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (mkdir(dir, 0750) && errno != EEXIST)
                log_warn("cannot make %s: %s", dir, strerror(errno));
        }
        unlink(sa->sun_path);
        sl = sizeof *sa;
    } else if (listen_parse(bind_to, &ss, &loopback)) {
        log_error("cannot listen on %s: not unix@PATH, fd@N or HOST:PORT", bind_to);
        return -1;
    } else {
        if (!loopback)
            log_warn("listening on %s, not loopback: whoever reaches it can make sandboxes and "
                     "run commands in them (it has no authentication); keep it on a network of "
                     "its own (Compose: talkback-docker-api)",
                     bind_to);
        sl = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 256)) {
        log_error("cannot listen on %s: %s", bind_to, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (ss.ss_family == AF_UNIX)
        chmod(((struct sockaddr_un *)&ss)->sun_path, 0660);
    return fd;
}

/* The thread of one client connection. */
static void *guard_thread(void *arg)
{
    int cfd = (int)(intptr_t)arg;
    gconn_serve(&guard, cfd);
    atomic_fetch_sub(&conns, 1);
    return NULL;
}

/* Load the config, open the listening socket, and serve each connection
 * in a thread of its own (at most GUARD_MAX_CONNS at once). */
/* The sandbox template the guard checks bodies against: the sandbox
 * manager's own config keys. */
static void gtemplate_from_config(gtemplate_t *t)
{
    t->s.image = config_str("image");
    t->s.network = config_str("network");
    t->s.runtime = config_str("runtime");
    t->s.log_max_size = config_str("log_max_size");
    t->s.memory = config_int("memory");
    t->s.memory_swap = config_int("memory_swap");
    t->s.nano_cpus = config_int("nano_cpus");
    t->s.cpu_shares = config_int("cpu_shares");
    t->s.pids_limit = config_int("pids_limit");
    t->disk_cap = config_int("disk_cap");
}

int main(int argc, char **argv)
{
    if (config_load(argc, argv, "guard"))
        return 2;
    log_init("talkback-guard", log_level_parse(config_str("log_level")));
    signal(SIGPIPE, SIG_IGN);
    const char *bind_to = getenv("TALKBACK_PROXY_BIND");
    const char *sock = getenv("TALKBACK_DOCKER_SOCKET");
    guard.docker_socket = sock && *sock ? sock : "/var/run/docker.sock";
    gtemplate_from_config(&guard.tpl);
    if (!bind_to || !*bind_to)
        bind_to = GUARD_DEFAULT_BIND;
    int lfd = guard_listen(bind_to);
    if (lfd < 0)
        return 1;
    log_info("guarding %s on %s: sandboxes of %s on network %s", guard.docker_socket, bind_to,
             guard.tpl.s.image, guard.tpl.s.network);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 512 * 1024);
    for (;;) {
        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                usleep(10000);
            continue;
        }
        pthread_t t;
        if (atomic_fetch_add(&conns, 1) >= GUARD_MAX_CONNS ||
            pthread_create(&t, &attr, guard_thread, (void *)(intptr_t)cfd)) {
            atomic_fetch_sub(&conns, 1);
            close(cfd);
        }
    }
}
