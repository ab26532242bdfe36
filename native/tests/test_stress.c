/* Acceptance test 2 (issue 5): 8 threads, each with its own colour set, 10^6 random
 * malloc/free/realloc/memalign/calloc operations in total of 1 B to 4 MB; every block's contents
 * are verified before it is freed or resized, every block's colour is checked against its
 * thread's set (the library's record for all blocks; the frame through pagemap for one page of
 * every block and every page of blocks over 64 KB). Built with AddressSanitizer over the library
 * built with -DMEMTINT_ASAN, which poisons free objects so use-after-free and overflows inside
 * the coloured heap are caught too. Usage: test_stress [TOTAL_OPS] [THREADS] */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

#define SLOTS 48
#define MAX_SIZE (4u << 20)

typedef struct {
    int id;
    long ops;
    unsigned cols[4];
    uint64_t set[1024];
    long bad_colour, bad_content, pagemap_pages;
} worker;

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

/* Mostly small sizes, some medium, a few up to 4 MB (log-uniform within each band). */
static size_t pick_size(uint64_t *r) {
    uint64_t x = rng_next(r), band = x % 1000;
    unsigned bits;
    if (band < 900) bits = 1 + (unsigned)(rng_next(r) % 11);       /* 2 B .. 2 KB */
    else if (band < 995) bits = 11 + (unsigned)(rng_next(r) % 6);  /* 2 KB .. 64 KB */
    else bits = 16 + (unsigned)(rng_next(r) % 7);                  /* 64 KB .. 4 MB */
    size_t s = (size_t)(rng_next(r) % (1ULL << bits)) + 1;
    return s > MAX_SIZE ? MAX_SIZE : s;
}

static unsigned char pattern(uint64_t tag, size_t i) { return (unsigned char)(tag * 131 + i * 7 + (i >> 9)); }

static void fill(unsigned char *p, size_t n, uint64_t tag) {
    for (size_t i = 0; i < n; i++) p[i] = pattern(tag, i);
}

static int verify(const unsigned char *p, size_t n, uint64_t tag) {
    for (size_t i = 0; i < n; i++) if (p[i] != pattern(tag, i)) return 0;
    return 1;
}

static void check_colour(worker *w, void *p, size_t n) {
    int c = memtint_color_of(p);
    if (c < 0 || !(w->set[c >> 6] >> (c & 63) & 1)) w->bad_colour++;
    if (n > 65536) { w->bad_colour += tc_check_block(p, n, w->set); w->pagemap_pages += (long)(n >> 12); }
    else { w->bad_colour += tc_check_block(p, 1, w->set); w->pagemap_pages++; }
}

static void *run(void *arg) {
    worker *w = arg;
    if (memtint_set_colors(w->cols, 4)) { perror("memtint_set_colors"); exit(1); }
    uint64_t r = 0x9E3779B97F4A7C15ULL * (uint64_t)(w->id + 1);
    unsigned char *ptr[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    uint64_t tag[SLOTS] = {0};
    for (long op = 0; op < w->ops; op++) {
        int k = (int)(rng_next(&r) % SLOTS);
        unsigned kind = (unsigned)(rng_next(&r) % 10);
        if (ptr[k]) {
            if (!verify(ptr[k], len[k], tag[k])) w->bad_content++;
            if (kind < 3) { /* realloc keeps the prefix */
                size_t n = pick_size(&r);
                unsigned char *q = memtint_realloc(ptr[k], n);
                if (!q) { perror("realloc"); exit(1); }
                size_t keep = n < len[k] ? n : len[k];
                if (!verify(q, keep, tag[k])) w->bad_content++;
                tag[k] = rng_next(&r);
                fill(q, n, tag[k]);
                ptr[k] = q;
                len[k] = n;
                check_colour(w, q, n);
                continue;
            }
            memtint_free(ptr[k]);
            ptr[k] = NULL;
            continue;
        }
        size_t n = pick_size(&r);
        unsigned char *p;
        if (kind < 6) p = memtint_malloc(n);
        else if (kind < 8) {
            size_t align = (size_t)1 << (4 + rng_next(&r) % 10); /* 16 B .. 8 KB */
            p = memtint_memalign(align, n);
            if (p && ((uintptr_t)p & (align - 1))) { fprintf(stderr, "memalign(%zu) misaligned\n", align); exit(1); }
        } else {
            p = memtint_calloc(1, n);
            if (p) for (size_t i = 0; i < n; i++) if (p[i]) { fprintf(stderr, "calloc not zero\n"); exit(1); }
        }
        if (!p) { perror("malloc"); exit(1); }
        if (memtint_usable_size(p) < n) { fprintf(stderr, "usable size too small\n"); exit(1); }
        tag[k] = rng_next(&r);
        fill(p, n, tag[k]);
        ptr[k] = p;
        len[k] = n;
        check_colour(w, p, n);
    }
    for (int k = 0; k < SLOTS; k++) if (ptr[k]) {
        if (!verify(ptr[k], len[k], tag[k])) w->bad_content++;
        memtint_free(ptr[k]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long total = argc > 1 ? atol(argv[1]) : 1000000;
    int nthreads = argc > 2 ? atoi(argv[2]) : 8;
    tc_load_masks();
    if ((1u << tc_n_masks) < (unsigned)nthreads * 4) { fprintf(stderr, "need 4 colours per thread\n"); return 2; }
    worker w[64];
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].id = t;
        w[t].ops = total / nthreads;
        for (int i = 0; i < 4; i++) w[t].cols[i] = (unsigned)(4 * t + i);
        tc_set_from_list(w[t].set, w[t].cols, 4);
        pthread_create(&th[t], NULL, run, &w[t]);
    }
    long bad_colour = 0, bad_content = 0, pages = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        bad_colour += w[t].bad_colour;
        bad_content += w[t].bad_content;
        pages += w[t].pagemap_pages;
    }
    struct memtint_stats st;
    memtint_get_stats(&st);
    printf("threads=%d ops=%ld wrong_colour=%ld bad_content=%ld pages_checked_via_pagemap=%ld "
           "from_kernel=%llu delivered_now=%llu held=%llu\n", nthreads, total, bad_colour, bad_content,
           pages, (unsigned long long)st.pages_from_kernel, (unsigned long long)st.pages_delivered,
           (unsigned long long)st.pages_held_aside);
    return bad_colour || bad_content ? 1 : 0;
}
