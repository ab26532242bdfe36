/* The public API's contract and error cases (memtint.h): bad colour sets, foreign pointers,
 * alignment rules, overflow, huge requests, realloc corner cases, releasing held frames. */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <errno.h>

static int failures;
#define EXPECT(cond, what) do { if (!(cond)) { fprintf(stderr, "FAILED: %s (%s:%d)\n", what, __FILE__, __LINE__); failures++; } } while (0)

int main(void) {
    tc_load_masks();
    unsigned ok[] = {1, 2}, bad[] = {1, 1u << tc_n_masks};
    errno = 0;
    EXPECT(memtint_set_colors(NULL, 0) == -1 && errno == EINVAL, "set_colors(NULL, 0) is EINVAL");
    errno = 0;
    EXPECT(memtint_set_colors(bad, 2) == -1 && errno == EINVAL, "a colour outside the space is EINVAL");
    EXPECT(memtint_set_colors(ok, 2) == 0, "set_colors {1,2}");
    uint64_t set[1024] = {0};
    tc_set_from_list(set, ok, 2);

    int local = 0;
    errno = 0;
    EXPECT(memtint_check_pages(&local, sizeof local) == -1 && errno == EINVAL, "check_pages of the stack is EINVAL");
    int c = memtint_color_of(&local);
    EXPECT(c == (int)tc_colour(tc_pfn(&local) << 12), "color_of(stack) is its frame's colour");

    void *p = (void *)1;
    EXPECT(memtint_posix_memalign(&p, 24, 100) == EINVAL && p == (void *)1, "posix_memalign(24) is EINVAL, *out untouched");
    EXPECT(memtint_posix_memalign(&p, 1 << 20, 5000) == 0 && ((uintptr_t)p & ((1 << 20) - 1)) == 0, "1 MB alignment");
    EXPECT(tc_check_block(p, 5000, set) == 0, "aligned block coloured");
    memtint_free(p);
    EXPECT(memtint_posix_memalign(&p, 64 << 20, 3 << 20) == 0 && ((uintptr_t)p & ((64 << 20) - 1)) == 0,
           "64 MB alignment (beyond the 2 MB the arena needs for hugepages)");
    memtint_free(p);
    p = (void *)1;
    EXPECT(memtint_posix_memalign(&p, (size_t)2 << 30, 100) == ENOMEM && p == (void *)1,
           "alignments above 1 GB are refused");
    for (size_t a = 16; a <= 4096; a *= 2) {
        char *q = memtint_memalign(a, 40);
        EXPECT(q && ((uintptr_t)q % a) == 0, "memalign small sizes");
        memtint_free(q);
    }
    errno = 0;
    EXPECT(memtint_calloc((size_t)1 << 40, (size_t)1 << 40) == NULL && errno == ENOMEM, "calloc overflow is ENOMEM");
    errno = 0;
    EXPECT(memtint_malloc((size_t)1 << 50) == NULL && errno == ENOMEM, "a 1 PB malloc is ENOMEM");

    char *r = memtint_realloc(NULL, 100);
    EXPECT(r != NULL && memtint_usable_size(r) >= 100, "realloc(NULL) mallocs");
    memset(r, 5, 100);
    r = memtint_realloc(r, 300000);
    EXPECT(r && r[99] == 5 && tc_check_block(r, 300000, set) == 0, "realloc grows into a coloured block, keeps data");
    EXPECT(memtint_realloc(r, 0) == NULL, "realloc(p, 0) frees");
    EXPECT(memtint_usable_size(NULL) == 0, "usable_size(NULL)");
    memtint_free(NULL);

    struct memtint_stats st;
    EXPECT(memtint_get_stats(&st) == 0 && st.mode != MEMTINT_MODE_OFF && st.n_masks == tc_n_masks, "stats");
    long released = memtint_release_held_pages();
    struct memtint_stats after;
    memtint_get_stats(&after);
    EXPECT(released >= 0 && after.pages_held_aside == 0 || after.mode == MEMTINT_MODE_HUGEPAGE, "release_held empties the held-aside pool");
    EXPECT(memtint_pages_delivered_of(1) + memtint_pages_delivered_of(2) > 0, "delivered per colour counted");
    EXPECT(memtint_pages_delivered_of(1u << tc_n_masks) == 0, "out-of-range colour has no pages");
    EXPECT(memtint_verify_all_pages() == 0, "nothing moved");
    if (after.mode == MEMTINT_MODE_PAGEMAP) {
        /* Freed large blocks stay assembled: reused, merged, resized in place (range.c). */
        char *a = memtint_malloc(5 * 4096), *b = memtint_malloc(3 * 4096);
        EXPECT(b == a + 5 * 4096, "blocks are carved side by side");
        struct memtint_stats s0, s1;
        memtint_get_stats(&s0);
        memtint_free(a);
        memtint_free(b);
        memtint_get_stats(&s1);
        EXPECT(s1.pages_cached == s0.pages_cached + 8, "freed blocks are kept assembled (pages_cached)");
        char *m = memtint_malloc(8 * 4096);
        EXPECT(m == a, "neighbouring free blocks merge: one 8-page block reuses both");
        EXPECT(tc_check_block(m, 8 * 4096, set) == 0, "a reused block keeps its colours");
        char *d = memtint_realloc(m, 2 * 4096 + 1);
        EXPECT(d == m && memtint_usable_size(d) == 3 * 4096, "realloc shrinks a block in place");
        memset(d, 7, 3 * 4096);
        char *g = memtint_realloc(d, 7 * 4096);
        EXPECT(g == d && g[3 * 4096 - 1] == 7, "realloc grows a block in place into free pages after it");
        EXPECT(tc_check_block(g, 7 * 4096, set) == 0, "the grown block is coloured");
        memtint_free(g);

        /* A fresh set: a block grown past its region's frontier moves the frontier, so the next
         * block is carved after it and cannot be mapped over it. */
        unsigned three[] = {3};
        uint64_t set3[1024] = {0};
        tc_set_from_list(set3, three, 1);
        EXPECT(memtint_set_colors(three, 1) == 0, "set_colors {3}");
        char *x = memtint_malloc(2 * 4096);
        char *x2 = memtint_realloc(x, 6 * 4096);
        EXPECT(x2 == x, "a block at the frontier grows in place");
        memset(x2, 9, 6 * 4096);
        char *y = memtint_malloc(4096);
        memset(y, 1, 4096);
        EXPECT(y == x2 + 6 * 4096, "the next block is carved after the grown one");
        size_t intact = 0;
        while (intact < 6 * 4096 && x2[intact] == 9) intact++;
        EXPECT(intact == 6 * 4096, "the grown block's contents survive the next allocation");
        EXPECT(tc_check_block(x2, 6 * 4096, set3) == 0 && tc_check_block(y, 4096, set3) == 0, "both in colour 3");
        memtint_free(x2);
        memtint_free(y);
    }
    printf("api checks: %d failed\n", failures);
    return failures != 0;
}
