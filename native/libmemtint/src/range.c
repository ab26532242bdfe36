/* range.c — virtually contiguous coloured blocks for allocations larger than a slab (issue 5:
 * "build contiguous virtual ranges out of coloured frames"). Pagemap mode: reserve an aligned
 * extent and mremap(MREMAP_MAYMOVE|MREMAP_FIXED) single coloured frames into it; the frames keep
 * their mlock and their frame. Hugepage mode: a run of pieces of the set's colours inside one
 * hugepage, or, when every hugepage has a single colour (masks only at bits >= 21), whole
 * hugepages mremapped side by side. Each moved page costs a mapping (VMA): see
 * docs/libmemtint.md on vm.max_map_count. */
#include "internal.h"

#include <errno.h>
#include <sys/mman.h>

#define HUGE_PIECES (1u << MT_HUGE_ORDER)

static unsigned order_for(size_t npages, unsigned align_order) {
    unsigned o = 0;
    while ((1ULL << o) < npages) o++;
    return o > align_order ? o : align_order;
}

static void mark_block(uint32_t e, size_t npages) {
    mt_pages[e].state = PD_HEAD;
    mt_pages[e].aux = (uint32_t)npages;
    for (size_t i = 1; i < npages; i++) mt_pages[e + i].state = PD_BODY;
}

/* Moves n neighbouring pages [from, from+n) to [to, to+n) of extent e. One mremap when they
 * are one mapping (or the kernel moves several at once, Linux >= 6.17); page by page otherwise. */
static bool move_pages(uint32_t from, uint32_t to, uint32_t n, uint32_t e) {
    if (mremap(mt_va(from), (size_t)n << MT_PAGE_SHIFT, (size_t)n << MT_PAGE_SHIFT,
               MREMAP_MAYMOVE | MREMAP_FIXED, mt_va(to)) == MAP_FAILED) {
        if (n == 1) return false;
        for (uint32_t k = 0; k < n; k++)
            if (!move_pages(from + k, to + k, 1, e)) return false;
        return true;
    }
    mt_reserve_again(from, n);
    for (uint32_t k = 0; k < n; k++) {
        mt_page *src = &mt_pages[from + k], *dst = &mt_pages[to + k];
        dst->colour = src->colour;
        dst->pfn = src->pfn;
        dst->ext = e;
        src->state = PD_NONE;
    }
    mt_extent_page_gone(from, n);
    mt_pages[e].ext_live += n;
    return true;
}

/* Blocks are assembled from runs of neighbouring pool pages of the set's colours (frames the
 * kernel handed out together), so a block is few mappings when the colours allow. */
static void *pagemap_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    const char *why = "";
    if (mt_pool_available(s) < npages && mt_pool_grow(s, npages, &why)) {
        uint64_t all = 0;
        for (unsigned c = 0; c < mt_n_colours; c++) all += mt_pool_count[c];
        if (mt_cfg.on_exhaustion != MT_EXHAUST_SPILL || all < npages) {
            mt_exhausted(s, why);
            return NULL;
        }
    }
    uint32_t e = mt_extent_take(order_for(npages, align_order));
    if (e == MT_NIL) { mt_exhausted(s, "the library's 512 GB address arena is full"); return NULL; }
    for (size_t i = 0; i < npages;) {
        uint32_t idx = mt_pool_take_page(s), run = 1;
        if (idx != MT_NIL) {
            uint32_t ext = mt_pages[idx].ext, ext_end = ext + (1u << mt_pages[ext].ext_order);
            while (i + run < npages && idx + run < ext_end) {
                mt_page *pg = &mt_pages[idx + run];
                if (pg->state != PD_POOL || pg->ext != mt_pages[idx].ext || !mt_bit(s->bits, pg->colour)) break;
                mt_pool_remove(idx + run);
                mt_pool_deliver(idx + run, false);
                run++;
            }
        }
        if (idx == MT_NIL || !move_pages(idx, e + (uint32_t)i, run, e)) {
            /* give back what this block took; pages already moved stay where they are now */
            for (uint32_t k = 0; idx != MT_NIL && k < run; k++)
                mt_pool_return(mt_pages[idx + k].state == PD_NONE ? e + (uint32_t)i + k : idx + k);
            for (size_t k = 0; k < i; k++) mt_pool_return(e + (uint32_t)k);
            mt_extent_release_if_empty(e);
            if (idx != MT_NIL)
                mt_exhausted(s, "mremap failed: too many mappings (raise vm.max_map_count, "
                                "e.g. sysctl vm.max_map_count=1048576)");
            errno = ENOMEM;
            return NULL;
        }
        i += run;
    }
    mark_block(e, npages);
    return mt_va(e);
}

/* A run of npages free pieces inside hugepage `slot`, aligned to 2^align_order pages. */
static uint32_t find_run(uint32_t slot, size_t npages, unsigned align_order, const mt_colour_set *s) {
    if (mt_huge_slots[slot].pool_count < npages) return MT_NIL;
    uint32_t first = slot << MT_HUGE_ORDER, step = 1u << align_order;
    for (uint32_t start = 0; start + npages <= HUGE_PIECES; start += step) {
        size_t k = 0;
        while (k < npages) {
            mt_page *pg = &mt_pages[first + start + k];
            if (pg->state != PD_POOL || (s && !mt_bit(s->bits, pg->colour))) break;
            k++;
        }
        if (k == npages) return first + start;
        /* jump past the piece that broke the run */
        start = ((start + (uint32_t)k) / step) * step;
    }
    return MT_NIL;
}

static void *take_run(uint32_t at, size_t npages, const mt_colour_set *s) {
    for (size_t i = 0; i < npages; i++) {
        uint32_t idx = at + (uint32_t)i;
        mt_pool_remove(idx);
        mt_pool_deliver(idx, s && !mt_bit(s->bits, mt_pages[idx].colour));
    }
    mark_block(at, npages);
    return mt_va(at);
}

static void *huge_run_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    const char *why = "";
    const mt_colour_set *want = s;
    if (!mt_huge_needs_pagemap && npages > mt_huge_max_run(s)) {
        if (mt_cfg.on_exhaustion != MT_EXHAUST_SPILL) {
            mt_exhausted(s, "the block is larger than the longest run of these colours inside a "
                            "2 MB hugepage (hugepage mode with masks below bit 21)");
            return NULL;
        }
        want = NULL; /* spill: any colours, counted */
    }
    /* next fit: start where the last run was found, so filling hugepages in turn stays linear */
    static uint32_t hint;
    for (uint32_t k = 0; k < mt_huge_n; k++) {
        uint32_t i = (hint + k) % mt_huge_n;
        uint32_t at = find_run(mt_huge_list[i], npages, align_order, want);
        if (at != MT_NIL) { hint = i; return take_run(at, npages, s); }
    }
    /* Hugepages without such a run are held aside, as pagemap mode holds frames aside. */
    for (;;) {
        if (mt_cfg.pool_limit_pages && mt_stats.from_kernel + HUGE_PIECES > mt_cfg.pool_limit_pages) {
            why = "MEMTINT_POOL_LIMIT reached";
            break;
        }
        if (mt_huge_grow_one(&why)) break;
        uint32_t at = find_run(mt_huge_list[mt_huge_n - 1], npages, align_order, want);
        if (at != MT_NIL) return take_run(at, npages, s);
    }
    if (want && mt_cfg.on_exhaustion == MT_EXHAUST_SPILL) {
        for (uint32_t i = 0; i < mt_huge_n; i++) {
            uint32_t at = find_run(mt_huge_list[i], npages, align_order, NULL);
            if (at != MT_NIL) return take_run(at, npages, s);
        }
    }
    mt_exhausted(s, why);
    return NULL;
}

/* Every piece of hugepage `slot` has a colour of the set (one check when hugepages are
 * single-coloured; otherwise e.g. i7-860 colours 0-7 are the hugepages with b21 = b22 = 0). */
static bool hugepage_in_set(uint32_t slot, const mt_colour_set *s) {
    uint32_t first = slot << MT_HUGE_ORDER, n = mt_huge_uniform ? 1 : HUGE_PIECES;
    for (uint32_t k = 0; k < n; k++)
        if (!mt_bit(s->bits, mt_pages[first + k].colour)) return false;
    return true;
}

/* A free whole hugepage of the set's colours (any colour when s is NULL). */
static uint32_t free_hugepage(const mt_colour_set *s) {
    for (uint32_t i = 0; i < mt_huge_n; i++) {
        uint32_t slot = mt_huge_list[i];
        if (mt_huge_slots[slot].pool_count != HUGE_PIECES) continue;
        if (s && !hugepage_in_set(slot, s)) continue;
        return slot;
    }
    return UINT32_MAX;
}

static void *huge_chain_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    size_t nh = (npages + HUGE_PIECES - 1) / HUGE_PIECES;
    const mt_colour_set *want = s;
    if (!mt_huge_needs_pagemap && mt_huge_max_run(s) < HUGE_PIECES) {
        /* masks below bit 21 only: every hugepage has the same colour pattern, never all in s */
        if (mt_cfg.on_exhaustion != MT_EXHAUST_SPILL) {
            mt_exhausted(s, "blocks over 2 MB in hugepage mode need whole hugepages of the colours; "
                            "with masks below bit 21 these colours interleave inside every hugepage");
            return NULL;
        }
        want = NULL;
    }
    /* Gather enough free hugepages first, holding the others aside. */
    const char *why = "";
    size_t have = 0;
    for (uint32_t i = 0; i < mt_huge_n; i++) {
        uint32_t slot = mt_huge_list[i];
        if (mt_huge_slots[slot].pool_count == HUGE_PIECES && (!want || hugepage_in_set(slot, want)))
            have++;
    }
    while (have < nh) {
        if (mt_cfg.pool_limit_pages && mt_stats.from_kernel + HUGE_PIECES > mt_cfg.pool_limit_pages) {
            why = "MEMTINT_POOL_LIMIT reached";
            break;
        }
        if (mt_huge_grow_one(&why)) break;
        if (!want || hugepage_in_set(mt_huge_list[mt_huge_n - 1], want)) have++;
    }
    if (have < nh) {
        if (want && mt_cfg.on_exhaustion == MT_EXHAUST_SPILL) want = NULL;
        else {
            mt_exhausted(s, *why ? why : "not enough free hugepages of these colours");
            return NULL;
        }
    }
    uint32_t e = mt_extent_take(order_for(nh * HUGE_PIECES, align_order > MT_HUGE_ORDER ? align_order : MT_HUGE_ORDER));
    if (e == MT_NIL) { mt_exhausted(s, "the library's 512 GB address arena is full"); return NULL; }
    for (size_t h = 0; h < nh; h++) {
        uint32_t slot = free_hugepage(want);
        if (slot == UINT32_MAX) slot = free_hugepage(NULL);
        uint32_t from = slot << MT_HUGE_ORDER, to = e + (uint32_t)(h * HUGE_PIECES);
        if (slot == UINT32_MAX ||
            mremap(mt_va(from), MT_HUGE, MT_HUGE, MREMAP_MAYMOVE | MREMAP_FIXED, mt_va(to)) == MAP_FAILED) {
            for (size_t k = 0; k < h * HUGE_PIECES; k++) mt_pool_return(e + (uint32_t)k);
            mt_extent_release_if_empty(e);
            mt_exhausted(s, "moving a hugepage (mremap) failed");
            return NULL;
        }
        mt_reserve_again(from, HUGE_PIECES);
        for (uint32_t k = 0; k < HUGE_PIECES; k++) {
            mt_pool_remove(from + k);
            mt_page *src = &mt_pages[from + k], *dst = &mt_pages[to + k];
            dst->colour = src->colour;
            dst->pfn = src->pfn;
            dst->ext = e;
            src->state = PD_NONE;
            mt_pool_deliver(to + k, !mt_bit(s->bits, dst->colour));
        }
        mt_huge_slot_remove(slot);
        mt_extent_page_gone(from, HUGE_PIECES);
        mt_huge_slot_add(to >> MT_HUGE_ORDER);
        mt_pages[e].ext_live += HUGE_PIECES;
    }
    mark_block(e, nh * HUGE_PIECES);
    return mt_va(e);
}

void *mt_range_alloc(mt_colour_set *s, size_t npages, unsigned align_order) {
    if (npages == 0 || npages > (1u << 27)) { errno = ENOMEM; return NULL; }
    pthread_mutex_lock(&mt_pool_lock);
    void *p;
    if (mt_mode == MEMTINT_MODE_PAGEMAP) p = pagemap_block(s, npages, align_order);
    else if (npages <= HUGE_PIECES && align_order <= MT_HUGE_ORDER) p = huge_run_block(s, npages, align_order);
    else p = huge_chain_block(s, npages, align_order);
    pthread_mutex_unlock(&mt_pool_lock);
    return p;
}

void mt_range_free(uint32_t head) {
    pthread_mutex_lock(&mt_pool_lock);
    uint32_t n = mt_pages[head].aux;
    for (uint32_t i = 0; i < n; i++) mt_pool_return(head + i);
    pthread_mutex_unlock(&mt_pool_lock);
}
