/* The private cache hierarchy memtint-trace simulates inside the traced process: an L1 data
 * cache and an inclusive L2, set-associative, LRU, write-back, write-allocate. Only L2 misses
 * leave it, as CPU-trace records (the filter Ramulator's CPU traces assume; docs/tracing.md).
 * Freestanding C (no libc, no Valgrind) so the same file is built into the Valgrind tool and
 * into the plain test driver that checks it against tests/python's reference model. */
#ifndef MT_CACHE_H
#define MT_CACHE_H

typedef unsigned long long mt_u64;

/* One set-associative level. Each set holds `ways` words, most recently used first; a word is
 * (line << 1) | dirty, or MT_INVALID. */
typedef struct {
    unsigned sets;      /* a power of two */
    unsigned ways;
    mt_u64 *slots;      /* sets * ways words, caller-allocated (mt_level_bytes) */
} mt_level;

typedef struct {
    mt_level l1, l2;
    unsigned line_shift; /* log2(line bytes) */
} mt_hierarchy;

/* What one line access did at the memory side: an L2 miss fetches `line`; it may evict a dirty
 * line (`writeback`), written back to memory. */
typedef struct {
    int l1_miss;
    int l2_miss;
    int has_writeback;
    mt_u64 writeback;   /* a line number, valid when has_writeback */
} mt_outcome;

#define MT_INVALID (~0ULL)

/* Checks a geometry; returns 0, or a static message saying what is wrong. */
const char *mt_level_check(mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes);
/* Bytes of slot storage a level of this (checked) geometry needs. */
mt_u64 mt_level_bytes(mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes);
void mt_level_init(mt_level *level, mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes, mt_u64 *slots);

/* Accesses one line (`line` = address >> line_shift); `write` marks it dirty in L1. */
mt_outcome mt_access_line(mt_hierarchy *h, mt_u64 line, int write);

#endif
