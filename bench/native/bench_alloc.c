/* libmemtint benchmark (issue 5, `make bench`):
 *   throughput  multi-threaded malloc/free of 16 B-1 KB objects (1024 live per thread), ops/s
 *               of glibc malloc and of libmemtint (process colours from MEMTINT_COLORS);
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
    if (argc < 2) { fprintf(stderr, "usage: bench_alloc throughput THREADS OPS | rate MB\n"); return 2; }
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
