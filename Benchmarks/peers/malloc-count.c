/* Counts a process's heap allocations and prints the totals to stderr at exit.
 * Benchmarks/peers/binaries-ab.py builds it (cc -O2 -shared -fPIC) and loads it with LD_PRELOAD
 * to give heap allocations per request: a figure that, unlike CPU time, does not move with
 * the load of a shared machine. Counting only (glibc's allocator does the work). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_long allocations;

static void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    *out = __libc_memalign(alignment, size);
    return *out ? 0 : 12; /* ENOMEM */
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int n = snprintf(line, sizeof line, "malloc-count: %ld\n", atomic_load(&allocations));
    if (n > 0) (void)!write(2, line, (size_t)n);
}
