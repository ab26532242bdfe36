/* Hugepage mode: a search that takes new hugepages gives back, when it ends, those holding no
 * colour in use. Run with i7-860 masks and one whole group of colours (8g..8g+7), so a hugepage
 * is all of the set or none of it. Allocates BLOCK-byte blocks (64: slab pages; 32768: runs
 * inside a hugepage) until ENOMEM or MAX, watching each allocation's growth. The first search
 * that takes more than one hugepage must give back all it took but the one it used and leave
 * nothing held aside; over the run the hugepages taken may be at most 4 times those reserved
 * and those given back at most 3 times (giving back every time makes growth quadratic). The
 * bounds are on the totals, an average per hugepage: the public statistics do not say which
 * hugepage a count belongs to.
 * Usage: test_give_back BLOCK MAX NR_HUGEPAGES; prints "searched=none" when no search took
 * more than one hugepage (the runner skips). */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <stdbool.h>

static struct memtint_stats stats(void) {
    struct memtint_stats st;
    memtint_get_stats(&st);
    return st;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: test_give_back BLOCK MAX NR_HUGEPAGES\n"); return 2; }
    size_t block = (size_t)atol(argv[1]);
    long max = atol(argv[2]), nr = atol(argv[3]), n = 0;
    int bad = 0;
    bool searched = false;
    struct memtint_stats before = stats(), after = before;
    for (; n < max; n++) {
        char *p = memtint_malloc(block);
        after = stats();
        uint64_t took = (after.pages_from_kernel - before.pages_from_kernel) / 512;
        uint64_t gave = (after.pages_released - before.pages_released) / 512;
        if (took > 1 && !searched) {
            searched = true;
            /* used: the hugepage the block (or slab page) came from, none when it failed */
            uint64_t used = p ? 1 : 0;
            if (gave != took - used || after.pages_held_aside != 0) {
                printf("FAIL: a search took %llu hugepages, used %llu, gave back %llu, left %llu pages held aside\n",
                       (unsigned long long)took, (unsigned long long)used, (unsigned long long)gave,
                       (unsigned long long)after.pages_held_aside);
                bad = 1;
            } else {
                printf("search %ld took %llu hugepages, used %llu, gave back %llu\n", n, (unsigned long long)took,
                       (unsigned long long)used, (unsigned long long)gave);
            }
        }
        before = after;
        if (!p) break;
        memset(p, 1, block);
    }
    uint64_t taken = after.pages_from_kernel / 512;
    if (taken > 4 * (uint64_t)nr) {
        printf("FAIL: %llu hugepages taken in all, more than 4 times the %ld reserved\n", (unsigned long long)taken, nr);
        bad = 1;
    }
    uint64_t released = after.pages_released / 512;
    if (released > 3 * (uint64_t)nr) {
        printf("FAIL: %llu hugepages given back in all, more than 3 times the %ld reserved\n", (unsigned long long)released, nr);
        bad = 1;
    }
    printf("blocks=%ld searched=%s taken=%llu released=%llu held_aside=%llu\n", n, searched ? "yes" : "none",
           (unsigned long long)taken, (unsigned long long)released,
           (unsigned long long)after.pages_held_aside);
    return bad;
}
