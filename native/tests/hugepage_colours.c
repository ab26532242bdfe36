/* Test helper: maps every free 2 MB hugepage (at most argv[1]), reads each one's frame from
 * pagemap and prints "colour count" lines for the masks in MEMTINT_COLOR_MASKS, most common
 * first. The runner uses it to pick a colour the machine's hugepage pool can actually supply
 * (hugetlb frames are not spread evenly over high address bits). */
#include <sys/mman.h>
#include "check.h"

int main(int argc, char **argv) {
    tc_load_masks();
    int limit = argc > 1 ? atoi(argv[1]) : 1024;
    static long count[1 << 16];
    for (int i = 0; i < limit; i++) {
        char *p = mmap(0, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (p == MAP_FAILED) break;
        if (madvise(p, 2 << 20, MADV_POPULATE_WRITE)) break;
        count[tc_colour(tc_pfn(p) << 12)]++;
    }
    for (;;) {
        long best = 0; unsigned bc = 0;
        for (unsigned c = 0; c < 1u << tc_n_masks; c++) if (count[c] > best) { best = count[c]; bc = c; }
        if (!best) break;
        printf("%u %ld\n", bc, best);
        count[bc] = 0;
    }
    return 0;
}
