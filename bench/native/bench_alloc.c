/* libmemtint benchmark (issue 5, `make bench`):
 *   throughput  multi-threaded malloc/free of 16 B-1 KB objects (1024 live per thread), ops/s
 *               of glibc malloc and of libmemtint (process colours from MEMTINT_COLORS);
 *   mixed       multi-threaded malloc/realloc/free of mixed sizes (90 % 2 B-2 KB, 9.5 % 2-64 KB,
 *               0.5 % 64 KB-4 MB, as native/tests/test_stress.c), every page touched, ops/s of
 *               glibc and libmemtint, and the share of the time spent in the kernel;
 *   rate MB [KB] obtain MB of coloured memory in KB blocks (default 4 MB), touched, under the
 *               process colours (MEMTINT_MODE decides pagemap or hugepage):
 *               GB/s, and the frames held aside / obtained from the kernel per GB delivered.
 * libmemtint is linked statically under its own names (memtint_malloc...), so glibc's malloc is
 * measured in the same process without interposition. */
#include "../../native/libmemtint/include/memtint.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WINDOW 1024

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct { void *(*alloc)(size_t); void (*release)(void *); long ops; int seed; } job;

static void *worker(void *arg) {
    job *j = arg;
    void *slot[WINDOW] = {0};
    uint64_t r = 0x9E3779B97F4A7C15ULL * (uint64_t)j->seed;
    for (long i = 0; i < j->ops; i++) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        unsigned k = (unsigned)(r % WINDOW);
        if (slot[k]) { j->release(slot[k]); slot[k] = NULL; }
        else {
            size_t n = 16 + (size_t)((r >> 20) % 1009);
            char *p = j->alloc(n);
            p[0] = (char)i; p[n - 1] = (char)i;
            slot[k] = p;
        }
    }
    for (int k = 0; k < WINDOW; k++) if (slot[k]) j->release(slot[k]);
    return NULL;
}

typedef struct { void *(*alloc)(size_t); void *(*resize)(void *, size_t); void (*release)(void *); long ops; int seed; } mixed_job;

static uint64_t xorshift(uint64_t *r) {
    *r ^= *r << 13; *r ^= *r >> 7; *r ^= *r << 17;
    return *r;
}

static size_t mixed_size(uint64_t *r) {
    uint64_t band = xorshift(r) % 1000;
    unsigned bits = band < 900 ? 1 + (unsigned)(xorshift(r) % 11)
                  : band < 995 ? 11 + (unsigned)(xorshift(r) % 6) : 16 + (unsigned)(xorshift(r) % 7);
    return (size_t)(xorshift(r) % (1ULL << bits)) + 1;
}

static void touch(char *p, size_t n, long i) {
    for (size_t k = 0; k < n; k += 4096) p[k] = (char)i;
    p[n - 1] = (char)i;
}

static void *mixed_worker(void *arg) {
    mixed_job *j = arg;
    void *slot[WINDOW] = {0};
    uint64_t r = 0x9E3779B97F4A7C15ULL * (uint64_t)j->seed;
    for (long i = 0; i < j->ops; i++) {
        unsigned k = (unsigned)(xorshift(&r) % WINDOW);
        unsigned kind = (unsigned)(xorshift(&r) % 10);
        if (slot[k] && kind < 2) { /* realloc */
            size_t n = mixed_size(&r);
            char *q = j->resize(slot[k], n);
            touch(q, n, i);
            slot[k] = q;
        } else if (slot[k]) {
            j->release(slot[k]);
            slot[k] = NULL;
        } else {
            size_t n = mixed_size(&r);
            char *p = j->alloc(n);
            touch(p, n, i);
            slot[k] = p;
        }
    }
    for (int k = 0; k < WINDOW; k++) if (slot[k]) j->release(slot[k]);
    return NULL;
}

/* ops/s; *sys gets the share of the process's CPU time spent in the kernel during the run */
static double mixed(void *(*alloc)(size_t), void *(*resize)(void *, size_t), void (*release)(void *), int threads,
                    long ops, double *sys) {
    pthread_t th[64];
    mixed_job jobs[64];
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double t0 = now();
    for (int t = 0; t < threads; t++) {
        jobs[t] = (mixed_job){alloc, resize, release, ops, t + 1};
        pthread_create(&th[t], NULL, mixed_worker, &jobs[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    double dt = now() - t0;
    getrusage(RUSAGE_SELF, &u1);
    double us = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) * 1e-6;
    double ss = (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) * 1e-6;
    *sys = us + ss > 0 ? ss / (us + ss) : 0;
    return (double)threads * (double)ops / dt;
}

static double throughput(void *(*alloc)(size_t), void (*release)(void *), int threads, long ops) {
    pthread_t th[64];
    job jobs[64];
    double t0 = now();
    for (int t = 0; t < threads; t++) {
        jobs[t] = (job){alloc, release, ops, t + 1};
        pthread_create(&th[t], NULL, worker, &jobs[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    return (double)threads * (double)ops / (now() - t0);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_alloc throughput THREADS OPS | mixed THREADS OPS | rate MB\n"); return 2; }
    if (!strcmp(argv[1], "throughput")) {
        int threads = argc > 2 ? atoi(argv[2]) : 2;
        long ops = argc > 3 ? atol(argv[3]) : 2000000;
        throughput(memtint_malloc, memtint_free, threads, ops / 4); /* warm: pool grown, slabs made */
        throughput(malloc, free, threads, ops / 4);
        double g = throughput(malloc, free, threads, ops);
        double m = throughput(memtint_malloc, memtint_free, threads, ops);
        printf("| %d | %.1f | %.1f | %.2f |\n", threads, g / 1e6, m / 1e6, m / g);
        return 0;
    }
    if (!strcmp(argv[1], "mixed")) {
        int threads = argc > 2 ? atoi(argv[2]) : 2;
        long ops = argc > 3 ? atol(argv[3]) : 200000;
        double gs, ms;
        mixed(memtint_malloc, memtint_realloc, memtint_free, threads, ops / 4, &ms); /* warm */
        mixed(malloc, realloc, free, threads, ops / 4, &gs);
        double g = mixed(malloc, realloc, free, threads, ops, &gs);
        double m = mixed(memtint_malloc, memtint_realloc, memtint_free, threads, ops, &ms);
        printf("| %d | %.3f | %.0f %% | %.3f | %.0f %% | %.2f |\n", threads, g / 1e6, gs * 100, m / 1e6, ms * 100, g / m);
        return 0;
    }
    if (!strcmp(argv[1], "rate")) {
        size_t mb = argc > 2 ? (size_t)atol(argv[2]) : 256;
        size_t block = argc > 3 ? (size_t)atol(argv[3]) << 10 : 4 << 20, n = (mb << 20) / block;
        void **held = calloc(n, sizeof *held);
        double t0 = now();
        for (size_t i = 0; i < n; i++) {
            char *p = memtint_malloc(block);
            if (!p) { perror("memtint_malloc"); return 1; }
            for (size_t k = 0; k < block; k += 4096) p[k] = 1;
            held[i] = p;
        }
        double dt = now() - t0;
        struct memtint_stats st;
        memtint_get_stats(&st);
        double gb = (double)(n * block) / (1 << 30);
        t0 = now();
        char *volatile q = malloc(n * block);
        for (size_t k = 0; k < n * block; k += 4096) q[k] = 1;
        free(q);
        double plain = now() - t0;
        printf("| %s | %s | %zu KB | %zu | %.3f | %.2f | %.2f | %.2f | %.2f |\n",
               st.mode == MEMTINT_MODE_HUGEPAGE ? "hugepage" : "pagemap", getenv("MEMTINT_COLORS"), block >> 10, mb, gb / dt,
               (double)st.pages_held_aside * 4096 / (1 << 30) / gb,
               (double)st.pages_from_kernel * 4096 / (1 << 30) / gb,
               (double)st.pages_released * 4096 / (1 << 30) / gb, gb / plain);
        return 0;
    }
    fprintf(stderr, "unknown benchmark %s\n", argv[1]);
    return 2;
}
