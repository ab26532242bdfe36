/* arena.c — one reserved (PROT_NONE, unbacked) virtual arena holds every coloured page, so
 * free() knows its own memory by an address compare, and a flat array of per-page descriptors
 * (touched lazily) records each page's colour, frame and role. The arena is carved into
 * naturally aligned extents of 2^k pages: frame chunks and coloured blocks; an extent whose pages
 * have all moved away is reused. Freed places are reserved again at once so the kernel never puts
 * someone else's mapping where a later MREMAP_FIXED would overwrite it. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_BYTES (1ULL << 39)   /* 512 GB of address space for coloured pages, no memory */
#define GAP_BYTES MT_HUGE           /* left unmapped so the two reservations stay apart */
#define STAGING_BYTES (1ULL << 37)  /* 128 GB where new frames arrive and held-aside ones stay */
#define MAX_ORDER 28
#define STAGING_FIRST ((uint32_t)((ARENA_BYTES + GAP_BYTES) >> MT_PAGE_SHIFT))
#define STAGING_END ((uint32_t)((ARENA_BYTES + GAP_BYTES + STAGING_BYTES) >> MT_PAGE_SHIFT))

uintptr_t mt_arena_base, mt_arena_end;
mt_page *mt_pages;
/* region 0: the coloured arena (page 0 stays unused: MT_NIL); region 1: staging */
static uint32_t bump[2] = {1 << MT_HUGE_ORDER, STAGING_FIRST};
static const uint32_t region_end[2] = {(uint32_t)(ARENA_BYTES >> MT_PAGE_SHIFT), STAGING_END};
static uint32_t free_extents[2][MAX_ORDER + 1]; /* stacks linked through mt_pages[].next */

void *mt_meta_alloc(size_t bytes) {
    void *p = mmap(0, (bytes + MT_PAGE - 1) & ~(MT_PAGE - 1), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* One reservation split in two by an unmapped gap: the arena, where only pages of colours in
 * use live (so /proc/PID/maps shows the coloured heap as one big region, which `memtint
 * inspect` relies on), and the staging area, where chunks arrive and pages of colours nobody
 * uses are held aside. */
int mt_arena_init(void) {
    size_t total = ARENA_BYTES + GAP_BYTES + STAGING_BYTES;
    void *p = mmap(0, GAP_BYTES + total + MT_ARENA_ALIGN, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return -1;
    /* Aligned to 1 GB so an extent of up to 2^18 pages is aligned in address as in index (memalign
     * up to 1 GB; hugetlb needs 2 MB); a guard below the arena. */
    mt_arena_base = ((uintptr_t)p + GAP_BYTES + MT_ARENA_ALIGN - 1) & ~(MT_ARENA_ALIGN - 1);
    mt_arena_end = mt_arena_base + total;
    /* The guard and the gap hold a file mapping (of /dev/zero, no memory), so no anonymous
     * mapping (the library's metadata, the program's) adjoins the arena and looks part of it. */
    int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    uintptr_t guards[2] = {mt_arena_base - GAP_BYTES, mt_arena_base + ARENA_BYTES};
    for (int i = 0; i < 2; i++)
        if (fd < 0 || mmap((void *)guards[i], GAP_BYTES, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
            munmap((void *)guards[i], GAP_BYTES);
    if (fd >= 0) close(fd);
    mt_pages = mt_meta_alloc(((size_t)total >> MT_PAGE_SHIFT) * sizeof(mt_page));
    return mt_pages ? 0 : -1;
}

static uint32_t take(int region, unsigned order) {
    if (order > MAX_ORDER) return MT_NIL;
    uint32_t e = free_extents[region][order];
    if (e != MT_NIL) {
        free_extents[region][order] = mt_pages[e].next;
    } else {
        uint64_t size = 1ULL << order;
        uint64_t start = ((uint64_t)bump[region] + size - 1) & ~(size - 1);
        if (start + size > region_end[region]) return MT_NIL;
        bump[region] = (uint32_t)(start + size);
        e = (uint32_t)start;
    }
    mt_pages[e].next = MT_NIL;
    mt_pages[e].ext_order = (uint8_t)order;
    mt_pages[e].ext_live = 0;
    return e;
}

uint32_t mt_extent_take(unsigned order) { return take(0, order); }
uint32_t mt_extent_take_staging(unsigned order) { return take(1, order); }

void mt_extent_page_gone(uint32_t idx, uint32_t count) {
    uint32_t e = mt_pages[idx].ext;
    mt_page *head = &mt_pages[e];
    head->ext_live -= count;
    if (head->ext_live == 0) {
        int region = e >= STAGING_FIRST;
        head->next = free_extents[region][head->ext_order];
        free_extents[region][head->ext_order] = e;
    }
}

void mt_extent_release_if_empty(uint32_t e) {
    if (mt_pages[e].ext_live == 0) {
        mt_pages[e].ext = e;
        mt_pages[e].ext_live = 1;
        mt_extent_page_gone(e, 1);
    }
}

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

void *mt_move_pages(uintptr_t from, size_t bytes, uintptr_t to) {
    /* DONTUNMAP leaves the source mapped and empty (Linux >= 5.7; hugetlb from 5.13): the
     * caller's mt_reserve_again then replaces it in one step. Without it (EINVAL), the source
     * is a hole until then. */
    void *p = mremap((void *)from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, (void *)to);
    if (p == MAP_FAILED && errno == EINVAL)
        p = mremap((void *)from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
    return p;
}

void mt_reserve_again(uint32_t idx, uint32_t npages) {
    /* Replaces whatever is there (a moved-out hole or a released frame) with an unbacked
     * reservation; cannot fail short of the map-count limit, and then the hole stays a hole. */
    mmap(mt_va(idx), (size_t)npages << MT_PAGE_SHIFT, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

void mt_arena_used(uint32_t range[2][2]) {
    range[0][0] = 1;
    range[0][1] = bump[0];
    range[1][0] = STAGING_FIRST;
    range[1][1] = bump[1];
}

bool mt_in_coloured_arena(const void *p) {
    return (uintptr_t)p >= mt_arena_base && (uintptr_t)p < mt_arena_base + ARENA_BYTES;
}
