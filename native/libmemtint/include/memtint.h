/* memtint.h — libmemtint: a colouring malloc for stock Linux, from user space.
 *
 * Implements the per-thread coloured heap of TintMalloc (Pan, thesis ch. 3, §3.2) and the
 * whole-heap bank/channel/LLC colouring of BPM/CAMC (BPM §2.3) without a kernel patch: the
 * library obtains pinned frames, reads their frame numbers from /proc/self/pagemap (or uses
 * 2 MB hugepages, whose low 21 physical bits equal the virtual offset), keeps them by colour, and
 * serves malloc from the frames of the chosen colours. See docs/libmemtint.md.
 *
 * CONTRACT WITH `memtint run` (environment, read once when the library starts; no malloc):
 *   MEMTINT_COLOR_MASKS   comma-separated hex masks, at most 16: "0x2000,0x4000,0x8000".
 *                         Colour bit i of a physical address = parity(paddr & mask_i); the colour
 *                         is the integer of those bits (the simulator's ColourSpace, os/colour.rs).
 *   MEMTINT_COLORS        colours of the process (default of every thread): "0-3,8,10-11".
 *                         Unset: every allocation is passed to glibc's malloc (uncoloured) until a
 *                         thread calls memtint_set_colors().
 *   MEMTINT_NODE          NUMA node the coloured frames come from (default of every thread, as
 *                         MEMTINT_COLORS): "0"; "-1" or unset: any node. A node without memory
 *                         is an error naming the nodes that have memory.
 *   MEMTINT_MODE          auto (default) | pagemap | hugepage.
 *   MEMTINT_ON_EXHAUSTION error (default: ENOMEM and one stderr message naming the colours) |
 *                         spill (take frames of other colours; counted as pages_spilled).
 *   MEMTINT_REPORT=path   at exit, write a JSON report (see docs/libmemtint.md for the schema);
 *                         "%p" in the path becomes the process id. A regular file is replaced
 *                         atomically (rename); a device or FIFO is written into, a symlink followed.
 *   MEMTINT_QUIET=1       no warnings (errors are still printed).
 *   MEMTINT_VERBOSE=1     say which mode `auto` picked and why.
 *   MEMTINT_POOL_LIMIT    most memory the pool may take from the kernel, e.g. "512M", "4G"
 *                         (default: until the kernel refuses). Frames held aside count.
 * A malformed variable is an error naming the variable and the bad text; the process exits with
 * status 2 before main runs rather than running uncoloured.
 */
#ifndef MEMTINT_H
#define MEMTINT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The calling thread's later allocations come from these colours (each < 2^masks). Returns 0,
 * or -1 with errno EINVAL (bad colour, n == 0, no masks configured) / EPERM (no mode possible:
 * frame numbers unreadable, no hugepage mode) / ENOMEM (over 256 colour sets). Memory allocated
 * before the call keeps its colours; free() of it from any thread is fine. */
int memtint_set_colors(const unsigned *colors, size_t n);

/* TintMalloc's tint_init (Pan, thesis §3.2(c)): the calling thread's later allocations come from
 * frames on NUMA node `node` (-1: any node) of these colours. The colours are those of the one
 * configured colour space; a space that combines bank and LLC bits (the engine's vertical
 * spaces) makes each colour a (bank, LLC) pair. Frames are bound to the node with mbind
 * (MPOL_BIND) on the library's own mappings before they are touched, checked with move_pages,
 * and pooled per node. memtint_set_colors(c, n) is memtint_set_node_colors(MEMTINT_NODE, c, n).
 * Returns 0, or -1 with errno EINVAL (a node that does not exist or has no memory, with a
 * message on stderr naming the nodes with memory; or as memtint_set_colors) / EPERM / ENOMEM. */
int memtint_set_node_colors(int node, const unsigned *colors, size_t n);

/* The colour of the frame backing ptr: from the library's own record for its memory, from
 * /proc/self/pagemap for other memory. -1 if unknown (not resident, no privilege, no masks). */
int memtint_color_of(const void *ptr);

/* Re-read pagemap for the pages of [ptr, ptr+len) that the library delivered and compare their
 * frames with those recorded when they were coloured. Returns the number of pages whose frame
 * changed (the kernel moved them: compaction, NUMA balancing), or -1 with errno (EPERM: pagemap
 * not readable; EINVAL: not library memory). Hugepage-mode pages are never counted as moved
 * (hugetlb pages are not migrated by compaction of pinned memory). */
long memtint_check_pages(const void *ptr, size_t len);

/* Same check over every page the library currently has delivered. */
long memtint_verify_all_pages(void);

/* Give frames held aside (colours nobody uses) back to the kernel now. Returns pages released. */
long memtint_release_held_pages(void);

struct memtint_stats {
    int mode;                    /* MEMTINT_MODE_* in use */
    unsigned n_masks;            /* colour bits */
    uint64_t pages_from_kernel;  /* 4 KB pages obtained (hugepages count as 512) */
    uint64_t pages_delivered;    /* pages currently handed to the heap (slabs and large blocks) */
    uint64_t pages_delivered_peak; /* the most pages_delivered has been */
    uint64_t pages_held_aside;   /* pool pages of colours no thread uses */
    uint64_t pages_pooled;       /* pool pages of colours in use, ready to deliver */
    uint64_t pages_spilled;      /* pages delivered outside the asked colours (spill mode) */
    uint64_t pages_moved;        /* pages found moved by the checks so far */
    uint64_t pages_released;     /* held-aside pages given back to the kernel */
    uint64_t pages_cached;       /* of pages_delivered: freed large blocks kept assembled for reuse */
};
#define MEMTINT_MODE_OFF 0       /* MEMTINT_COLORS unset and nobody called set_colors yet */
#define MEMTINT_MODE_PAGEMAP 1
#define MEMTINT_MODE_HUGEPAGE 2
int memtint_get_stats(struct memtint_stats *out);

/* Pages delivered so far with colour c (cumulative), 0 for colours out of range. */
uint64_t memtint_pages_delivered_of(unsigned colour);

/* Pages delivered so far from frames bound to `node` (cumulative); node -1: from unbound frames
 * (colour sets of any node). A getter of its own, so struct memtint_stats keeps its size. */
uint64_t memtint_pages_delivered_on_node(int node);

/* The allocator under non-standard names (always exported; the preload build also exports the
 * standard malloc family: malloc, free, calloc, realloc, reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, malloc_usable_size). */
void *memtint_malloc(size_t size);
void memtint_free(void *ptr);
void *memtint_calloc(size_t n, size_t size);
void *memtint_realloc(void *ptr, size_t size);
int memtint_posix_memalign(void **out, size_t alignment, size_t size);
void *memtint_memalign(size_t alignment, size_t size);
size_t memtint_usable_size(const void *ptr);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
