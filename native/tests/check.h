/* check.h — the tests' own view of colours: masks and colour lists parsed independently of the
 * library, frame numbers read from /proc/self/pagemap directly. A test never trusts the
 * library's record of a page's colour when it can look at the frame itself. */
#ifndef MEMTINT_TEST_CHECK_H
#define MEMTINT_TEST_CHECK_H
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t tc_masks[16];
static unsigned tc_n_masks;

static void tc_load_masks(void) {
    const char *s = getenv("MEMTINT_COLOR_MASKS");
    if (!s) { fprintf(stderr, "test: MEMTINT_COLOR_MASKS not set\n"); exit(1); }
    char *end;
    tc_n_masks = 0;
    for (;;) {
        tc_masks[tc_n_masks++] = strtoull(s, &end, 16);
        if (*end != ',') break;
        s = end + 1;
    }
}

static unsigned tc_colour(uint64_t paddr) {
    unsigned c = 0;
    for (unsigned i = 0; i < tc_n_masks; i++) c |= (unsigned)(__builtin_popcountll(paddr & tc_masks[i]) & 1) << i;
    return c;
}

/* Frame number of the page holding va (touching it first), 0 if absent/unreadable. */
static uint64_t tc_pfn(const void *va) {
    static int fd = -1;
    if (fd < 0) fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t e = 0;
    if (pread(fd, &e, 8, (off_t)((uintptr_t)va >> 12) * 8) != 8) return 0;
    return (e >> 63) ? (e & ((1ULL << 55) - 1)) : 0;
}

/* Every page of [p, p+len) has a frame whose colour is in `set` (bitmap of 64-bit words). Returns
 * the number of offending pages; prints the first. */
static long tc_check_block(const void *p, size_t len, const uint64_t *set) {
    long bad = 0;
    uintptr_t a = (uintptr_t)p & ~4095UL, end = (uintptr_t)p + (len ? len : 1);
    for (; a < end; a += 4096) {
        uint64_t pfn = tc_pfn((void *)a);
        unsigned c = tc_colour(pfn << 12);
        if (!pfn || !(set[c >> 6] >> (c & 63) & 1)) {
            if (!bad) fprintf(stderr, "  page %#lx: frame %#llx colour %u not in the set\n",
                              (unsigned long)a, (unsigned long long)pfn, c);
            bad++;
        }
    }
    return bad;
}

static void tc_set_from_list(uint64_t *set, const unsigned *cols, size_t n) {
    for (size_t i = 0; i < n; i++) set[cols[i] >> 6] |= 1ULL << (cols[i] & 63);
}
#endif
