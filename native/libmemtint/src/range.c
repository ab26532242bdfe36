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

/* A block in use: its first page PD_HEAD (size, set), the others PD_BODY, the last one
 * recording the first (free blocks find their neighbours by it: see cache_put). */
static void mark_block(uint32_t e, size_t npages, const mt_colour_set *s) {
    mt_pages[e].state = PD_HEAD;
    mt_pages[e].aux = (uint32_t)npages;
    mt_pages[e].next = s->id;
    for (size_t i = 1; i < npages; i++) mt_pages[e + i].state = PD_BODY;
    if (npages > 1) mt_pages[e + npages - 1].aux = e;
}

/* A page's frame, now mapped at descriptor `to` of extent `e`: its old descriptor is free. */
static void move_descriptor(uint32_t from, uint32_t to, uint32_t e) {
    mt_page *src = &mt_pages[from], *dst = &mt_pages[to];
    dst->colour = src->colour;
    dst->pfn = src->pfn;
    dst->slot = src->slot;
    dst->ext = e;
    src->state = PD_NONE;
}

/* Moves n neighbouring pages [from, from+n) to [to, to+n) of extent e. One mremap when they
 * are one mapping (or the kernel moves several at once, Linux >= 6.17); page by page otherwise. */
static bool move_pages(uint32_t from, uint32_t to, uint32_t n, uint32_t e) {
    if (mt_move_pages((uintptr_t)mt_va(from), (size_t)n << MT_PAGE_SHIFT, (uintptr_t)mt_va(to)) == MAP_FAILED) {
        if (n == 1) return false;
        for (uint32_t k = 0; k < n; k++)
            if (!move_pages(from + k, to + k, 1, e)) return false;
        return true;
    }
    mt_reserve_again(from, n);
    for (uint32_t k = 0; k < n; k++) move_descriptor(from + k, to + k, e);
    mt_extent_page_gone(from, n);
    mt_pages[e].ext_live += n;
    return true;
}

/* ---- freed blocks kept assembled (pagemap mode) ----
 * Assembling a block costs an mremap per run of neighbouring frames and an mmap re-reserving
 * each hole, and the kernel's work per mapping dominated mixed-size workloads (96 % of their
 * time). So, as dlmalloc does with address space, a freed block keeps its frames where they
 * stand, merged with free neighbours, in a bin of its colour set; an allocation takes the
 * best-fitting free block and splits off the rest, with no system call. Blocks up to
 * REGION_MAX pages are carved from a per-set region at its frontier (extending a free block
 * that ends there), so neighbouring blocks merge back into large ones. Free pages go back to
 * the pool only when the set's pool runs short. Every block of an extent or region belongs to
 * the set it was assembled for. Each block's last page records its first (aux), so a freed
 * block finds a free block before it. */

#define CACHE_SCAN 8       /* blocks looked at per bin */
#define REGION_ORDER 14    /* 64 MB of address space per region */
#define REGION_MAX (1u << (REGION_ORDER - 3))

static unsigned bin_of(uint64_t n) {
    if (n <= MT_CACHE_EXACT) return (unsigned)n - 1;
    return MT_CACHE_EXACT + (unsigned)(63 - __builtin_clzll(n)) - 5;
}

static void cache_link(mt_colour_set *s, uint32_t head, uint32_t n) {
    mt_page *h = &mt_pages[head];
    unsigned b = bin_of(n);
    h->state = PD_CACHED;
    h->aux = n;
    if (n > 1) mt_pages[head + n - 1].aux = head;
    h->prev = MT_NIL;
    h->next = s->cache[b];
    if (h->next != MT_NIL) mt_pages[h->next].prev = head;
    s->cache[b] = head;
    s->cached += n;
}

static void cache_unlink(mt_colour_set *s, uint32_t head) {
    mt_page *h = &mt_pages[head];
    if (h->prev != MT_NIL) mt_pages[h->prev].next = h->next;
    else s->cache[bin_of(h->aux)] = h->next;
    if (h->next != MT_NIL) mt_pages[h->next].prev = h->prev;
    s->cached -= h->aux;
}

/* The free block ending just before page idx, in the same extent; MT_NIL if none. */
static uint32_t free_block_before(uint32_t idx) {
    mt_page *p = &mt_pages[idx - 1];
    uint32_t h = p->state == PD_CACHED ? idx - 1 : p->state == PD_BODY ? p->aux : MT_NIL;
    if (h == MT_NIL || mt_pages[h].state != PD_CACHED || h + mt_pages[h].aux != idx) return MT_NIL;
    return mt_pages[h].ext == mt_pages[idx].ext ? h : MT_NIL;
}

/* Pages [head, head + n) of the set become free, merged with free neighbours. */
static void cache_put(mt_colour_set *s, uint32_t head, uint32_t n) {
    uint32_t after = head + n, before = free_block_before(head);
    if (mt_pages[after].state == PD_CACHED && mt_pages[after].ext == mt_pages[head].ext) {
        n += mt_pages[after].aux;
        cache_unlink(s, after);
        mt_pages[after].state = PD_BODY;
    }
    if (before != MT_NIL) {
        cache_unlink(s, before);
        mt_pages[head].state = PD_BODY;
        n += head - before;
        head = before;
    }
    cache_link(s, head, n);
}

/* The smallest free block (of the first CACHE_SCAN in each bin) with at least npages and
 * aligned; its rest stays free. MT_NIL if none. */
static uint32_t cache_take(mt_colour_set *s, size_t npages, unsigned align_order) {
    uint32_t mask = (1u << align_order) - 1;
    for (unsigned b = bin_of(npages); b < MT_CACHE_BINS; b++) {
        unsigned seen = 0;
        for (uint32_t h = s->cache[b]; h != MT_NIL && seen < CACHE_SCAN; h = mt_pages[h].next, seen++) {
            uint32_t n = mt_pages[h].aux;
            if (n < npages || (h & mask)) continue;
            cache_unlink(s, h);
            if (n > npages) cache_link(s, h + (uint32_t)npages, n - (uint32_t)npages);
            mark_block(h, npages, s);
            return h;
        }
    }
    return MT_NIL;
}

void mt_range_cache_drain(mt_colour_set *s) {
    for (unsigned b = 0; b < MT_CACHE_BINS; b++)
        while (s->cache[b] != MT_NIL) {
            uint32_t h = s->cache[b], n = mt_pages[h].aux;
            cache_unlink(s, h);
            for (uint32_t k = 0; k < n; k++) mt_pool_return(h + k);
        }
}

uint64_t mt_range_cached_pages(void) {
    uint64_t n = 0;
    for (unsigned i = 0; i < mt_n_sets; i++) n += mt_sets[i]->cached;
    return n;
}

/* Fills [at, at + count) of extent e with pool pages of the set, a run of neighbouring frames
 * per mremap. On failure every page it took is back in the pool and false is returned. */
static bool fill_from_pool(mt_colour_set *s, uint32_t e, uint32_t at, size_t count) {
    for (size_t i = 0; i < count;) {
        uint32_t idx = mt_pool_take_page(s), run = 1;
        if (idx != MT_NIL) {
            uint32_t ext = mt_pages[idx].ext, ext_end = ext + (1u << mt_pages[ext].ext_order);
            while (i + run < count && idx + run < ext_end) {
                mt_page *pg = &mt_pages[idx + run];
                if (pg->state != PD_POOL || pg->ext != mt_pages[idx].ext || pg->slot != s->slot ||
                    !mt_bit(s->bits, pg->colour))
                    break;
                mt_pool_remove(idx + run);
                mt_pool_deliver(idx + run, false);
                run++;
            }
        }
        if (idx == MT_NIL || !move_pages(idx, at + (uint32_t)i, run, e)) {
            /* give back what was taken; pages already moved stay where they are now */
            for (uint32_t k = 0; idx != MT_NIL && k < run; k++)
                mt_pool_return(mt_pages[idx + k].state == PD_NONE ? at + (uint32_t)i + k : idx + k);
            for (size_t k = 0; k < i; k++) mt_pool_return(at + (uint32_t)k);
            if (idx != MT_NIL)
                mt_exhausted(s, "mremap failed: too many mappings (raise vm.max_map_count, "
                                "e.g. sysctl vm.max_map_count=1048576)");
            errno = ENOMEM;
            return false;
        }
        i += run;
    }
    return true;
}

/* Enough pool pages of the set for npages, draining its free blocks before growing; false
 * (exhaustion reported) if neither helps and spilling cannot either. */
static bool pool_ready(mt_colour_set *s, size_t npages) {
    const char *why = "";
    if (mt_pool_available(s) >= npages) return true;
    mt_range_cache_drain(s);
    if (mt_pool_available(s) >= npages || !mt_pool_grow(s, npages, &why)) return true;
    uint64_t all = 0; /* spilling trades colours, never the node */
    for (unsigned c = 0; c < mt_n_colours; c++) all += mt_pool_count[s->base + c];
    if (mt_cfg.on_exhaustion == MT_EXHAUST_SPILL && all >= npages) return true;
    mt_exhausted(s, why);
    return false;
}

/* The set's region with room for npages at its frontier, a new one if needed; MT_NIL if the
 * arena is full. A region in use holds one count in its extent so it is never released. */
static uint32_t region_for(mt_colour_set *s, size_t npages) {
    if (s->region != MT_NIL && s->frontier + npages <= s->region + (1u << REGION_ORDER)) return s->region;
    uint32_t r = mt_extent_take(REGION_ORDER);
    if (r == MT_NIL) return MT_NIL;
    mt_pages[r].ext = r;
    mt_pages[r].ext_live = 1;
    if (s->region != MT_NIL) mt_extent_page_gone(s->region, 1);
    s->region = s->frontier = r;
    return r;
}

/* Blocks are assembled from runs of neighbouring pool pages of the set's colours (frames the
 * kernel handed out together), so a block is few mappings when the colours allow. */
static void *pagemap_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    uint32_t h = cache_take(s, npages, align_order);
    if (h != MT_NIL) return mt_va(h);
    if (npages <= REGION_MAX && align_order == 0) {
        uint32_t r = region_for(s, npages);
        if (r == MT_NIL) { mt_exhausted(s, "the library's 512 GB address arena is full"); return NULL; }
        uint32_t start = s->frontier, tail = start > r ? free_block_before(start) : MT_NIL;
        size_t need = npages - (tail != MT_NIL ? start - tail : 0);
        if (tail != MT_NIL) cache_unlink(s, tail); /* a drain must not take it meanwhile */
        if (!pool_ready(s, need) || !fill_from_pool(s, r, start, need)) {
            if (tail != MT_NIL) cache_link(s, tail, start - tail);
            return NULL;
        }
        s->frontier += (uint32_t)need;
        if (tail != MT_NIL) start = tail;
        mark_block(start, npages, s);
        return mt_va(start);
    }
    if (!pool_ready(s, npages)) return NULL;
    uint32_t e = mt_extent_take(order_for(npages, align_order));
    if (e == MT_NIL) { mt_exhausted(s, "the library's 512 GB address arena is full"); return NULL; }
    if (!fill_from_pool(s, e, e, npages)) {
        mt_extent_release_if_empty(e);
        return NULL;
    }
    mark_block(e, npages, s);
    return mt_va(e);
}

/* A run of npages free pieces inside hugepage `slot` of node slot `node`, aligned to
 * 2^align_order pages, of the colours of s (any colours when s is NULL). */
static uint32_t find_run(uint32_t slot, size_t npages, unsigned align_order, const mt_colour_set *s, unsigned node) {
    uint32_t first = slot << MT_HUGE_ORDER, step = 1u << align_order;
    if (mt_huge_slots[slot].pool_count < npages || mt_pages[first].slot != node) return MT_NIL;
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

/* A piece of another colour handed out (spill); `shape`: because no hugepage could give the
 * block in the set's colours, not because the colours ran out (the exit warning says which). */
static void deliver_piece(uint32_t idx, const mt_colour_set *s, bool shape) {
    bool spilled = !mt_bit(s->bits, mt_pages[idx].colour);
    mt_pool_deliver(idx, spilled);
    if (spilled && shape) mt_stats.spilled_shape++;
}

static void *take_run(uint32_t at, size_t npages, const mt_colour_set *s, bool shape) {
    for (size_t i = 0; i < npages; i++) {
        uint32_t idx = at + (uint32_t)i;
        mt_pool_remove(idx);
        deliver_piece(idx, s, shape);
    }
    mark_block(at, npages, s);
    return mt_va(at);
}

static void *huge_run_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    const char *why = "";
    const mt_colour_set *want = s;
    /* Decided before taking any hugepage: when no hugepage the masks allow has such a run of the
     * set's colours (bits below 21 interleave them inside every hugepage), a search would walk
     * every one the kernel has in vain. */
    bool shape = npages > mt_huge_best_run(s, align_order);
    if (shape) {
        if (mt_cfg.on_exhaustion != MT_EXHAUST_SPILL) {
            mt_exhausted(s, mt_huge_shape_reason(s, npages, align_order));
            return NULL;
        }
        want = NULL; /* spill: any colours, counted */
    }
    /* next fit: start where the last run was found, so filling hugepages in turn stays linear */
    static uint32_t hint;
    for (uint32_t k = 0; k < mt_huge_n; k++) {
        uint32_t i = (hint + k) % mt_huge_n;
        uint32_t at = find_run(mt_huge_list[i], npages, align_order, want, s->slot);
        if (at != MT_NIL) { hint = i; return take_run(at, npages, s, shape); }
    }
    /* New hugepages until one has such a run (the others: mt_huge_search_done). */
    for (;;) {
        if (mt_pool_over_limit(HUGE_PIECES)) {
            why = "MEMTINT_POOL_LIMIT reached";
            break;
        }
        if (mt_huge_grow_one(s->slot, &why)) break;
        uint32_t at = find_run(mt_huge_list[mt_huge_n - 1], npages, align_order, want, s->slot);
        if (at != MT_NIL) {
            void *p = take_run(at, npages, s, shape);
            mt_huge_search_done();
            return p;
        }
    }
    void *p = NULL;
    if (want && mt_cfg.on_exhaustion == MT_EXHAUST_SPILL) {
        for (uint32_t i = 0; i < mt_huge_n && !p; i++) {
            uint32_t at = find_run(mt_huge_list[i], npages, align_order, NULL, s->slot);
            if (at != MT_NIL) p = take_run(at, npages, s, shape);
        }
    }
    mt_huge_search_done(); /* after spilling, which may use them */
    if (!p) mt_exhausted(s, why);
    return p;
}

/* Every piece of hugepage `slot` has a colour of the set (one check when hugepages are
 * single-coloured; otherwise e.g. i7-860 colours 0-7 are the hugepages with b21 = b22 = 0). */
static bool hugepage_in_set(uint32_t slot, const mt_colour_set *s) {
    uint32_t first = slot << MT_HUGE_ORDER, n = mt_huge_uniform ? 1 : HUGE_PIECES;
    for (uint32_t k = 0; k < n; k++)
        if (!mt_bit(s->bits, mt_pages[first + k].colour)) return false;
    return true;
}

/* A free whole hugepage of node slot `node` and the set's colours (any colour when s is NULL). */
static uint32_t free_hugepage(const mt_colour_set *s, unsigned node) {
    for (uint32_t i = 0; i < mt_huge_n; i++) {
        uint32_t slot = mt_huge_list[i];
        if (mt_huge_slots[slot].pool_count != HUGE_PIECES || mt_pages[slot << MT_HUGE_ORDER].slot != node) continue;
        if (s && !hugepage_in_set(slot, s)) continue;
        return slot;
    }
    return UINT32_MAX;
}

/* nh free hugepages of the set's colours (want; any when NULL or short) moved side by side. */
static void *chain(mt_colour_set *s, size_t nh, unsigned align_order, const mt_colour_set *want, bool shape) {
    uint32_t e = mt_extent_take(order_for(nh * HUGE_PIECES, align_order > MT_HUGE_ORDER ? align_order : MT_HUGE_ORDER));
    if (e == MT_NIL) { mt_exhausted(s, "the library's 512 GB address arena is full"); return NULL; }
    for (size_t h = 0; h < nh; h++) {
        uint32_t slot = free_hugepage(want, s->slot);
        if (slot == UINT32_MAX) slot = free_hugepage(NULL, s->slot);
        uint32_t from = slot << MT_HUGE_ORDER, to = e + (uint32_t)(h * HUGE_PIECES);
        if (slot == UINT32_MAX ||
            mt_move_pages((uintptr_t)mt_va(from), MT_HUGE, (uintptr_t)mt_va(to)) == MAP_FAILED) {
            for (size_t k = 0; k < h * HUGE_PIECES; k++) mt_pool_return(e + (uint32_t)k);
            mt_extent_release_if_empty(e);
            mt_exhausted(s, "moving a hugepage (mremap) failed");
            return NULL;
        }
        mt_reserve_again(from, HUGE_PIECES);
        for (uint32_t k = 0; k < HUGE_PIECES; k++) {
            mt_pool_remove(from + k);
            move_descriptor(from + k, to + k, e);
            deliver_piece(to + k, s, shape);
        }
        mt_huge_slot_remove(slot);
        mt_extent_page_gone(from, HUGE_PIECES);
        mt_huge_slot_add(to >> MT_HUGE_ORDER);
        mt_pages[e].ext_live += HUGE_PIECES;
    }
    mark_block(e, nh * HUGE_PIECES, s);
    return mt_va(e);
}

static void *huge_chain_block(mt_colour_set *s, size_t npages, unsigned align_order) {
    size_t nh = (npages + HUGE_PIECES - 1) / HUGE_PIECES;
    const mt_colour_set *want = s;
    /* No hugepage can be all of the set's colours when the mask bits below 21 put colours of the
     * set and others in every hugepage the masks allow (masks below 21 only, or the i7-860's with
     * colours 0-3 rather than a whole group 8g..8g+7): decided before taking any hugepage, as a
     * search would walk every one the kernel has in vain. */
    bool shape = mt_huge_best_run(s, 0) < HUGE_PIECES;
    if (shape) {
        if (mt_cfg.on_exhaustion != MT_EXHAUST_SPILL) {
            mt_exhausted(s, mt_huge_shape_reason(s, npages, align_order));
            return NULL;
        }
        want = NULL;
    }
    /* Gather enough free hugepages first (the others taken meanwhile: mt_huge_search_done). */
    const char *why = "";
    size_t have = 0;
    for (uint32_t i = 0; i < mt_huge_n; i++) {
        uint32_t slot = mt_huge_list[i];
        if (mt_huge_slots[slot].pool_count == HUGE_PIECES && mt_pages[slot << MT_HUGE_ORDER].slot == s->slot &&
            (!want || hugepage_in_set(slot, want)))
            have++;
    }
    while (have < nh) {
        if (mt_pool_over_limit(HUGE_PIECES)) {
            why = "MEMTINT_POOL_LIMIT reached";
            break;
        }
        if (mt_huge_grow_one(s->slot, &why)) break;
        if (!want || hugepage_in_set(mt_huge_list[mt_huge_n - 1], want)) have++;
    }
    if (have < nh) {
        if (want && mt_cfg.on_exhaustion == MT_EXHAUST_SPILL) want = NULL;
        else {
            mt_huge_search_done();
            mt_exhausted(s, *why ? why : "not enough free hugepages of these colours");
            return NULL;
        }
    }
    void *p = chain(s, nh, align_order, want, shape);
    mt_huge_search_done(); /* after chaining, which delivers the hugepages it moves */
    return p;
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
    if (mt_mode == MEMTINT_MODE_PAGEMAP) cache_put(mt_sets[mt_pages[head].next], head, n);
    else
        for (uint32_t i = 0; i < n; i++) mt_pool_return(head + i);
    pthread_mutex_unlock(&mt_pool_lock);
}

/* Counts the holes among the slots [from, end); false if a slot is neither a hole, a pool page
 * of the set nor a cached block (cached blocks are the set's: see above). */
static bool slots_free(const mt_colour_set *s, uint32_t from, uint32_t end, uint32_t *holes) {
    *holes = 0;
    for (uint32_t k = from; k < end;) {
        const mt_page *pg = &mt_pages[k];
        if (pg->state == PD_CACHED) k += pg->aux;
        else if (pg->state == PD_NONE) ++*holes, k++;
        else if (pg->state == PD_POOL && pg->slot == s->slot && mt_bit(s->bits, pg->colour)) k++;
        else return false;
    }
    return true;
}

/* Grows the block at head from n to npages inside its extent: the slots after it must be
 * holes, pool pages of the set or cached blocks. Holes are filled from the set's pool, grown
 * from the kernel when short (as a fresh allocation would be). */
static bool grow_in_place(mt_colour_set *s, uint32_t head, uint32_t n, uint32_t npages) {
    uint32_t e = mt_pages[head].ext, end = head + npages, holes = 0;
    if (end > e + (1u << mt_pages[e].ext_order)) return false;
    if (!slots_free(s, head + n, end, &holes)) return false;
    if (holes && mt_pool_available(s) < holes) {
        const char *why = "";
        /* Growth places and may release pool pages: look at the slots again after it. */
        if (mt_pool_grow(s, holes, &why) != 0 || !slots_free(s, head + n, end, &holes)) return false;
        if (holes && mt_pool_available(s) < holes) return false;
    }
    for (uint32_t k = head + n; k < end;) {
        mt_page *pg = &mt_pages[k];
        if (pg->state == PD_CACHED) {
            uint32_t a = pg->aux;
            cache_unlink(s, k);
            if (k + a > end) cache_link(s, end, k + a - end);
            k += a;
        } else if (pg->state == PD_POOL) {
            mt_pool_remove(k);
            mt_pool_deliver(k, false);
            k++;
        } else {
            uint32_t run = 1;
            while (k + run < end && mt_pages[k + run].state == PD_NONE) run++;
            if (!fill_from_pool(s, e, k, run)) {
                /* what was gathered after the block stays cached behind it */
                if (k > head + n) cache_put(s, head + n, k - (head + n));
                return false;
            }
            k += run;
        }
    }
    mark_block(head, npages, s);
    if (e == s->region && end > s->frontier) s->frontier = end; /* carving goes on after it */
    return true;
}

bool mt_range_resize(uint32_t head, size_t npages) {
    if (mt_mode != MEMTINT_MODE_PAGEMAP || npages == 0 || npages > (1u << 27)) return false;
    pthread_mutex_lock(&mt_pool_lock);
    uint32_t n = mt_pages[head].aux;
    mt_colour_set *s = mt_sets[mt_pages[head].next];
    bool done = true;
    if (npages < n) {
        mark_block(head, npages, s);
        cache_put(s, head + (uint32_t)npages, n - (uint32_t)npages);
    } else if (npages > n) {
        done = grow_in_place(s, head, n, (uint32_t)npages);
    }
    pthread_mutex_unlock(&mt_pool_lock);
    return done;
}
