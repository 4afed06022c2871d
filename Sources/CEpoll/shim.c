// accept4 and pipe2-style flags are declared only under _GNU_SOURCE, which must not leak into
// the header that Swift imports (it would clash with SwiftGlibc's module), so the wrappers that
// need it live here, next to their portable twins.
#ifdef __linux__
#define _GNU_SOURCE
#endif
#include <sys/socket.h>
#include <pthread.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include "CEpoll.h"

/// O_NONBLOCK + FD_CLOEXEC (+ SO_NOSIGPIPE where it exists); 0 or -1 with errno.
static int cepoll_make_portable(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -1;
    int fdFlags = fcntl(fd, F_GETFD, 0);
    if (fdFlags < 0 || fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) < 0) return -1;
#ifdef SO_NOSIGPIPE
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
    return 0;
}

static int cepoll_close_keeping_errno(int fd) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int cepoll_stream_socket(int family, int portable) {
#ifdef __linux__
    if (!portable) return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    (void)portable;
#endif
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (cepoll_make_portable(fd) != 0) return cepoll_close_keeping_errno(fd);
    return fd;
}

int cepoll_accept(int fd, struct sockaddr *addr, socklen_t *len, int portable) {
#ifdef __linux__
    if (!portable) return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    (void)portable;
#endif
    int accepted = accept(fd, addr, len);
    if (accepted < 0) return -1;
    // BSD sockets inherit O_NONBLOCK from the listener, Linux does not; set it either way.
    if (cepoll_make_portable(accepted) != 0) return cepoll_close_keeping_errno(accepted);
    return accepted;
}

int cepoll_wake_open(int portable, int *readFD, int *writeFD) {
#ifdef __linux__
    if (!portable) {
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) return -1;
        *readFD = fd;
        *writeFD = fd;
        return 0;
    }
#else
    (void)portable;
#endif
    int fds[2];
    if (pipe(fds) != 0) return -1;
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(fds[i], F_GETFL, 0);
        if (flags < 0 || fcntl(fds[i], F_SETFL, flags | O_NONBLOCK) < 0
            || fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
            int saved = errno;
            close(fds[0]);
            close(fds[1]);
            errno = saved;
            return -1;
        }
    }
    *readFD = fds[0];
    *writeFD = fds[1];
    return 0;
}

int cepoll_thread_spawn(void *(*body)(void *), void *context, uintptr_t *handle) {
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, body, context);
    if (rc == 0) *handle = (uintptr_t)thread;
    return rc;
}

int cepoll_thread_join(uintptr_t handle) { return pthread_join((pthread_t)handle, NULL); }

int cepoll_thread_detach(uintptr_t handle) { return pthread_detach((pthread_t)handle); }

int cepoll_lower_thread_priority(int nice) {
#ifdef __linux__
    // On Linux a nice value belongs to a thread: setpriority on the thread id changes this thread only.
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0 ? 0 : errno;
#else
    (void)nice;  // elsewhere it would change the whole process: leave the thread as it is
    return 0;
#endif
}

int cepoll_thread_name(char *buffer, size_t length) {
    return pthread_getname_np(pthread_self(), buffer, length);
}

void cepoll_set_thread_name(const char *name) {
#ifdef __APPLE__
    pthread_setname_np(name);  // Darwin names only the calling thread
#else
    pthread_setname_np(pthread_self(), name);
#endif
}
