/* hugepage.c — frames from 2 MB hugetlb pages (issue 5, hugepage mode). A hugepage is 2 MB
 * aligned in physical memory, so physical bits < 21 equal the virtual offset: with masks that
 * use only those bits the colour of each 4 KB piece is known without pagemap (and without
 * privilege). Masks with bits >= 21 need one pagemap read per hugepage for its base frame;
 * masks using only bits >= 21 give each hugepage one colour, so whole hugepages can be chained
 * into large contiguous blocks (range.c). Pieces cannot be moved alone: contiguity below 2 MB
 * is bounded by how the set's colours interleave inside a hugepage (mt_huge_max_run). */
#include "internal.h"

#include <errno.h>
#include <sys/mman.h>

bool mt_huge_uniform, mt_huge_needs_pagemap;
mt_huge_slot *mt_huge_slots;
uint32_t *mt_huge_list, mt_huge_n;
static uint32_t *slot_pos;

void mt_huge_slot_add(uint32_t slot) {
    if (!mt_huge_slots) {
        size_t slots = (mt_arena_end - mt_arena_base) / MT_HUGE;
        mt_huge_slots = mt_meta_alloc(slots * sizeof *mt_huge_slots);
        mt_huge_list = mt_meta_alloc(slots * sizeof *mt_huge_list);
        slot_pos = mt_meta_alloc(slots * sizeof *slot_pos);
    }
    if (mt_huge_slots[slot].present) return;
    mt_huge_slots[slot].present = 1;
    slot_pos[slot] = mt_huge_n;
    mt_huge_list[mt_huge_n++] = slot;
}

void mt_huge_slot_remove(uint32_t slot) {
    if (!mt_huge_slots[slot].present) return;
    uint32_t pos = slot_pos[slot], last = mt_huge_list[--mt_huge_n];
    mt_huge_list[pos] = last;
    slot_pos[last] = pos;
    mt_huge_slots[slot].present = 0;
    mt_huge_slots[slot].pool_count = 0;
}

int mt_huge_grow_one(unsigned slot, const char **why) {
    uint32_t e = mt_extent_take(MT_HUGE_ORDER);
    if (e == MT_NIL) { *why = "the library's 512 GB address arena is full"; return -1; }
    char *va = mt_va(e);
    if (mmap(va, MT_HUGE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_FIXED, -1, 0) == MAP_FAILED) {
        mt_reserve_again(e, 1u << MT_HUGE_ORDER);
        mt_extent_release_if_empty(e);
        *why = "no free 2 MB hugepages (as root: echo N > /proc/sys/vm/nr_hugepages)";
        return -1;
    }
    /* A node's hugepages are its own pool (nodeN/hugepages/...): bound before the fault. */
    int node = mt_slot_node(slot);
    if (node >= 0 && mt_node_bind(va, MT_HUGE, node)) {
        mt_reserve_again(e, 1u << MT_HUGE_ORDER);
        mt_extent_release_if_empty(e);
        *why = "binding a hugepage to the node failed (mbind MPOL_BIND)";
        return -1;
    }
    /* Fault it in now: a hugetlb fault that finds no page raises SIGBUS, not ENOMEM. Without
     * MADV_POPULATE_WRITE (EINVAL, Linux < 5.14) a node's hugepages cannot be checked first. */
    if (madvise(va, MT_HUGE, MADV_POPULATE_WRITE) && (errno != EINVAL || node >= 0)) {
        mt_reserve_again(e, 1u << MT_HUGE_ORDER);
        mt_extent_release_if_empty(e);
        *why = node >= 0 ? "no free 2 MB hugepages on the node (as root: echo N > "
                           "/sys/devices/system/node/nodeN/hugepages/hugepages-2048kB/nr_hugepages)"
                         : "no free 2 MB hugepages (as root: echo N > /proc/sys/vm/nr_hugepages)";
        return -1;
    }
    va[0] = 0;
    if (node >= 0 && mt_node_verify((uintptr_t)va, 1, MT_HUGE, node)) {
        mt_reserve_again(e, 1u << MT_HUGE_ORDER);
        mt_extent_release_if_empty(e);
        *why = "the kernel placed a hugepage off the node despite MPOL_BIND (move_pages query)";
        return -1;
    }
    uint64_t base = 0;
    if (mt_huge_needs_pagemap) {
        if (!(base = mt_pagemap_settle((uintptr_t)va))) {
            mt_reserve_again(e, 1u << MT_HUGE_ORDER);
            mt_extent_release_if_empty(e);
            *why = "pagemap shows no frame number for a hugepage, and the masks use bits >= 21";
            return -1;
        }
    }
    mt_huge_slot_add(e >> MT_HUGE_ORDER);
    mt_pages[e].ext_live = 1u << MT_HUGE_ORDER;
    for (uint32_t i = 0; i < 1u << MT_HUGE_ORDER; i++) {
        mt_page *pg = &mt_pages[e + i];
        pg->ext = e;
        pg->pfn = base ? base + i : 0;
        pg->slot = slot;
        pg->colour = (uint16_t)mt_colour_of_paddr(((base & ~511ULL) << MT_PAGE_SHIFT) | ((uint64_t)i << MT_PAGE_SHIFT));
        mt_pool_push(e + i);
    }
    mt_stats.from_kernel += 1u << MT_HUGE_ORDER;
    return 0;
}

/* Inside a hugepage the colour of piece i depends only on i when no mask uses bits >= 21, so the
 * run is a property of the set; with high-bit masks it is computed for base 0 (a lower bound
 * when the set holds whole hugepage colours, handled by chaining in range.c). */
unsigned mt_huge_max_run(const mt_colour_set *s) {
    unsigned best = 0, run = 0;
    for (unsigned i = 0; i < 1u << MT_HUGE_ORDER; i++) {
        unsigned c = mt_colour_of_paddr((uint64_t)i << MT_PAGE_SHIFT);
        run = mt_bit(s->bits, c) ? run + 1 : 0;
        if (run > best) best = run;
    }
    return best;
}
