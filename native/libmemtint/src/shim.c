/* shim.c — library start (configuration, mode choice, privilege and hypervisor checks), the
 * public API of memtint.h, and, in the preload build (MT_PRELOAD), the malloc family under its
 * standard names. Memory the library does not own (allocated before it started, or while no
 * colours apply) is glibc's: it is recognised by address and handed back to glibc. */
#include "internal.h"
#include "../include/memtint.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_int state; /* 0 not started, 1 starting, 2 ready */
static bool core_ready;  /* masks configured and a mode chosen */
static const char *no_mode_reason;

static const char *mode_name(int m) {
    return m == MEMTINT_MODE_PAGEMAP ? "pagemap" : m == MEMTINT_MODE_HUGEPAGE ? "hugepage" : "off";
}

/* Pick pagemap or hugepage mode; NULL, or why neither works. */
static const char *choose_mode(void) {
    bool privileged = mt_pagemap_privileged();
    bool high = false, low = false;
    for (unsigned i = 0; i < mt_cfg.n_masks; i++) {
        if (mt_cfg.masks[i] & ~(MT_HUGE - 1)) high = true;
        if (mt_cfg.masks[i] & (MT_HUGE - 1)) low = true;
    }
    mt_huge_uniform = !low;
    mt_huge_needs_pagemap = high;
    const char *no_hugepages = "hugepage mode: no free 2 MB hugepages (as root: echo N > "
                               "/proc/sys/vm/nr_hugepages)";
    const char *unpriv = "/proc/self/pagemap shows no frame numbers without privilege: run as root, "
                         "grant CAP_SYS_ADMIN, or use MEMTINT_MODE=hugepage with masks below bit 21";
    switch (mt_cfg.mode_requested) {
    case MT_MODE_PAGEMAP:
        if (!privileged) return unpriv;
        mt_mode = MEMTINT_MODE_PAGEMAP;
        return NULL;
    case MT_MODE_HUGEPAGE:
        if (high && !privileged)
            return "hugepage mode with masks using bits >= 21 needs each hugepage's frame number "
                   "from /proc/self/pagemap: run as root or grant CAP_SYS_ADMIN";
        if (!mt_meminfo_kb("HugePages_Free")) return no_hugepages;
        mt_mode = MEMTINT_MODE_HUGEPAGE;
        return NULL;
    default:
        if (privileged) {
            mt_mode = MEMTINT_MODE_PAGEMAP;
            if (mt_cfg.verbose) mt_warn("mode auto: pagemap (frame numbers readable)");
            return NULL;
        }
        if (!high) {
            if (!mt_meminfo_kb("HugePages_Free"))
                return "/proc/self/pagemap shows no frame numbers without privilege, and there are no "
                       "free 2 MB hugepages for hugepage mode: run as root, grant CAP_SYS_ADMIN, or "
                       "have root reserve hugepages (echo N > /proc/sys/vm/nr_hugepages)";
            mt_mode = MEMTINT_MODE_HUGEPAGE;
            if (mt_cfg.verbose)
                mt_warn("mode auto: hugepage (no pagemap privilege; masks below bit 21 need none)");
            return NULL;
        }
        return unpriv;
    }
}

static void atfork_prepare(void) { if (core_ready) mt_heap_fork_prepare(); }
/* After fork() a write by either process copies a shared page to a frame of any colour, so such
 * moves are fork's (documented), not the kernel's migrations. */
static bool forked;
static void atfork_parent(void) {
    forked = true;
    if (core_ready) mt_heap_fork_parent();
}
static void atfork_child(void) {
    forked = true;
    mt_spilled_at_fork = mt_stats.spilled;
    mt_stats.spilled_shape = 0; /* the exit warning's reasons are the child's own spills' */
    if (core_ready) mt_heap_fork_child();
}

static void start(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&state, &expected, 1)) return;
    mt_config_load();
    if (mt_cfg.n_masks) {
        no_mode_reason = choose_mode();
        if (no_mode_reason && mt_cfg.have_colours) {
            mt_text t = {0};
            mt_text_str(&t, "error: cannot colour memory (MEMTINT_COLORS is set): ");
            mt_text_str(&t, no_mode_reason);
            mt_fatal(&t);
        }
        if (!no_mode_reason) {
            if (mt_arena_init() || mt_pool_init()) {
                mt_text t = {0};
                mt_text_str(&t, "error: cannot reserve the library's address arena");
                mt_fatal(&t);
            }
            mt_heap_init();
            pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
            if (!mt_cfg.hypervisor_noted && mt_hypervisor_present())
                mt_warn("running under a hypervisor: frame numbers are guest-physical, so colours "
                        "need not match real DRAM banks, channels or cache sets");
            if (mt_cfg.have_colours) {
                mt_process_set = mt_set_intern((unsigned)(mt_cfg.node + 1), mt_cfg.colours);
                if (!mt_process_set) {
                    mt_text t = {0};
                    mt_text_str(&t, "error: cannot set up the colour set of MEMTINT_COLORS");
                    mt_fatal(&t);
                }
            }
            core_ready = true;
            if (mt_cfg.verbose && mt_mode == MEMTINT_MODE_PAGEMAP) {
                /* pinned pages can still be migrated unless these are 0 (docs/libmemtint.md) */
                const char *knobs[2][2] = {{"/proc/sys/vm/compact_unevictable_allowed",
                                            "vm.compact_unevictable_allowed=1: compaction may move mlocked pages"},
                                           {"/proc/sys/kernel/numa_balancing",
                                            "kernel.numa_balancing is on: NUMA balancing may move pages"}};
                for (int i = 0; i < 2; i++) {
                    int fd = open(knobs[i][0], O_RDONLY | O_CLOEXEC);
                    char c = '0';
                    if (fd >= 0) {
                        if (read(fd, &c, 1) != 1) c = '0';
                        close(fd);
                    }
                    if (c != '0') mt_warn(knobs[i][1]);
                }
            }
            if (mt_cfg.verbose) {
                mt_text t = {0};
                mt_text_str(&t, "mode ");
                mt_text_str(&t, mode_name(mt_mode));
                mt_say(&t);
            }
        }
    }
    atomic_store(&state, 2);
}

__attribute__((constructor)) static void memtint_constructor(void) { start(); }
__attribute__((destructor)) static void memtint_destructor(void) { mt_report_write(forked); }

/* The colour set of this thread's next allocation, or NULL for glibc. */
static inline mt_colour_set *current_set(void) {
    if (unlikely(atomic_load_explicit(&state, memory_order_acquire) != 2)) {
        start();
        if (atomic_load(&state) != 2) return NULL; /* re-entered while starting */
    }
    if (!core_ready) return NULL;
    return mt_heap_thread_set();
}

/* glibc's usable size, from its chunk header (malloc_usable_size itself is ours here). */
static size_t glibc_usable(const void *p) {
    size_t sz = ((const size_t *)p)[-1];
    return (sz & ~(size_t)7) - ((sz & 2) ? 2 * sizeof(size_t) : sizeof(size_t));
}

void *memtint_malloc(size_t size) {
    mt_colour_set *s = current_set();
    if (!s) return __libc_malloc(size);
    return mt_heap_malloc(s, size);
}

void memtint_free(void *p) {
    if (!p) return;
    if (mt_in_arena(p)) mt_heap_free(p);
    else __libc_free(p);
}

void *memtint_calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return NULL; }
    mt_colour_set *s = current_set();
    if (!s) return __libc_calloc(n, size);
    void *p = mt_heap_malloc(s, total);
    if (p) memset(p, 0, total);
    return p;
}

void *memtint_realloc(void *p, size_t size) {
    if (!p) return memtint_malloc(size);
    if (size == 0) { memtint_free(p); return NULL; }
    size_t old;
    if (mt_in_arena(p)) {
        old = mt_heap_usable(p);
        if (size <= old && size > old / 2) {
            mt_heap_unpoison(p, size);
            return p;
        }
        if (mt_heap_resize(p, size)) return p;
    } else {
        mt_colour_set *s = current_set();
        if (!s) return __libc_realloc(p, size);
        old = glibc_usable(p); /* glibc memory moves into colours on growth */
    }
    void *q = memtint_malloc(size);
    if (!q) return NULL;
    if (mt_in_arena(p)) mt_heap_unpoison(p, old < size ? old : size);
    memcpy(q, p, old < size ? old : size);
    memtint_free(p);
    return q;
}

int memtint_posix_memalign(void **out, size_t align, size_t size) {
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    mt_colour_set *s = current_set();
    void *p = s ? mt_heap_memalign(s, align, size) : __libc_memalign(align, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *memtint_memalign(size_t align, size_t size) {
    /* glibc's memalign and aligned_alloc (2.36) take any alignment up to SIZE_MAX/2 + 1 and round
     * one that is not a power of two up to the next (a program that works with glibc must not
     * get NULL here); beyond that none exists: EINVAL, as glibc. */
    if (align > ((size_t)1 << (sizeof(size_t) * 8 - 1))) { errno = EINVAL; return NULL; }
    if (align & (align - 1)) align = (size_t)1 << (sizeof(size_t) * 8 - __builtin_clzl(align));
    if (align < 16) align = 16;
    mt_colour_set *s = current_set();
    return s ? mt_heap_memalign(s, align, size) : __libc_memalign(align, size);
}

size_t memtint_usable_size(const void *p) {
    if (!p) return 0;
    return mt_in_arena(p) ? mt_heap_usable(p) : glibc_usable(p);
}

/* ---- public API ---- */

int memtint_set_node_colors(int node, const unsigned *colors, size_t n) {
    start();
    if (!core_ready) { errno = no_mode_reason ? EPERM : EINVAL; return -1; }
    if (!colors || n == 0) { errno = EINVAL; return -1; }
    mt_text why = {0};
    if (mt_node_check(node, &why)) {
        /* a node is a machine fact, not a typo in a colour: say which nodes there are */
        mt_text t = {0};
        mt_text_str(&t, "error: memtint_set_node_colors: ");
        mt_text_str(&t, why.buf);
        mt_say(&t);
        errno = EINVAL;
        return -1;
    }
    uint64_t bm[MT_MAX_COLOURS / 64] = {0};
    for (size_t i = 0; i < n; i++) {
        if (colors[i] >= mt_n_colours) { errno = EINVAL; return -1; }
        bm[colors[i] >> 6] |= 1ULL << (colors[i] & 63);
    }
    mt_colour_set *s = mt_set_intern((unsigned)(node + 1), bm);
    if (!s) return -1;
    mt_heap_thread_use(s);
    return 0;
}

int memtint_set_colors(const unsigned *colors, size_t n) {
    start();
    return memtint_set_node_colors(mt_cfg.node, colors, n);
}

int memtint_color_of(const void *ptr) {
    start();
    if (!mt_cfg.n_masks) return -1;
    if (core_ready && mt_in_arena(ptr)) {
        uint8_t st = mt_pages[mt_idx(ptr)].state;
        return st == PD_SLAB || st == PD_HEAD || st == PD_BODY || st == PD_POOL || st == PD_CACHED
                   ? mt_pages[mt_idx(ptr)].colour : -1;
    }
    if (mt_pagemap_fd < 0 && mt_pagemap_open()) return -1;
    uint64_t pfn;
    if (mt_pagemap_read((uintptr_t)ptr, 1, &pfn) || !pfn) return -1;
    return (int)mt_colour_of_paddr(pfn << MT_PAGE_SHIFT | ((uintptr_t)ptr & (MT_PAGE - 1)));
}

static long check_range(uint32_t first, uint32_t n) {
    static uint64_t pfns[512];
    long moved = 0;
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < 512 ? n - done : 512;
        if (mt_pagemap_read((uintptr_t)mt_va(first + done), k, pfns)) { errno = EIO; return -1; }
        for (uint32_t i = 0; i < k; i++) {
            mt_page *pg = &mt_pages[first + done + i];
            if (pg->state != PD_SLAB && pg->state != PD_HEAD && pg->state != PD_BODY && pg->state != PD_CACHED) continue;
            if (!pfns[i]) pfns[i] = mt_pagemap_settle((uintptr_t)mt_va(first + done + i));
            if (!pfns[i]) { errno = EPERM; return -1; }
            if (pfns[i] != pg->pfn) {
                moved++;
                pg->pfn = pfns[i]; /* count each move once */
                unsigned colour = mt_colour_of_paddr(pfns[i] << MT_PAGE_SHIFT);
                if (mt_bit(mt_wanted, mt_page_key(pg)) && !mt_bit(mt_wanted, mt_key(pg->slot, colour)))
                    mt_stats.moved_out++;
                pg->colour = (uint16_t)colour;
            }
        }
        done += k;
    }
    return moved;
}

long memtint_check_pages(const void *ptr, size_t len) {
    start();
    if (!core_ready || !mt_in_arena(ptr) || !mt_in_arena((const char *)ptr + (len ? len - 1 : 0))) {
        errno = EINVAL;
        return -1;
    }
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) return 0;
    uint32_t first = mt_idx(ptr), last = mt_idx((const char *)ptr + (len ? len - 1 : 0));
    pthread_mutex_lock(&mt_pool_lock);
    long moved = check_range(first, last - first + 1);
    if (moved > 0) mt_stats.moved += (uint64_t)moved;
    pthread_mutex_unlock(&mt_pool_lock);
    return moved;
}

long memtint_verify_all_pages(void) {
    start();
    if (!core_ready) { errno = EINVAL; return -1; }
    if (mt_mode == MEMTINT_MODE_HUGEPAGE) return 0;
    pthread_mutex_lock(&mt_pool_lock);
    uint32_t used[2][2];
    mt_arena_used(used);
    long moved = 0;
    for (int r = 0; r < 2 && moved >= 0; r++) {
        long m = check_range(used[r][0], used[r][1] - used[r][0]);
        moved = m < 0 ? m : moved + m;
    }
    if (moved > 0) mt_stats.moved += (uint64_t)moved;
    pthread_mutex_unlock(&mt_pool_lock);
    return moved;
}

long memtint_release_held_pages(void) {
    start();
    if (!core_ready) return 0;
    pthread_mutex_lock(&mt_pool_lock);
    long n = mt_pool_release_held(true);
    pthread_mutex_unlock(&mt_pool_lock);
    return n;
}

int memtint_get_stats(struct memtint_stats *out) {
    start();
    memset(out, 0, sizeof *out);
    out->n_masks = mt_cfg.n_masks;
    if (!core_ready) return 0;
    pthread_mutex_lock(&mt_pool_lock);
    out->mode = mt_mode;
    out->pages_from_kernel = mt_stats.from_kernel;
    out->pages_delivered = mt_stats.delivered;
    out->pages_delivered_peak = mt_stats.delivered_peak;
    out->pages_held_aside = mt_pool_held_pages();
    out->pages_pooled = mt_pool_ready_pages();
    out->pages_spilled = mt_stats.spilled;
    out->pages_moved = mt_stats.moved;
    out->pages_released = mt_stats.released;
    out->pages_cached = mt_range_cached_pages();
    pthread_mutex_unlock(&mt_pool_lock);
    return 0;
}

uint64_t memtint_pages_delivered_of(unsigned c) {
    start();
    return core_ready && c < mt_n_colours ? mt_stats.delivered_of[c] : 0;
}

uint64_t memtint_pages_delivered_on_node(int node) {
    start();
    return core_ready && node >= -1 && node < MT_MAX_NODES ? mt_stats.delivered_slot[node + 1] : 0;
}

#ifdef MT_PRELOAD
#define EXPORT __attribute__((visibility("default")))
EXPORT void *malloc(size_t n) { return memtint_malloc(n); }
EXPORT void free(void *p) { memtint_free(p); }
EXPORT void *calloc(size_t n, size_t s) { return memtint_calloc(n, s); }
EXPORT void *realloc(void *p, size_t n) { return memtint_realloc(p, n); }
EXPORT void *reallocarray(void *p, size_t n, size_t s) {
    size_t t;
    if (__builtin_mul_overflow(n, s, &t)) { errno = ENOMEM; return NULL; }
    return memtint_realloc(p, t);
}
EXPORT int posix_memalign(void **out, size_t a, size_t n) { return memtint_posix_memalign(out, a, n); }
EXPORT void *aligned_alloc(size_t a, size_t n) { return memtint_memalign(a, n); }
EXPORT void *memalign(size_t a, size_t n) { return memtint_memalign(a, n); }
EXPORT void *valloc(size_t n) { return memtint_memalign(MT_PAGE, n); }
EXPORT void *pvalloc(size_t n) {
    size_t whole; /* n rounded up to pages: near SIZE_MAX that wrapped round to a page or none */
    if (__builtin_add_overflow(n, MT_PAGE - 1, &whole)) { errno = ENOMEM; return NULL; }
    return memtint_memalign(MT_PAGE, whole & ~(MT_PAGE - 1));
}
EXPORT size_t malloc_usable_size(void *p) { return memtint_usable_size(p); }
#endif
