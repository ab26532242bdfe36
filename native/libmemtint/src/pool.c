/* pool.c — coloured frame pools (issue 5; BPM §2.3, TintMalloc §3.2(a)). Frames come from the
 * kernel in 2 MB chunks of 4 KB pages, faulted in and mlocked, their frame numbers read from
 * pagemap, and each page is kept on the list of its colour. Pages of colours nobody asked for
 * are held aside while the pool grows (unmapping them would let the kernel hand the same frames
 * straight back) and given back once they exceed a bound. Frames bound to a node (a colour set
 * with a node) are pooled apart from other nodes' and from unbound ones: a page's pool key is
 * its node slot and colour. Callers hold mt_pool_lock. */
#include "internal.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK_ORDER MT_HUGE_ORDER /* 512 pages per growth step */
#define HOLD_FLOOR_PAGES 16384    /* 64 MB held aside is always fine */

pthread_mutex_t mt_pool_lock = PTHREAD_MUTEX_INITIALIZER;
int mt_mode;
unsigned mt_n_colours;
uint64_t *mt_wanted;
bool mt_slot_used[MT_SLOTS];
mt_pool_stats mt_stats;
uint32_t *mt_pool_count;
static uint32_t *pool_head;

int mt_pool_init(void) {
    mt_n_colours = 1u << mt_cfg.n_masks;
    /* reserved for every node slot, touched only for the slots in use */
    size_t keys = (size_t)MT_SLOTS * mt_n_colours;
    pool_head = mt_meta_alloc(keys * sizeof *pool_head);
    mt_pool_count = mt_meta_alloc(keys * sizeof *mt_pool_count);
    mt_wanted = mt_meta_alloc((keys + 63) / 64 * 8);
    mt_stats.delivered_of = mt_meta_alloc(mt_n_colours * sizeof(uint64_t));
    return pool_head && mt_pool_count && mt_wanted && mt_stats.delivered_of ? 0 : -1;
}

void mt_pool_push(uint32_t idx) {
    mt_page *pg = &mt_pages[idx];
    uint32_t c = mt_page_key(pg);
    pg->state = PD_POOL;
    pg->prev = MT_NIL;
    pg->next = pool_head[c];
    if (pg->next != MT_NIL) mt_pages[pg->next].prev = idx;
    pool_head[c] = idx;
    mt_pool_count[c]++;
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) mt_huge_slots[idx >> MT_HUGE_ORDER].pool_count++;
}

void mt_pool_remove(uint32_t idx) {
    mt_page *pg = &mt_pages[idx];
    uint32_t key = mt_page_key(pg);
    if (pg->prev != MT_NIL) mt_pages[pg->prev].next = pg->next;
    else pool_head[key] = pg->next;
    if (pg->next != MT_NIL) mt_pages[pg->next].prev = pg->prev;
    mt_pool_count[key]--;
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) mt_huge_slots[idx >> MT_HUGE_ORDER].pool_count--;
}

uint32_t mt_pool_pop(uint32_t key) {
    uint32_t idx = pool_head[key];
    if (idx != MT_NIL) mt_pool_remove(idx);
    return idx;
}

uint64_t mt_pool_available(const mt_colour_set *s) {
    uint64_t n = 0;
    for (unsigned i = 0; i < s->n; i++) n += mt_pool_count[s->base + s->list[i]];
    return n;
}

static uint64_t wanted_from_kernel; /* pages of colours in use among those obtained */

/* Pages held aside per page of the colours in use: as the kernel actually supplied them once
 * enough was seen (free memory is rarely spread evenly over colours), else 1/f - 1. */
static uint64_t hold_bound(uint64_t requested) {
    uint64_t wanted = 0, all = 0;
    for (unsigned slot = 0; slot < MT_SLOTS; slot++) {
        if (!mt_slot_used[slot]) continue;
        all += mt_n_colours;
        for (unsigned c = 0; c < mt_n_colours; c++) wanted += mt_bit(mt_wanted, mt_key(slot, c));
    }
    if (!wanted) return HOLD_FLOOR_PAGES;
    uint64_t need = 2 * (mt_stats.delivered + requested), b;
    if (wanted_from_kernel >= 1024)
        b = need * (mt_stats.from_kernel - wanted_from_kernel) / wanted_from_kernel;
    else
        b = need * (all - wanted) / wanted;
    return b > HOLD_FLOOR_PAGES ? b : HOLD_FLOOR_PAGES;
}

/* The limit bounds what the library holds now: pages released back to the kernel (held-aside
 * colours it gave up) no longer count, or a process that cycles through many frames to collect
 * a rare colour would hit the limit holding a fraction of it. */
bool mt_pool_over_limit(uint64_t more) {
    uint64_t held = mt_stats.from_kernel - mt_stats.released;
    return mt_cfg.pool_limit_pages && held + more > mt_cfg.pool_limit_pages;
}

/* Pages of colours in use move from a new chunk in staging to the same offsets of an arena
 * extent, a run of neighbours per mremap; pages of other colours stay in staging, held aside. */
static void promote(uint32_t chunk) {
    uint32_t n = 1u << CHUNK_ORDER, to = MT_NIL;
    for (uint32_t i = 0; i < n;) {
        mt_page *pg = &mt_pages[chunk + i];
        if (pg->state != PD_POOL || !mt_bit(mt_wanted, mt_page_key(pg))) { i++; continue; }
        uint32_t run = 1;
        while (i + run < n && mt_pages[chunk + i + run].state == PD_POOL &&
               mt_bit(mt_wanted, mt_page_key(&mt_pages[chunk + i + run])))
            run++;
        if (to == MT_NIL && (to = mt_extent_take(CHUNK_ORDER)) == MT_NIL) return; /* stay put */
        if (mt_move_pages((uintptr_t)mt_va(chunk + i), (size_t)run << MT_PAGE_SHIFT, (uintptr_t)mt_va(to + i)) ==
            MAP_FAILED)
            break; /* the map-count limit: the rest stays in staging, still usable */
        mt_reserve_again(chunk + i, run);
        for (uint32_t k = i; k < i + run; k++) {
            mt_page *src = &mt_pages[chunk + k], *dst = &mt_pages[to + k];
            mt_pool_remove(chunk + k);
            src->state = PD_NONE;
            dst->colour = src->colour;
            dst->pfn = src->pfn;
            dst->slot = src->slot;
            dst->ext = to;
            mt_pool_push(to + k);
        }
        mt_extent_page_gone(chunk, run);
        mt_pages[to].ext_live += run;
        i += run;
    }
    if (to != MT_NIL) mt_extent_release_if_empty(to);
}

/* A chunk of fresh frames of a node slot could not be bound or did not land on the node. */
static const char *node_failure(int node, bool bound) {
    static mt_text t;
    t.len = 0;
    mt_text_str(&t, bound ? "the kernel placed frames off node " : "binding new frames to node ");
    mt_text_u64(&t, (uint64_t)node);
    mt_text_str(&t, bound ? " despite MPOL_BIND (move_pages query)" : " failed (mbind MPOL_BIND)");
    if (!bound && errno == EINVAL) mt_text_str(&t, ": the node is not allowed here (cpuset) or has no memory");
    return t.buf;
}

/* One chunk of 4 KB frames of the node slot into the pool (pagemap mode). */
static int grow_chunk(unsigned slot, const char **why) {
    uint32_t e = mt_extent_take_staging(CHUNK_ORDER);
    if (e == MT_NIL) { *why = "the library's 128 GB staging area is full (too much held aside)"; return -1; }
    size_t n = 1u << CHUNK_ORDER;
    void *va = mt_va(e);
    if (mmap(va, n * MT_PAGE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
        mt_reserve_again(e, (uint32_t)n);
        mt_extent_release_if_empty(e);
        *why = "the kernel refused more memory (mmap): out of memory, or vm.max_map_count reached "
               "(each coloured run is one mapping; e.g. sysctl vm.max_map_count=1048576)";
        return -1;
    }
    /* Bound before the first touch, on this mapping only: the program's own memory keeps its
     * policy, and the binding goes with the pages' mapping when they are mremapped. */
    int node = mt_slot_node(slot);
    if (node >= 0 && mt_node_bind(va, n * MT_PAGE, node)) {
        *why = node_failure(node, false);
        mt_reserve_again(e, (uint32_t)n);
        mt_extent_release_if_empty(e);
        return -1;
    }
    madvise(va, n * MT_PAGE, MADV_NOHUGEPAGE); /* 4 KB frames: a THP would be one colour run */
    /* The raw syscall: sanitizers intercept mlock() and make it a no-op. mlock faults in. */
    if (syscall(SYS_mlock, va, n * MT_PAGE)) {
        mt_reserve_again(e, (uint32_t)n);
        mt_extent_release_if_empty(e);
        *why = node >= 0 ? "mlock failed: out of memory on the node, or RLIMIT_MEMLOCK (run as root or raise `ulimit -l`)"
                         : "mlock failed: out of memory, or RLIMIT_MEMLOCK (run as root or raise `ulimit -l`)";
        return -1;
    }
    if (node >= 0 && mt_node_verify((uintptr_t)va, n, MT_PAGE, node)) {
        *why = node_failure(node, true);
        mt_reserve_again(e, (uint32_t)n);
        mt_extent_release_if_empty(e);
        return -1;
    }
    static uint64_t pfns[1u << CHUNK_ORDER];
    if (mt_pagemap_read((uintptr_t)va, n, pfns)) {
        mt_reserve_again(e, (uint32_t)n);
        mt_extent_release_if_empty(e);
        *why = "reading /proc/self/pagemap failed";
        return -1;
    }
    mt_pages[e].ext_live = (uint32_t)n;
    mt_pages[e].ext = e;
    for (size_t i = 0; i < n; i++) {
        if (!pfns[i]) pfns[i] = mt_pagemap_settle((uintptr_t)va + i * MT_PAGE);
        if (!pfns[i]) {
            /* keep the chunk consistent: pages classified so far stay pooled, the rest go */
            mt_reserve_again(e + (uint32_t)i, (uint32_t)(n - i));
            mt_stats.from_kernel += i;
            mt_extent_page_gone(e, (uint32_t)(n - i));
            if (i) promote(e);
            *why = "a frame number could not be read from /proc/self/pagemap";
            return -1;
        }
        mt_page *pg = &mt_pages[e + i];
        pg->ext = e;
        pg->pfn = pfns[i];
        pg->slot = slot;
        pg->colour = (uint16_t)mt_colour_of_paddr(pfns[i] << MT_PAGE_SHIFT);
        wanted_from_kernel += mt_bit(mt_wanted, mt_page_key(pg));
        mt_pool_push(e + (uint32_t)i);
    }
    mt_stats.from_kernel += n;
    promote(e);
    return 0;
}

int mt_pool_grow(const mt_colour_set *s, uint64_t pages, const char **why) {
    bool grew = false;
    int r = 0;
    while (!r && mt_pool_available(s) < pages) {
        if (mt_pool_over_limit(mt_mode == MEMTINT_MODE_HUGEPAGE ? MT_HUGE / MT_PAGE : 1u << CHUNK_ORDER)) {
            *why = "MEMTINT_POOL_LIMIT reached";
            r = -1;
            break;
        }
        r = mt_mode == MEMTINT_MODE_HUGEPAGE ? mt_huge_grow_one(s->slot, why) : grow_chunk(s->slot, why);
        grew |= !r;
    }
    if (grew) mt_pool_after_growth(pages);
    return r;
}

/* "12 MB", or "40 KB" under a megabyte: pages as a size. */
static void text_size(mt_text *t, uint64_t pages) {
    uint64_t kb = (pages << MT_PAGE_SHIFT) >> 10;
    mt_text_u64(t, kb >= 1024 ? kb >> 10 : kb);
    mt_text_str(t, kb >= 1024 ? " MB" : " KB");
}

/* Hugepages none of whose pieces is in use: what releasing held pages can give back. */
static uint64_t whole_free_hugepages(void) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < mt_huge_n; i++)
        n += mt_huge_slots[mt_huge_list[i]].pool_count == 1u << MT_HUGE_ORDER;
    return n;
}

void mt_exhausted(const mt_colour_set *s, const char *why) {
    static atomic_int said;
    errno = ENOMEM;
    if (atomic_exchange(&said, 1)) return;
    mt_text t = {0};
    mt_text_str(&t, "out of memory in colours ");
    mt_text_colours(&t, s->bits, mt_n_colours);
    if (s->slot) {
        mt_text_str(&t, " on node ");
        mt_text_u64(&t, (uint64_t)mt_slot_node(s->slot));
    }
    mt_text_str(&t, ": ");
    mt_text_str(&t, why);
    /* Frames of other colours the searches took stay with the library, not the kernel: say how
     * many, or "no free hugepages" reads as if the program's heap had them all. A hugepage goes
     * back only whole, so pieces of one in use stay. */
    uint64_t held = mt_pool_held_pages();
    if (held) {
        mt_text_str(&t, " (the library holds ");
        text_size(&t, held);
        mt_text_str(&t, " of frames of colours no thread uses aside");
        if (mt_mode == MEMTINT_MODE_HUGEPAGE) {
            mt_text_str(&t, "; memtint_release_held_pages() gives back the whole free hugepages among them: ");
            text_size(&t, whole_free_hugepages() << MT_HUGE_ORDER);
            mt_text_str(&t, ")");
        } else {
            mt_text_str(&t, "; memtint_release_held_pages() gives them back to the kernel)");
        }
    }
    if (mt_cfg.on_exhaustion == MT_EXHAUST_SPILL)
        mt_text_str(&t, "; spilling (MEMTINT_ON_EXHAUSTION=spill) is on and could not help (no page of another "
                        "colour left, or the pages could not be mapped): allocations fail with ENOMEM");
    else
        mt_text_str(&t, "; allocations fail with ENOMEM (MEMTINT_ON_EXHAUSTION=spill, or memtint run's --spill, "
                        "takes other colours)");
    mt_say(&t);
}

/* The page of another colour used when spilling: held-aside colours first, same node slot
 * (spilling trades colours, never the node). */
uint32_t mt_pool_spill_page(unsigned slot) {
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = mt_key(slot, 0); k < mt_key(slot + 1, 0); k++)
            if (mt_pool_count[k] && (pass || !mt_bit(mt_wanted, k))) return mt_pool_pop(k);
    return MT_NIL;
}

void mt_pool_deliver(uint32_t idx, bool spilled) {
    if (++mt_stats.delivered > mt_stats.delivered_peak) mt_stats.delivered_peak = mt_stats.delivered;
    mt_stats.delivered_of[mt_pages[idx].colour]++;
    mt_stats.delivered_slot[mt_pages[idx].slot]++;
    if (spilled) mt_stats.spilled++;
}

uint32_t mt_pool_take_page(mt_colour_set *s) {
    const char *why = "";
    if (mt_pool_available(s) == 0) mt_range_cache_drain(s);
    if (mt_pool_available(s) == 0 && mt_pool_grow(s, 1, &why)) {
        uint32_t idx = mt_cfg.on_exhaustion == MT_EXHAUST_SPILL ? mt_pool_spill_page(s->slot) : MT_NIL;
        if (mt_mode == MEMTINT_MODE_HUGEPAGE) mt_huge_search_done(); /* after spilling, which may use them */
        if (idx != MT_NIL) { mt_pool_deliver(idx, true); return idx; }
        mt_exhausted(s, why);
        return MT_NIL;
    }
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) mt_huge_search_done();
    for (unsigned tries = 0; tries < s->n; tries++) {
        unsigned c = s->list[atomic_fetch_add(&s->cursor, 1) % s->n];
        uint32_t idx = mt_pool_pop(s->base + c);
        if (idx != MT_NIL) { mt_pool_deliver(idx, false); return idx; }
    }
    return MT_NIL; /* unreachable: available > 0 */
}

/* Free pool pages whose key is (wanted) or is not (!wanted) in a colour set in use. */
static uint64_t pool_pages(bool wanted) {
    uint64_t n = 0;
    for (unsigned slot = 0; slot < MT_SLOTS; slot++)
        if (mt_slot_used[slot])
            for (uint32_t k = mt_key(slot, 0); k < mt_key(slot + 1, 0); k++)
                if (mt_bit(mt_wanted, k) == wanted) n += mt_pool_count[k];
    return n;
}

uint64_t mt_pool_held_pages(void) { return pool_pages(false); }
uint64_t mt_pool_ready_pages(void) { return pool_pages(true); }

/* Unmaps the held-aside (unwanted-colour) pool pages, by runs of neighbouring pages so one
 * mmap covers many, until at most `keep` remain. */
static long release_unwanted(uint64_t keep) {
    uint64_t held = mt_pool_held_pages();
    long released = 0;
    uint32_t used[2][2];
    mt_arena_used(used);
    for (int r = 0; r < 2; r++)
    for (uint32_t i = used[r][0], top = used[r][1]; i < top && held > keep;) {
        mt_page *pg = &mt_pages[i];
        if (pg->state != PD_POOL || mt_bit(mt_wanted, mt_page_key(pg))) { i++; continue; }
        uint32_t n = 0;
        while (i + n < top && held > keep && mt_pages[i + n].state == PD_POOL &&
               !mt_bit(mt_wanted, mt_page_key(&mt_pages[i + n])) && mt_pages[i + n].ext == pg->ext) {
            mt_pool_remove(i + n);
            mt_pages[i + n].state = PD_NONE;
            n++;
            held--;
        }
        mt_reserve_again(i, n);
        mt_extent_page_gone(i, n);
        released += n;
        i += n;
    }
    return released;
}

long mt_pool_release_held(bool all) {
    long released = 0;
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) {
        /* Hugepage frames are released whole: a hugepage none of whose pieces is in use. */
        for (uint32_t i = 0; i < mt_huge_n;) {
            uint32_t slot = mt_huge_list[i];
            if (mt_huge_slots[slot].pool_count != 1u << MT_HUGE_ORDER) { i++; continue; }
            released += mt_huge_release(slot); /* the last slot moves to i */
        }
    } else {
        released = release_unwanted(all ? 0 : hold_bound(0) / 2);
    }
    mt_stats.released += (uint64_t)released;
    return released;
}

void mt_pool_return(uint32_t idx) {
    mt_stats.delivered--;
    mt_pool_push(idx);
}

/* After a growth episode, held-aside pages go back only past twice what the colour fraction
 * implies (a fraction f of the colours leaves (1-f)/f held per page delivered): releasing them
 * sooner makes the kernel hand the same frames straight back on the next growth. */
void mt_pool_after_growth(uint64_t requested) {
    if (mt_mode == MEMTINT_MODE_PAGEMAP && mt_pool_held_pages() > hold_bound(requested)) {
        uint64_t keep = hold_bound(requested) / 2;
        mt_stats.released += (uint64_t)release_unwanted(keep);
    }
}
