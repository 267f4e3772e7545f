/* owner.c -- whose a container is (see owner.h). */
#include "guard/owner.h"
#include "guard/rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <jansson.h>

#define OWNER_ANSWER_MAX (256 << 10)

int gowner_connect(const char *sock)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(sock) >= sizeof sa.sun_path)
        return -1;
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET path from dockerd over HTTP/1.0 (it closes when done): the JSON body
 * of a 200 into *out, or the status (404 ...) with *out NULL; -1 when
 * dockerd could not be asked. */
static int get_json(const char *sock, const char *path, json_t **out)
{
    *out = NULL;
    int fd = gowner_connect(sock);
    if (fd < 0)
        return -1;
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: docker\r\n\r\n", path);
    char *buf = malloc(OWNER_ANSWER_MAX + 1);
    size_t len = 0;
    ssize_t k;
    if (!buf || n < 0 || (size_t)n >= sizeof req || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        free(buf);
        close(fd);
        return -1;
    }
    while (len < OWNER_ANSWER_MAX &&
           ((k = recv(fd, buf + len, OWNER_ANSWER_MAX - len, 0)) > 0 || (k < 0 && errno == EINTR)))
        len += k > 0 ? (size_t)k : 0;
    close(fd);
    buf[len] = '\0';
    int status = -1;
    char *body = strstr(buf, "\r\n\r\n");
    if (body && sscanf(buf, "HTTP/1.%*d %d", &status) == 1 && status == 200)
        *out = json_loadb(body + 4, len - (size_t)(body + 4 - buf), 0, NULL);
    free(buf);
    if (status == 200 && !*out)
        return -1;
    return status;
}

gowner_t gowner_container(const char *sock, const char *ref, char id[65])
{
    char path[256];
    json_t *j;
    snprintf(path, sizeof path, "/containers/%s/json", ref);
    int st = get_json(sock, path, &j);
    if (st == 404)
        return GOWN_MISSING;
    if (st != 200)
        return GOWN_ERROR;
    const char *cid = json_string_value(json_object_get(j, "Id"));
    const char *name = json_string_value(json_object_get(j, "Name"));
    json_t *labels = json_object_get(json_object_get(j, "Config"), "Labels");
    gowner_t o = GOWN_FOREIGN;
    if (!cid || strlen(cid) != 64 || strspn(cid, "0123456789abcdef") != 64 || !name)
        o = GOWN_ERROR;
    else
        o = grules_owner(name, labels);
    if (o != GOWN_ERROR)
        memcpy(id, cid, 65);
    json_decref(j);
    return o;
}

gowner_t gowner_exec(const char *sock, const char *eid, char id[65])
{
    char path[256];
    json_t *j;
    snprintf(path, sizeof path, "/exec/%s/json", eid);
    int st = get_json(sock, path, &j);
    if (st == 404)
        return GOWN_MISSING;
    if (st != 200)
        return GOWN_ERROR;
    const char *cid = json_string_value(json_object_get(j, "ContainerID"));
    char ref[65];
    snprintf(ref, sizeof ref, "%s", cid ? cid : "");
    json_decref(j);
    if (strlen(ref) != 64 || strspn(ref, "0123456789abcdef") != 64)
        return GOWN_ERROR;
    gowner_t o = gowner_container(sock, ref, id);
    return o == GOWN_TOMBSTONE || o == GOWN_PROBE ? GOWN_FOREIGN : o;
}
