/* Acceptance test 1 (issue 5): every page backing allocations made under a colour set has a
 * frame whose colour is in the set, checked through pagemap by the test itself, for small
 * (64 B), medium (24 KB) and large (>= 64 MB) allocations. The mode comes from MEMTINT_MODE;
 * the colours from argv. Usage: test_invariant COLOURS LARGE_MB [MEDIUM_BYTES] */
#include "../libmemtint/include/memtint.h"
#include "check.h"

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: test_invariant COLOURS LARGE_MB [MEDIUM]\n"); return 2; }
    tc_load_masks();
    unsigned cols[64];
    size_t n = 0;
    for (char *s = argv[1]; *s; ) { cols[n++] = (unsigned)strtoul(s, &s, 10); if (*s == ',') s++; }
    uint64_t set[1024] = {0};
    tc_set_from_list(set, cols, n);
    size_t large = (size_t)atol(argv[2]) << 20;
    size_t medium = argc > 3 ? (size_t)atol(argv[3]) : 24 << 10;
    if (memtint_set_colors(cols, n)) { perror("memtint_set_colors"); return 1; }
    long bad = 0;
    /* small: 2000 objects of 64 B spread over many slabs */
    char *small[2000];
    for (int i = 0; i < 2000; i++) {
        small[i] = memtint_malloc(64);
        if (!small[i]) { perror("malloc small"); return 1; }
        memset(small[i], i, 64);
    }
    for (int i = 0; i < 2000; i++) bad += tc_check_block(small[i], 64, set);
    /* medium */
    char *med[64];
    for (int i = 0; i < 64; i++) {
        med[i] = memtint_malloc(medium);
        if (!med[i]) { perror("malloc medium"); return 1; }
        memset(med[i], i, medium);
        bad += tc_check_block(med[i], medium, set);
    }
    /* large, touched in full, contents checked after the check (a copy would show) */
    char *big = memtint_malloc(large);
    if (!big) { perror("malloc large"); return 1; }
    for (size_t i = 0; i < large; i += 4096) big[i] = (char)(i >> 12);
    bad += tc_check_block(big, large, set);
    for (size_t i = 0; i < large; i += 4096)
        if (big[i] != (char)(i >> 12)) { fprintf(stderr, "large block content changed\n"); return 1; }
    long moved = memtint_check_pages(big, large);
    /* library's own record agrees with the frames */
    for (int i = 0; i < 64; i++) {
        int c = memtint_color_of(med[i]);
        if (c < 0 || !(set[c >> 6] >> (c & 63) & 1)) { fprintf(stderr, "memtint_color_of says %d\n", c); bad++; }
    }
    struct memtint_stats st;
    memtint_get_stats(&st);
    printf("mode=%s colours=%s large=%zuMB offending_pages=%ld moved=%ld delivered=%llu held=%llu from_kernel=%llu\n",
           st.mode == MEMTINT_MODE_PAGEMAP ? "pagemap" : "hugepage", argv[1], large >> 20, bad, moved,
           (unsigned long long)st.pages_delivered, (unsigned long long)st.pages_held_aside,
           (unsigned long long)st.pages_from_kernel);
    for (int i = 0; i < 2000; i++) memtint_free(small[i]);
    for (int i = 0; i < 64; i++) memtint_free(med[i]);
    memtint_free(big);
    return bad || moved < 0 ? 1 : 0;
}
