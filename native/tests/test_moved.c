/* Stability (issue 5): the kernel may migrate mlocked pages (compaction). Allocates a coloured
 * block, asks the kernel to compact all memory, and prints how many of the block's pages
 * memtint_check_pages() found on a new frame (and whether the contents survived). The runner
 * runs it with vm.compact_unevictable_allowed=1 (pages may move: the check must see it when it
 * happens) and =0 (the documented setting: no page may move). Usage: test_moved MB */
#include "../libmemtint/include/memtint.h"
#include "check.h"

int main(int argc, char **argv) {
    size_t n = (size_t)atol(argc > 1 ? argv[1] : "128") << 20;
    tc_load_masks();
    unsigned char *p = memtint_malloc(n);
    if (!p) { perror("memtint_malloc"); return 1; }
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7);
    long before = memtint_check_pages(p, n);
    int fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
    if (fd < 0 || write(fd, "1", 1) != 1) { perror("compact_memory"); return 2; }
    close(fd);
    long moved = memtint_check_pages(p, n);
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7)) { fprintf(stderr, "contents changed\n"); return 1; }
    /* the library's record now follows the new frames: colour_of agrees with pagemap */
    long disagree = 0;
    for (size_t i = 0; i < n; i += 4096)
        disagree += memtint_color_of(p + i) != (int)tc_colour(tc_pfn(p + i) << 12);
    printf("moved_before=%ld moved_by_compaction=%ld record_disagrees=%ld\n", before, moved, disagree);
    return before != 0 || moved < 0 || disagree != 0;
}
