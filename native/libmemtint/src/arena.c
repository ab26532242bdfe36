/* arena.c — one reserved (PROT_NONE, unbacked) virtual arena holds every coloured page, so
 * free() knows its own memory by an address compare, and a flat array of per-page descriptors
 * (touched lazily) records each page's colour, frame and role. The arena is carved into
 * naturally aligned extents of 2^k pages: frame chunks and coloured blocks; an extent whose pages
 * have all moved away is reused. Freed places are reserved again at once so the kernel never puts
 * someone else's mapping where a later MREMAP_FIXED would overwrite it. */
#include "internal.h"

#include <sys/mman.h>

#define ARENA_BYTES (1ULL << 39) /* 512 GB of address space, no memory */
#define MAX_ORDER 28

uintptr_t mt_arena_base, mt_arena_end;
mt_page *mt_pages;
static uint32_t bump = 1 << MT_HUGE_ORDER; /* page 0 stays unused (MT_NIL) */
static uint32_t free_extents[MAX_ORDER + 1]; /* stacks linked through mt_pages[].next */

void *mt_meta_alloc(size_t bytes) {
    void *p = mmap(0, (bytes + MT_PAGE - 1) & ~(MT_PAGE - 1), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int mt_arena_init(void) {
    /* Over-reserve by one hugepage so the base is 2 MB aligned (hugetlb pages need it). */
    void *p = mmap(0, ARENA_BYTES + MT_HUGE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return -1;
    mt_arena_base = ((uintptr_t)p + MT_HUGE - 1) & ~(MT_HUGE - 1);
    mt_arena_end = mt_arena_base + ARENA_BYTES;
    mt_pages = mt_meta_alloc((ARENA_BYTES >> MT_PAGE_SHIFT) * sizeof(mt_page));
    return mt_pages ? 0 : -1;
}

uint32_t mt_extent_take(unsigned order) {
    if (order > MAX_ORDER) return MT_NIL;
    uint32_t e = free_extents[order];
    if (e != MT_NIL) {
        free_extents[order] = mt_pages[e].next;
    } else {
        uint64_t size = 1ULL << order;
        uint64_t start = ((uint64_t)bump + size - 1) & ~(size - 1);
        if (start + size > (ARENA_BYTES >> MT_PAGE_SHIFT)) return MT_NIL;
        bump = (uint32_t)(start + size);
        e = (uint32_t)start;
    }
    mt_pages[e].next = MT_NIL;
    mt_pages[e].ext_order = (uint8_t)order;
    mt_pages[e].ext_live = 0;
    return e;
}

void mt_extent_page_gone(uint32_t idx, uint32_t count) {
    uint32_t e = mt_pages[idx].ext;
    mt_page *head = &mt_pages[e];
    head->ext_live -= count;
    if (head->ext_live == 0) {
        head->next = free_extents[head->ext_order];
        free_extents[head->ext_order] = e;
    }
}

void mt_reserve_again(uint32_t idx, uint32_t npages) {
    /* Replaces whatever is there (a moved-out hole or a released frame) with an unbacked
     * reservation; cannot fail short of the map-count limit, and then the hole stays a hole. */
    mmap(mt_va(idx), (size_t)npages << MT_PAGE_SHIFT, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

uint32_t mt_arena_top(void) { return bump; }
