// Thin inline wrappers over Linux system calls that Glibc's Swift module does not export
// (epoll_*, accept4) plus a few constants. Part of the package, not a dependency.
#ifndef CEPOLL_H
#define CEPOLL_H

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

static inline int cepoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cepoll_ctl(int epfd, int op, int fd, unsigned int events, unsigned long long data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

/// Waits for events; writes (events, data) pairs into the two output arrays.
static inline int cepoll_wait(int epfd, unsigned int *outEvents, unsigned long long *outData, int maxEvents, int timeoutMs) {
    struct epoll_event evs[256];
    if (maxEvents > 256) maxEvents = 256;
    int n = epoll_wait(epfd, evs, maxEvents, timeoutMs);
    for (int i = 0; i < n; i++) {
        outEvents[i] = evs[i].events;
        outData[i] = evs[i].data.u64;
    }
    return n;
}

/// accept4(…, SOCK_NONBLOCK | SOCK_CLOEXEC); defined in shim.c, which needs _GNU_SOURCE.
int cepoll_accept4(int fd, struct sockaddr *addr, socklen_t *len);

static inline int cepoll_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static inline int cepoll_errno(void) { return errno; }

static inline void cepoll_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

static const unsigned int CEPOLL_IN = EPOLLIN;
static const unsigned int CEPOLL_OUT = EPOLLOUT;
static const unsigned int CEPOLL_ERR = EPOLLERR;
static const unsigned int CEPOLL_HUP = EPOLLHUP;
static const unsigned int CEPOLL_RDHUP = EPOLLRDHUP;
static const unsigned int CEPOLL_ET = EPOLLET;
static const int CEPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CEPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CEPOLL_CTL_DEL = EPOLL_CTL_DEL;
#endif

#endif
