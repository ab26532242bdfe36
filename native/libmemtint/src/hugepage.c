/* hugepage.c — frames from 2 MB hugetlb pages (issue 5, hugepage mode). A hugepage is 2 MB
 * aligned in physical memory, so physical bits < 21 equal the virtual offset: with masks that
 * use only those bits the colour of each 4 KB piece is known without pagemap (and without
 * privilege). Masks with bits >= 21 need one pagemap read per hugepage for its base frame;
 * masks using only bits >= 21 give each hugepage one colour, so whole hugepages can be chained
 * into large contiguous blocks (range.c). Pieces cannot be moved alone: contiguity below 2 MB
 * is bounded by how the set's colours interleave inside a hugepage (mt_huge_best_run). */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

bool mt_huge_uniform, mt_huge_needs_pagemap;
mt_huge_slot *mt_huge_slots;
uint32_t *mt_huge_list, mt_huge_n;
static uint32_t *slot_pos;
static uint32_t *fresh, n_fresh; /* slots the search under way took (mt_huge_grow_one) */

/* How often mt_huge_search_done gave each hugepage frame back. The kernel hands out the hugepage
 * freed last first, so one that no other process took comes straight back to this process's next
 * search: given back every time, the same ones were walked by every search (quadratic: 5355
 * hugepages faulted instead of 243, 1.3 s instead of 0.1 s, for 56 MB of 32 KB blocks of i7-860
 * colours 0-3 from 256 hugepages). After GIVE_BACK_TIMES it is held aside, so a search walks no
 * hugepage more than GIVE_BACK_TIMES + 1 times; other processes (run-mix's) get those given back
 * meanwhile (once was too few for four programs sharing 256 hugepages: some still ran out).
 * Keyed by base frame >> 9, plus 1 (0: empty), open addressing; past 3/4 full none are added. */
#define GIVEN_BACK (1u << 16)
#define GIVE_BACK_TIMES 3
static uint64_t *given_back;
static uint8_t *given_back_times;
static uint32_t n_given_back;

static uint32_t given_back_at(uint64_t frame) {
    uint32_t i = (uint32_t)(frame * 0x9E3779B97F4A7C15ULL >> 48) & (GIVEN_BACK - 1);
    while (given_back[i] && given_back[i] != frame + 1) i = (i + 1) & (GIVEN_BACK - 1);
    return i;
}

void mt_huge_slot_add(uint32_t slot) {
    if (!mt_huge_slots) {
        size_t slots = (mt_arena_end - mt_arena_base) / MT_HUGE;
        mt_huge_slots = mt_meta_alloc(slots * sizeof *mt_huge_slots);
        mt_huge_list = mt_meta_alloc(slots * sizeof *mt_huge_list);
        slot_pos = mt_meta_alloc(slots * sizeof *slot_pos);
        fresh = mt_meta_alloc(slots * sizeof *fresh);
        given_back = mt_meta_alloc(GIVEN_BACK * sizeof *given_back);
        given_back_times = mt_meta_alloc(GIVEN_BACK * sizeof *given_back_times);
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
    mt_huge_slots[slot].fresh = 0;
    mt_huge_slots[slot].pool_count = 0;
}

long mt_huge_release(uint32_t slot) {
    uint32_t first = slot << MT_HUGE_ORDER;
    for (uint32_t k = 0; k < 1u << MT_HUGE_ORDER; k++) mt_pool_remove(first + k);
    mt_huge_slot_remove(slot);
    mt_reserve_again(first, 1u << MT_HUGE_ORDER);
    for (uint32_t k = 0; k < 1u << MT_HUGE_ORDER; k++) mt_pages[first + k].state = PD_NONE;
    mt_extent_page_gone(first, 1u << MT_HUGE_ORDER);
    return 1 << MT_HUGE_ORDER;
}

/* Some piece of hugepage `slot` has a colour a set uses (pieces of one colour: one check). */
static bool huge_wanted(uint32_t slot) {
    uint32_t first = slot << MT_HUGE_ORDER, n = mt_huge_uniform ? 1 : 1u << MT_HUGE_ORDER;
    for (uint32_t k = 0; k < n; k++)
        if (mt_bit(mt_wanted, mt_page_key(&mt_pages[first + k]))) return true;
    return false;
}

void mt_huge_search_done(void) {
    for (uint32_t i = 0; i < n_fresh; i++) {
        uint32_t slot = fresh[i];
        if (!mt_huge_slots[slot].fresh) continue; /* delivered whole and moved (chained), or released */
        mt_huge_slots[slot].fresh = 0;
        if (mt_huge_slots[slot].pool_count != 1u << MT_HUGE_ORDER || huge_wanted(slot)) continue;
        uint64_t frame = mt_pages[slot << MT_HUGE_ORDER].pfn >> MT_HUGE_ORDER;
        uint32_t at = given_back_at(frame);
        if (frame && (given_back[at] || n_given_back < GIVEN_BACK / 4 * 3)) { /* frame 0: not read */
            n_given_back += !given_back[at];
            given_back[at] = frame + 1;
            given_back_times[at]++;
        }
        mt_stats.released += (uint64_t)mt_huge_release(slot);
    }
    n_fresh = 0;
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
    if (!base || given_back_times[given_back_at(base >> MT_HUGE_ORDER)] < GIVE_BACK_TIMES) {
        mt_huge_slots[e >> MT_HUGE_ORDER].fresh = 1;
        fresh[n_fresh++] = e >> MT_HUGE_ORDER;
    }
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

/* The colours a hugepage's pieces can have. Colours are parities, so the colour of piece i of a
 * hugepage at physical B (2 MB aligned) is colour(B) ^ low[i], low[i] = colour(i << 12): the mask
 * bits below 21 give every hugepage the same arrangement, XORed with h = colour(B), which ranges
 * over the span of the masks' bits >= 21. With masks below bit 21 only there is one arrangement
 * (h = 0); with masks at bits >= 21 only each hugepage is one colour; with both (the i7-860's bits
 * 13-15 and 21-22) each hugepage holds a group of colours (8g..8g+7 for h = 8g). Distinct h give
 * distinct arrangements, so each is looked at. (The span is what the masks allow; the machine's
 * memory need not reach every h, so this bounds what a hugepage can give from above.) */
static uint16_t low_colour[1u << MT_HUGE_ORDER];

static void low_colours(void) {
    for (unsigned i = 0; i < 1u << MT_HUGE_ORDER; i++)
        low_colour[i] = (uint16_t)mt_colour_of_paddr((uint64_t)i << MT_PAGE_SHIFT);
}

/* Calls fn(h, arg) once per colour h a hugepage's base can have; stops when fn returns true. */
static void each_base_colour(bool (*fn)(unsigned h, void *arg), void *arg) {
    unsigned basis[MT_MAX_MASKS], rank = 0;
    for (unsigned bit = MT_HUGE_ORDER + MT_PAGE_SHIFT; bit < 64; bit++) {
        unsigned v = mt_colour_of_paddr(1ULL << bit);
        for (unsigned k = 0; k < rank; k++) /* reduce by the basis, largest leading bit first */
            if ((v ^ basis[k]) < v) v ^= basis[k];
        if (!v) continue;
        basis[rank++] = v;
        for (unsigned a = rank - 1; a > 0 && basis[a] > basis[a - 1]; a--) {
            unsigned t = basis[a]; basis[a] = basis[a - 1]; basis[a - 1] = t;
        }
    }
    low_colours();
    for (uint64_t combo = 0; combo < 1ULL << rank; combo++) {
        unsigned h = 0;
        for (unsigned k = 0; k < rank; k++)
            if (combo >> k & 1) h ^= basis[k];
        if (fn(h, arg)) return;
    }
}

static bool best_runs(unsigned h, void *arg) {
    mt_colour_set *s = arg;
    uint16_t run[(1u << MT_HUGE_ORDER) + 1];
    run[1u << MT_HUGE_ORDER] = 0;
    for (unsigned i = 1u << MT_HUGE_ORDER; i-- > 0;) /* pieces of the set from i on */
        run[i] = mt_bit(s->bits, h ^ low_colour[i]) ? (uint16_t)(run[i + 1] + 1) : 0;
    for (unsigned i = 0; i < 1u << MT_HUGE_ORDER; i++) {
        unsigned top = i ? (unsigned)__builtin_ctz(i) : MT_HUGE_ORDER; /* i is aligned to 2^0..2^top */
        if (top > MT_HUGE_ORDER) top = MT_HUGE_ORDER;
        for (unsigned a = 0; a <= top; a++)
            if (run[i] > s->huge_run[a]) s->huge_run[a] = run[i];
    }
    return s->huge_run[0] == 1u << MT_HUGE_ORDER; /* a whole hugepage: nothing longer */
}

unsigned mt_huge_best_run(mt_colour_set *s, unsigned align_order) {
    if (!s->huge_run_known) {
        memset(s->huge_run, 0, sizeof s->huge_run);
        if (mt_huge_uniform) s->huge_run[0] = 1u << MT_HUGE_ORDER; /* a hugepage of any one colour */
        else each_base_colour(best_runs, s);
        if (s->huge_run[0] == 1u << MT_HUGE_ORDER)
            for (unsigned a = 0; a <= MT_HUGE_ORDER; a++) s->huge_run[a] = 1u << MT_HUGE_ORDER;
        s->huge_run_known = true;
    }
    return s->huge_run[align_order <= MT_HUGE_ORDER ? align_order : MT_HUGE_ORDER];
}

const char *mt_huge_shape_reason(const mt_colour_set *s, size_t pieces, unsigned align_order) {
    static mt_text t;
    t.len = 0;
    t.buf[0] = 0;
    /* the colours of a hugepage whose base has colour 0 (each other hugepage: the same XOR its base's) */
    static uint64_t group[MT_MAX_COLOURS / 64];
    unsigned n = 0;
    memset(group, 0, (mt_n_colours + 63) / 64 * 8);
    low_colours();
    for (unsigned i = 0; i < 1u << MT_HUGE_ORDER; i++) {
        unsigned c = low_colour[i];
        if (!mt_bit(group, c)) n++;
        group[c >> 6] |= 1ULL << (c & 63);
    }
    if (pieces > 1u << MT_HUGE_ORDER) {
        mt_text_str(&t, "blocks over 2 MB in hugepage mode need whole hugepages of the colours, and no hugepage "
                        "can be all of these colours: the mask bits below bit 21 (inside a hugepage) give every "
                        "hugepage pieces of ");
        mt_text_u64(&t, n);
        mt_text_str(&t, " colours at once (a group such as ");
        mt_text_colours(&t, group, mt_n_colours);
        mt_text_str(&t, "), never all of them in this set; colours that include a whole such group, or pagemap "
                        "mode (which needs root), can make the block");
    } else {
        mt_text_str(&t, "the block is larger than the longest run of these colours that any 2 MB hugepage can "
                        "hold (");
        unsigned a = align_order <= MT_HUGE_ORDER ? align_order : MT_HUGE_ORDER;
        mt_text_u64(&t, (uint64_t)s->huge_run[a] * (MT_PAGE / 1024)); /* mt_huge_best_run computed it */
        mt_text_str(&t, align_order ? " KB at this alignment): the mask bits below bit 21 interleave "
                                    : " KB): the mask bits below bit 21 interleave ");
        mt_text_u64(&t, n);
        mt_text_str(&t, " colours inside every hugepage (a group such as ");
        mt_text_colours(&t, group, mt_n_colours);
        mt_text_str(&t, "); pagemap mode (which needs root) can make the block");
    }
    return t.buf;
}
