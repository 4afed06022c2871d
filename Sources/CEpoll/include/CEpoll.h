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
#include <time.h>

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

/// A non-blocking, close-on-exec TCP socket of `family` (AF_INET / AF_INET6); -1 and errno on failure.
int cepoll_stream_socket(int family);

/// Names the calling thread (at most 15 bytes show in top/perf); defined in shim.c (_GNU_SOURCE).
void cepoll_set_thread_name(const char *name);

/// Sets an int-valued socket option to 1 (SO_REUSEADDR, SO_REUSEPORT, TCP_NODELAY, IPV6_V6ONLY).
static inline int cepoll_enable_option(int fd, int level, int name) {
    int one = 1;
    return setsockopt(fd, level, name, &one, sizeof(one));
}

/// SO_LINGER {on, 0 s}: a following close() sends RST instead of FIN.
static inline int cepoll_set_linger_zero(int fd) {
    struct linger l;
    l.l_onoff = 1;
    l.l_linger = 0;
    return setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

/// CLOCK_MONOTONIC in nanoseconds.
static inline unsigned long long cepoll_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/// Adds 1 to an eventfd counter (wakes its epoll waiter).
static inline int cepoll_eventfd_signal(int fd) {
    unsigned long long one = 1;
    return (int)write(fd, &one, sizeof(one));
}

/// Resets an eventfd counter to 0.
static inline void cepoll_eventfd_drain(int fd) {
    unsigned long long value;
    (void)read(fd, &value, sizeof(value));
}

/// send(…, MSG_NOSIGNAL): a write to a reset peer returns EPIPE instead of raising SIGPIPE.
static inline long cepoll_send(int fd, const void *bytes, unsigned long count) {
    return (long)send(fd, bytes, count, MSG_NOSIGNAL);
}

static const int CEPOLL_SOL_SOCKET = SOL_SOCKET;
static const int CEPOLL_SO_REUSEADDR = SO_REUSEADDR;
static const int CEPOLL_SO_REUSEPORT = SO_REUSEPORT;
static const int CEPOLL_IPPROTO_TCP = IPPROTO_TCP;
static const int CEPOLL_TCP_NODELAY = TCP_NODELAY;
static const int CEPOLL_IPPROTO_IPV6 = IPPROTO_IPV6;
static const int CEPOLL_IPV6_V6ONLY = IPV6_V6ONLY;

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
