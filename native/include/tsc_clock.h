/* The timed probes' clock (memtint-refresh-probe, memtint-dram-probe): CLOCK_MONOTONIC_RAW in ns,
 * and the TSC's rate calibrated against it, so rdtscp ticks convert to ns. x86-64 only. */
#ifndef MEMTINT_TSC_CLOCK_H
#define MEMTINT_TSC_CLOCK_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

static inline uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* TSC ticks per second, against CLOCK_MONOTONIC_RAW over 100 ms. */
static inline double tsc_hz(void) {
    unsigned aux;
    uint64_t n0 = now_ns(), t0 = __rdtscp(&aux);
    while (now_ns() - n0 < 100000000u) {
    }
    uint64_t n1 = now_ns(), t1 = __rdtscp(&aux);
    return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

#endif
