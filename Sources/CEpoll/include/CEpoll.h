// The event loop's one system-call shim. Swift's Glibc/Darwin modules leave out what is here
// (epoll_*, accept4, eventfd, MSG_NOSIGNAL, pthread differences), so the HTTP layer calls these
// wrappers instead. Every Linux-only call has a portable POSIX twin beside it:
//
//   Linux only (fast path)            portable twin (macOS, and Linux with OPTOLINK_EVENT_LOOP=poll)
//   epoll_create1/epoll_ctl/wait      poll(2) over an array of pollfd (cepoll_poll)
//   accept4(NONBLOCK|CLOEXEC)         accept + fcntl(O_NONBLOCK, FD_CLOEXEC) (+ SO_NOSIGPIPE)
//   socket(SOCK_NONBLOCK|CLOEXEC)     socket + fcntl
//   eventfd (wake-up)                 a non-blocking pipe
//
// The functions taking `portable` choose at run time on Linux; elsewhere they always take the
// portable path. The epoll functions and constants exist only on Linux (the Swift side compiles
// its epoll backend only there). Part of the package, not a dependency.
#ifndef CEPOLL_H
#define CEPOLL_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

// MARK: - Portable (POSIX)

static inline int cepoll_errno(void) { return errno; }

static inline void cepoll_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

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

/// The clock behind Swift's `ContinuousClock`, in nanoseconds: CLOCK_BOOTTIME on Linux (it keeps
/// counting while the machine sleeps), CLOCK_MONOTONIC_RAW on Darwin, CLOCK_MONOTONIC elsewhere.
static inline unsigned long long cepoll_continuous_ns(void) {
    struct timespec ts;
#if defined(CLOCK_BOOTTIME)
    clock_gettime(CLOCK_BOOTTIME, &ts);
#elif defined(CLOCK_MONOTONIC_RAW)
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/// send() that never raises SIGPIPE: MSG_NOSIGNAL where it exists (Linux); elsewhere the socket
/// carries SO_NOSIGPIPE (set at accept/socket time) and SIGPIPE is ignored process-wide anyway.
static inline long cepoll_send(int fd, const void *bytes, unsigned long count) {
#ifdef MSG_NOSIGNAL
    return (long)send(fd, bytes, count, MSG_NOSIGNAL);
#else
    return (long)send(fd, bytes, count, 0);
#endif
}

/// A non-blocking, close-on-exec TCP socket of `family` (AF_INET / AF_INET6); -1 and errno on
/// failure. `portable` != 0 takes the socket+fcntl path even on Linux. Defined in shim.c.
int cepoll_stream_socket(int family, int portable);

/// Accepts one connection as a non-blocking, close-on-exec socket; -1 and errno when none is
/// waiting (EAGAIN) or on failure. Linux: accept4 unless `portable`; elsewhere accept + fcntl.
int cepoll_accept(int fd, struct sockaddr *addr, socklen_t *len, int portable);

/// Opens a wake-up channel: an eventfd (Linux, `portable` == 0; then *readFD == *writeFD) or a
/// non-blocking close-on-exec pipe. 0 on success, -1 and errno on failure.
int cepoll_wake_open(int portable, int *readFD, int *writeFD);

/// Wakes the loop polling the channel's read end (a full pipe is already a pending wake-up).
static inline void cepoll_wake_signal(int writeFD) {
    uint64_t one = 1;
    (void)write(writeFD, &one, sizeof(one));
}

/// Consumes every pending wake-up (an eventfd resets to 0 on its first read; a pipe empties).
static inline void cepoll_wake_drain(int readFD) {
    uint64_t buffer[8];
    while (read(readFD, buffer, sizeof(buffer)) > 0) {}
}

/// poll(2) over `count` entries; the count type differs across platforms, so it is taken here.
static inline int cepoll_poll(struct pollfd *fds, unsigned int count, int timeoutMs) {
    return poll(fds, (nfds_t)count, timeoutMs);
}

/// Starts a joinable POSIX thread running body(context); 0 or an error number. The handle is
/// the pthread_t as an integer, since pthread_t's Swift type differs between Glibc and Darwin.
int cepoll_thread_spawn(void *(*body)(void *), void *context, uintptr_t *handle);
int cepoll_thread_join(uintptr_t handle);
int cepoll_thread_detach(uintptr_t handle);
/// Gives the calling thread the nice value `nice` (0 to 19: higher runs less when the cores are
/// busy); Linux only, a no-op elsewhere. 0 or an error number.
int cepoll_lower_thread_priority(int nice);

/// Names the calling thread (at most 15 bytes show in top/perf).
void cepoll_set_thread_name(const char *name);
/// The calling thread's name into buffer (at least 16 bytes); 0 or an error number.
int cepoll_thread_name(char *buffer, size_t length);

static const int CEPOLL_SOL_SOCKET = SOL_SOCKET;
static const int CEPOLL_SO_REUSEADDR = SO_REUSEADDR;
static const int CEPOLL_SO_REUSEPORT = SO_REUSEPORT;
static const int CEPOLL_IPPROTO_TCP = IPPROTO_TCP;
static const int CEPOLL_TCP_NODELAY = TCP_NODELAY;
static const int CEPOLL_IPPROTO_IPV6 = IPPROTO_IPV6;
static const int CEPOLL_IPV6_V6ONLY = IPV6_V6ONLY;

static const short CEPOLL_POLLIN = POLLIN;
static const short CEPOLL_POLLOUT = POLLOUT;
static const short CEPOLL_POLLERR = POLLERR;
static const short CEPOLL_POLLHUP = POLLHUP;
static const short CEPOLL_POLLNVAL = POLLNVAL;

// MARK: - Linux only (epoll)

#ifdef __linux__
static inline int cepoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cepoll_ctl(int epfd, int op, int fd, unsigned int events, unsigned long long data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

/// Waits for events; writes (events, data) pairs into the two output arrays.
static inline int cepoll_wait(
    int epfd, unsigned int *outEvents, unsigned long long *outData, int maxEvents, int timeoutMs) {
    struct epoll_event evs[256];
    if (maxEvents > 256) maxEvents = 256;
    int n = epoll_wait(epfd, evs, maxEvents, timeoutMs);
    for (int i = 0; i < n; i++) {
        outEvents[i] = evs[i].events;
        outData[i] = evs[i].data.u64;
    }
    return n;
}

static const unsigned int CEPOLL_IN = EPOLLIN;
static const unsigned int CEPOLL_OUT = EPOLLOUT;
static const unsigned int CEPOLL_ERR = EPOLLERR;
static const unsigned int CEPOLL_HUP = EPOLLHUP;
static const int CEPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CEPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CEPOLL_CTL_DEL = EPOLL_CTL_DEL;
#endif

#endif
