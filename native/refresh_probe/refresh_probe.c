/* memtint-refresh-probe: refresh interference seen from user space.
 *
 * One cache line is loaded, flushed (clflush) and loaded again, each load timed with rdtscp,
 * so every load goes to DRAM. A load that reaches its rank while the rank refreshes waits for
 * the refresh (up to tRFC), so the slow loads recur every tREFI. The program prints, as text
 * the Python front end (memtint.linux.refresh_probe) reads:
 *   tsc_hz <hz>
 *   samples <n> median <cycles>
 *   hist <bin cycles> <count> ...        latency histogram, bins of HIST_BIN TSC cycles
 *   slow <tsc since start> <latency>     each load slower than the threshold
 * Usage: memtint-refresh-probe SAMPLES THRESHOLD_FACTOR
 * x86-64 only (clflush, rdtscp). No privilege needed: no physical addresses are used. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if !defined(__x86_64__)
int main(void) {
    fprintf(stderr, "memtint-refresh-probe: x86-64 only (clflush and rdtscp)\n");
    return 2;
}
#else
#include <x86intrin.h>

#define HIST_BIN 10
#define HIST_BINS 1000

#include "../include/tsc_clock.h"

static inline uint64_t timed_load(volatile uint8_t *p) {
    unsigned aux;
    _mm_mfence();
    uint64_t t0 = __rdtscp(&aux);
    (void)*p;
    uint64_t t1 = __rdtscp(&aux);
    _mm_lfence();
    _mm_clflush((const void *)p);
    return t1 - t0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: memtint-refresh-probe SAMPLES THRESHOLD_FACTOR\n");
        return 2;
    }
    char *end;
    long long samples = strtoll(argv[1], &end, 10);
    if (*end || samples < 10000 || samples > 1000000000LL) {
        fprintf(stderr, "memtint-refresh-probe: SAMPLES must be an integer from 10000 to 1000000000, got '%s'\n", argv[1]);
        return 2;
    }
    double factor = strtod(argv[2], &end);
    if (*end || !(factor > 1.0 && factor < 100.0)) {
        fprintf(stderr, "memtint-refresh-probe: THRESHOLD_FACTOR must be a number above 1 and below 100, got '%s'\n", argv[2]);
        return 2;
    }
    static uint8_t line[4096] __attribute__((aligned(4096)));
    memset(line, 1, sizeof line);
    volatile uint8_t *p = line + 64;
    printf("tsc_hz %.0f\n", tsc_hz());

    /* Calibration: the median latency of a DRAM load. */
    enum { CAL = 10001 };
    static uint64_t cal[CAL];
    for (int i = 0; i < CAL; i++)
        cal[i] = timed_load(p);
    qsort(cal, CAL, sizeof cal[0], cmp_u64);
    uint64_t median = cal[CAL / 2];
    uint64_t threshold = (uint64_t)((double)median * factor);
    printf("samples %lld median %llu threshold %llu\n", samples, (unsigned long long)median, (unsigned long long)threshold);

    static uint64_t hist[HIST_BINS];
    unsigned aux;
    uint64_t start = __rdtscp(&aux);
    for (long long i = 0; i < samples; i++) {
        uint64_t t = __rdtscp(&aux);
        uint64_t lat = timed_load(p);
        uint64_t bin = lat / HIST_BIN;
        hist[bin < HIST_BINS ? bin : HIST_BINS - 1]++;
        if (lat > threshold)
            printf("slow %llu %llu\n", (unsigned long long)(t - start), (unsigned long long)lat);
    }
    printf("hist");
    for (int b = 0; b < HIST_BINS; b++)
        if (hist[b])
            printf(" %d:%llu", b * HIST_BIN, (unsigned long long)hist[b]);
    printf("\n");
    return 0;
}
#endif
