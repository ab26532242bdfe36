/* internal.h — shared declarations of libmemtint's layers (one file each, bottom-up):
 *   platform.c  messages without stdio, hypervisor detection
 *   config.c    the MEMTINT_* environment contract (parsed once, no malloc)
 *   frames.c    /proc/self/pagemap reads, the colour of a physical address (BPM §2.3), and
 *               binding new frames to a NUMA node (TintMalloc's per-thread node, §3.2)
 *   arena.c     the reserved virtual arena, per-page descriptors, virtual extents
 *   pool.c      coloured frame pools: frames kept by colour, held aside, released, spilled
 *   hugepage.c  2 MB hugetlb frames whose low 21 physical bits equal the virtual offset
 *   range.c     virtually contiguous coloured ranges (mremap of single frames / hugepages)
 *   heap.c      the object allocator: size classes, slabs, per-thread caches, colour sets
 *   report.c    statistics and the MEMTINT_REPORT JSON
 *   shim.c      initialisation, the public API and the preloaded malloc family
 */
#ifndef MEMTINT_INTERNAL_H
#define MEMTINT_INTERNAL_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/memtint.h"

#define MT_PAGE 4096UL
#define MT_PAGE_SHIFT 12
#define MT_HUGE_ORDER 9 /* 2 MB = 512 pages */
#define MT_HUGE (MT_PAGE << MT_HUGE_ORDER)
#define MT_ARENA_ALIGN (1UL << 30) /* the largest alignment memalign can give */
#define MT_MAX_MASKS 16
#define MT_MAX_COLOURS (1u << MT_MAX_MASKS)
#define MT_MAX_SETS 256
/* Frame pools are kept per node slot: slot 0 holds frames of any node (no binding), slot n + 1
 * frames bound to node n, so colours of different nodes never mix. */
#define MT_MAX_NODES 64
#define MT_SLOTS (MT_MAX_NODES + 1)
/* range.c's bins of freed blocks: exact sizes 1-32 pages, then one per power of two */
#define MT_CACHE_EXACT 32
#define MT_CACHE_BINS (MT_CACHE_EXACT + 24)
#define MT_NIL 0u /* page index 0 of the arena is never used, so 0 ends lists */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ---- platform.c ---- */
typedef struct {
    char buf[1024];
    size_t len;
} mt_text;
void mt_text_str(mt_text *t, const char *s);
void mt_text_u64(mt_text *t, uint64_t v);
void mt_text_hex(mt_text *t, uint64_t v);
void mt_text_colours(mt_text *t, const uint64_t *bitmap, unsigned n_colours);
void mt_write_all(int fd, const char *s, size_t n);
void mt_say(mt_text *t);                    /* "libmemtint: ..." to stderr */
void mt_keep_stderr(void);                  /* keep stderr for messages after the program closes it */
void mt_warn(const char *what);             /* unless MEMTINT_QUIET */
_Noreturn void mt_fatal(mt_text *t);        /* message and _exit(2) */
bool mt_hypervisor_present(void);
uint64_t mt_meminfo_kb(const char *key);    /* a /proc/meminfo field, 0 if absent */

/* ---- config.c ---- */
enum { MT_MODE_AUTO = 0, MT_MODE_PAGEMAP = 1, MT_MODE_HUGEPAGE = 2 };
enum { MT_EXHAUST_ERROR = 0, MT_EXHAUST_SPILL = 1 };
typedef struct {
    unsigned n_masks;
    uint64_t masks[MT_MAX_MASKS];
    bool have_colours;
    uint64_t colours[MT_MAX_COLOURS / 64]; /* the process colours, a bitmap */
    int mode_requested;
    int on_exhaustion;
    bool quiet, verbose;
    bool hypervisor_noted; /* MEMTINT_HYPERVISOR_NOTED: the launcher said it once for the whole run */
    char report_path[512];
    uint64_t pool_limit_pages; /* 0 = no limit */
    int node;                  /* MEMTINT_NODE: the process's node, -1 = any */
} mt_config;
extern mt_config mt_cfg;
void mt_config_load(void); /* exits with status 2 on a malformed variable */
/* Parses a colour list "0-3,8" into bitmap (n_colours wide); 0 or -1 with err set. */
int mt_parse_colours(const char *s, uint64_t *bitmap, unsigned n_colours, const char **err);

/* ---- frames.c ---- */
extern int mt_pagemap_fd;
int mt_pagemap_open(void);
/* Frame numbers of n pages from va; 0 for a page not present or unreadable. -1 on read error. */
int mt_pagemap_read(uintptr_t va, size_t n, uint64_t *pfns);
/* The frame of a present page of ours, waiting out a migration in progress; 0 if none. */
uint64_t mt_pagemap_settle(uintptr_t va);
/* True when pagemap shows real frame numbers (root or CAP_SYS_ADMIN). */
bool mt_pagemap_privileged(void);
/* 0 if `node` is -1 or a node with memory; else -1 with the reason ("node 1 does not exist or
 * has no memory (nodes with memory: 0)") in *why. Reads sysfs, never allocates. */
int mt_node_check(int node, mt_text *why);
/* MPOL_BIND of a fresh, untouched mapping to `node`, so what faults it in comes from the node;
 * the policy belongs to that mapping alone. 0, or -1 with errno. */
int mt_node_bind(void *va, size_t len, int node);
/* Every one of n pages from va (step bytes apart) is on `node` by move_pages(2)'s query; 0, or
 * -1 (errno set: EFAULT a page elsewhere, or the syscall's own error). */
int mt_node_verify(uintptr_t va, size_t n, size_t step, int node);
static inline int mt_slot_node(unsigned slot) { return (int)slot - 1; } /* -1: any node */
static inline unsigned mt_colour_of_paddr(uint64_t paddr) {
    unsigned c = 0;
    for (unsigned i = 0; i < mt_cfg.n_masks; i++)
        c |= (unsigned)(__builtin_popcountll(paddr & mt_cfg.masks[i]) & 1) << i;
    return c;
}
static inline bool mt_bit(const uint64_t *bm, unsigned i) { return bm[i >> 6] >> (i & 63) & 1; }

/* ---- arena.c ---- */
/* PD_HEAD: first page of a block in use (aux pages; `next` holds its colour set's id).
 * PD_CACHED: first page of a freed block kept assembled (aux pages; next/prev link its bin). */
enum { PD_NONE = 0, PD_POOL, PD_SLAB, PD_HEAD, PD_BODY, PD_HELD_CHUNK, PD_CACHED };
typedef struct {
    uint32_t next, prev; /* pool list links (page indexes) */
    uint32_t aux;        /* PD_HEAD: pages in the block */
    uint32_t ext;        /* first page of the virtual extent the page lives in */
    uint32_t ext_live;   /* on an extent's first page: pages still mapped in the extent */
    uint16_t colour;
    uint8_t state;
    uint8_t ext_order;   /* on an extent's first page: log2 of its size in pages */
    uint64_t pfn : 56;   /* frame recorded when coloured (pagemap mode; frames have 55 bits) */
    uint64_t slot : 8;   /* node slot of the pool the frame belongs to (0: any node) */
} mt_page;
_Static_assert(sizeof(mt_page) == 32, "one descriptor per 4 KB page of a 640 GB reservation");
extern uintptr_t mt_arena_base, mt_arena_end;
extern mt_page *mt_pages;
int mt_arena_init(void);
static inline bool mt_in_arena(const void *p) {
    return (uintptr_t)p >= mt_arena_base && (uintptr_t)p < mt_arena_end;
}
static inline uint32_t mt_idx(const void *p) {
    return (uint32_t)(((uintptr_t)p - mt_arena_base) >> MT_PAGE_SHIFT);
}
static inline void *mt_va(uint32_t idx) { return (void *)(mt_arena_base + ((uintptr_t)idx << MT_PAGE_SHIFT)); }
/* An unused extent of 2^order pages aligned to its size, still reserved PROT_NONE. 0 if none. */
uint32_t mt_extent_take(unsigned order);
/* A page of an extent left it (moved away or unmapped, its place reserved again). */
void mt_extent_page_gone(uint32_t idx, uint32_t count);
void mt_reserve_again(uint32_t idx, uint32_t npages); /* PROT_NONE over [idx, idx+n) */
/* mremap of whole pages to `to` that leaves no hole at `from` for a moment (MREMAP_DONTUNMAP where
 * the kernel has it): another thread's mmap could be placed in the hole before mt_reserve_again
 * covers it again, and be replaced by the reservation. MAP_FAILED on failure, as mremap. */
void *mt_move_pages(uintptr_t from, size_t bytes, uintptr_t to);
uint32_t mt_extent_take_staging(unsigned order); /* the same in the staging area */
void mt_extent_release_if_empty(uint32_t e);        /* an extent that received no page */
void mt_arena_used(uint32_t range[2][2]); /* page index ranges ever handed out, per region */
bool mt_in_coloured_arena(const void *p);
void *mt_meta_alloc(size_t bytes); /* zeroed internal metadata, never freed */

/* ---- pool.c (callers hold mt_pool_lock) ---- */
typedef struct mt_colour_set mt_colour_set;
extern pthread_mutex_t mt_pool_lock;
extern int mt_mode; /* MEMTINT_MODE_* */
extern unsigned mt_n_colours;
extern uint64_t *mt_wanted; /* union of all colour sets in use, by key */
extern bool mt_slot_used[MT_SLOTS]; /* node slots some colour set uses */
typedef struct {
    uint64_t from_kernel, delivered, delivered_peak, spilled, moved, released;
    uint64_t moved_out; /* moves that took a page out of every colour set in use */
    uint64_t spilled_shape; /* of spilled: blocks no hugepage could give in their colours */
    uint64_t *delivered_of; /* cumulative per colour */
    uint64_t delivered_slot[MT_SLOTS]; /* cumulative per node slot */
} mt_pool_stats;
extern mt_pool_stats mt_stats;
extern uint32_t *mt_pool_count; /* free pool pages per key */
/* A pool key: a colour of a node slot. Pool lists, counts and mt_wanted are indexed by it. */
static inline uint32_t mt_key(unsigned slot, unsigned colour) { return slot * mt_n_colours + colour; }
static inline uint32_t mt_page_key(const mt_page *pg) { return mt_key(pg->slot, pg->colour); }
int mt_pool_init(void);
void mt_pool_push(uint32_t idx);           /* page back to its colour's list */
void mt_pool_remove(uint32_t idx);         /* out of its list (state unchanged) */
uint32_t mt_pool_pop(uint32_t key);        /* MT_NIL if empty */
uint64_t mt_pool_available(const mt_colour_set *s);
/* Grow until the set has at least `pages` free pool pages; 0, or -1 with *why set. */
int mt_pool_grow(const mt_colour_set *s, uint64_t pages, const char **why);
/* One page of the set's colours for a slab (round robin over colours); MT_NIL + ENOMEM message. */
uint32_t mt_pool_take_page(mt_colour_set *s);
void mt_pool_after_growth(uint64_t requested); /* release held-aside pages past the bound */
bool mt_pool_over_limit(uint64_t more); /* MEMTINT_POOL_LIMIT: held from the kernel, less given back */
uint32_t mt_pool_spill_page(unsigned slot);       /* a page of any colour of the node slot, held-aside first */
void mt_pool_deliver(uint32_t idx, bool spilled); /* count a page handed to the heap */
void mt_pool_return(uint32_t idx);                /* a delivered page back to the pool */ /* release held-aside pages past the hold bound */
long mt_pool_release_held(bool all);
void mt_exhausted(const mt_colour_set *s, const char *why);
uint64_t mt_pool_held_pages(void);
uint64_t mt_pool_ready_pages(void);

/* ---- hugepage.c ---- */
extern bool mt_huge_uniform; /* every mask uses only bits >= 21: a hugepage has one colour */
extern bool mt_huge_needs_pagemap;
int mt_huge_grow_one(unsigned slot, const char **why); /* one hugepage of the node slot into the arena and pool */
typedef struct { uint16_t pool_count; uint8_t present, fresh; } mt_huge_slot; /* fresh: taken by the search under way */
extern mt_huge_slot *mt_huge_slots;
extern uint32_t *mt_huge_list; extern uint32_t mt_huge_n; /* hugepage slots mapped */
void mt_huge_slot_add(uint32_t slot);
void mt_huge_slot_remove(uint32_t slot);
long mt_huge_release(uint32_t slot); /* a wholly free hugepage back to the kernel; its pages */
/* A search for frames ended (found or not, spilled or not): the hugepages it took that hold no colour
 * in use go back to the kernel, but for those given back 3 times already (held aside). */
void mt_huge_search_done(void);
/* The longest run of the set's colours any hugepage can hold from a piece aligned to
 * 2^align_order pieces (512: some hugepage can be all of the set's colours). */
unsigned mt_huge_best_run(mt_colour_set *s, unsigned align_order);
/* Why a block needing `pieces` pieces cannot be made of the set's colours in hugepage mode. */
const char *mt_huge_shape_reason(const mt_colour_set *s, size_t pieces, unsigned align_order);

/* ---- range.c ---- */
/* A block of npages (aligned to 2^align_order pages) of the set's colours; NULL + errno. */
void *mt_range_alloc(mt_colour_set *s, size_t npages, unsigned align_order);
void mt_range_free(uint32_t head);
/* The block at head resized to npages where it stands; false if it cannot be (caller copies). */
bool mt_range_resize(uint32_t head, size_t npages);
/* The set's freed blocks, kept assembled, back to the pool as pages (callers hold mt_pool_lock). */
void mt_range_cache_drain(mt_colour_set *s);
uint64_t mt_range_cached_pages(void);

/* ---- heap.c ---- */
struct mt_colour_set {
    uint64_t *bits;
    uint16_t *list;
    unsigned n;
    unsigned id;
    unsigned slot;  /* node slot its frames come from (0: any node) */
    uint32_t base;  /* mt_key(slot, 0) */
    atomic_uint cursor; /* round robin over the colours */
    pthread_mutex_t lock;
    void *partial[32]; /* per size class: slabs with free objects */
    uint32_t cache[MT_CACHE_BINS]; /* freed blocks kept assembled (range.c), under mt_pool_lock */
    uint64_t cached;               /* pages in them */
    uint32_t region, frontier;     /* where range.c carves blocks for the set next */
    bool huge_run_known;                   /* hugepage.c: huge_run computed (under mt_pool_lock) */
    uint16_t huge_run[MT_HUGE_ORDER + 1]; /* mt_huge_best_run per alignment */
};
extern mt_colour_set *mt_sets[MT_MAX_SETS];
extern unsigned mt_n_sets;
extern mt_colour_set *mt_process_set;
mt_colour_set *mt_set_intern(unsigned slot, const uint64_t *bitmap); /* NULL + errno */
void *mt_heap_malloc(mt_colour_set *s, size_t size);
void *mt_heap_memalign(mt_colour_set *s, size_t align, size_t size);
void mt_heap_free(void *p);
size_t mt_heap_usable(const void *p);
bool mt_heap_resize(void *p, size_t size); /* a large block resized in place, or false */
void mt_heap_unpoison(void *p, size_t n);
void mt_heap_thread_use(mt_colour_set *s);
mt_colour_set *mt_heap_thread_set(void);
void mt_heap_init(void);
void mt_heap_fork_prepare(void);
void mt_heap_fork_parent(void);
void mt_heap_fork_child(void);

/* ---- report.c ---- */
/* At exit: warn of pages spilled outside the colours, verify every delivered page, warn of the
 * kernel's moves (unless the process took part in a fork(), whose copy-on-write moves pages too),
 * write MEMTINT_REPORT. */
void mt_report_write(bool forked);
extern uint64_t mt_spilled_at_fork; /* a fork child's inherited spill count, not its own spills */

#endif
