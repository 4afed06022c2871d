// accept4 is declared only under _GNU_SOURCE, which must not leak into the header that
// Swift imports (it would clash with SwiftGlibc's module), so its wrapper lives here.
#define _GNU_SOURCE
#include <sys/socket.h>
#include <pthread.h>
#include "CEpoll.h"

int cepoll_accept4(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cepoll_stream_socket(int family) {
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

void cepoll_set_thread_name(const char *name) {
    pthread_setname_np(pthread_self(), name);
}
