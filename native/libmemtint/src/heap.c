/* heap.c — the object allocator over coloured pages, with per-thread colour sets (TintMalloc,
 * Pan thesis §3.2(c): after one call per thread its malloc() returns memory of its colours).
 * Small objects (<= 2016 B, 22 size classes) live in one-page slabs; each colour set has its
 * own slabs behind one lock, and each thread keeps a short cache of free objects per class for
 * its current set, so the fast path is a thread-local pop/push. A freed object only enters the
 * cache of a thread using the same set: an object never changes colour set by being recycled.
 * Larger blocks are coloured ranges (range.c). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MEMTINT_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)0)
#define UNPOISON(p, n) ((void)0)
#endif

#define N_CLASSES 22
#define SMALL_MAX 2016
#define SLAB_HEADER 64
#define CACHE_MAX 32
#define REFILL 16

static const uint16_t class_size[N_CLASSES] = {16,  32,  48,  64,  80,  96,  112, 128,
                                               160, 192, 224, 256, 320, 384, 448, 512,
                                               640, 768, 896, 1024, 1344, 2016};
static uint8_t class_of16[SMALL_MAX / 16 + 2];

typedef struct slab {
    struct slab *next, *prev; /* the set's partial list for this class */
    void *free;
    uint16_t used, capacity;
    uint8_t cls, on_partial;
    uint16_t set_id;
} slab;
_Static_assert(sizeof(slab) <= SLAB_HEADER, "slab header");

typedef struct {
    void *head;
    uint32_t n;
} bin;

typedef struct {
    mt_colour_set *set;
    bool started, exiting;
    bin bins[N_CLASSES];
} mt_thread;

static __thread mt_thread tl __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
mt_colour_set *mt_sets[MT_MAX_SETS];
unsigned mt_n_sets;
mt_colour_set *mt_process_set;

static void thread_exit(void *arg);

void mt_heap_init(void) {
    for (unsigned s = 0, c = 0; s <= SMALL_MAX / 16 + 1; s++) {
        while (c < N_CLASSES - 1 && class_size[c] < s * 16) c++;
        class_of16[s] = (uint8_t)c;
    }
    pthread_key_create(&exit_key, thread_exit);
}

/* The set of these colours on node slot `slot` (0: any node); sets with the same colours on
 * different nodes are different sets, with their own slabs and blocks. */
mt_colour_set *mt_set_intern(unsigned slot, const uint64_t *bitmap) {
    size_t words = (mt_n_colours + 63) / 64;
    unsigned n = 0;
    for (unsigned c = 0; c < mt_n_colours; c++) n += mt_bit(bitmap, c);
    if (!n) { errno = EINVAL; return NULL; }
    pthread_mutex_lock(&sets_lock);
    for (unsigned i = 0; i < mt_n_sets; i++)
        if (mt_sets[i]->slot == slot && !memcmp(mt_sets[i]->bits, bitmap, words * 8)) {
            pthread_mutex_unlock(&sets_lock);
            return mt_sets[i];
        }
    mt_colour_set *s = NULL;
    if (mt_n_sets < MT_MAX_SETS && (s = mt_meta_alloc(sizeof *s)) &&
        (s->bits = mt_meta_alloc(words * 8)) && (s->list = mt_meta_alloc(n * sizeof *s->list))) {
        memcpy(s->bits, bitmap, words * 8);
        for (unsigned c = 0; c < mt_n_colours; c++)
            if (mt_bit(bitmap, c)) s->list[s->n++] = (uint16_t)c;
        pthread_mutex_init(&s->lock, NULL);
        s->id = mt_n_sets;
        s->slot = slot;
        s->base = mt_key(slot, 0);
        pthread_mutex_lock(&mt_pool_lock);
        for (unsigned i = 0; i < s->n; i++) {
            uint32_t k = s->base + s->list[i];
            mt_wanted[k >> 6] |= 1ULL << (k & 63);
        }
        mt_slot_used[slot] = true;
        pthread_mutex_unlock(&mt_pool_lock);
        mt_sets[mt_n_sets++] = s;
    } else {
        errno = ENOMEM;
        s = NULL;
    }
    pthread_mutex_unlock(&sets_lock);
    return s;
}

static inline slab *slab_of(const void *p) { return (slab *)((uintptr_t)p & ~(MT_PAGE - 1)); }

static void partial_remove(mt_colour_set *s, slab *sl) {
    if (sl->prev) sl->prev->next = sl->next;
    else s->partial[sl->cls] = sl->next;
    if (sl->next) sl->next->prev = sl->prev;
    sl->on_partial = 0;
}

static void partial_add(mt_colour_set *s, slab *sl) {
    sl->prev = NULL;
    sl->next = s->partial[sl->cls];
    if (sl->next) sl->next->prev = sl;
    s->partial[sl->cls] = sl;
    sl->on_partial = 1;
}

/* A fresh slab for class cls from a page of the set's colours. Called with s->lock held. */
static slab *slab_new(mt_colour_set *s, unsigned cls) {
    pthread_mutex_lock(&mt_pool_lock);
    uint32_t idx = mt_pool_take_page(s);
    if (idx != MT_NIL) mt_pages[idx].state = PD_SLAB;
    pthread_mutex_unlock(&mt_pool_lock);
    if (idx == MT_NIL) return NULL;
    slab *sl = mt_va(idx);
    UNPOISON(sl, MT_PAGE);
    unsigned size = class_size[cls];
    sl->cls = (uint8_t)cls;
    sl->set_id = (uint16_t)s->id;
    sl->used = 0;
    sl->capacity = (uint16_t)((MT_PAGE - SLAB_HEADER) / size);
    sl->free = NULL;
    for (int i = sl->capacity - 1; i >= 0; i--) {
        void **obj = (void **)((char *)sl + SLAB_HEADER + (size_t)i * size);
        *obj = sl->free;
        sl->free = obj;
    }
    POISON((char *)sl + SLAB_HEADER, MT_PAGE - SLAB_HEADER);
    partial_add(s, sl);
    return sl;
}

static void *object_pop(mt_colour_set *s, slab *sl) {
    void **obj = sl->free;
    UNPOISON(obj, sizeof(void *));
    sl->free = *obj;
    sl->used++;
    if (!sl->free) partial_remove(s, sl);
    return obj;
}

/* An object back to its slab; an empty slab that is not the only one of its class goes back
 * to the pool, so its page can serve another class or a block. */
static void central_free(void *p) {
    slab *sl = slab_of(p);
    mt_colour_set *s = mt_sets[sl->set_id];
    pthread_mutex_lock(&s->lock);
    POISON(p, class_size[sl->cls]);
    UNPOISON(p, sizeof(void *));
    *(void **)p = sl->free;
    POISON(p, sizeof(void *));
    sl->free = p;
    sl->used--;
    if (!sl->on_partial) partial_add(s, sl);
    if (sl->used == 0 && (sl->next || sl->prev)) {
        partial_remove(s, sl);
        pthread_mutex_lock(&mt_pool_lock);
        mt_pool_return(mt_idx(sl));
        pthread_mutex_unlock(&mt_pool_lock);
    }
    pthread_mutex_unlock(&s->lock);
}

static void bins_flush(void) {
    for (unsigned c = 0; c < N_CLASSES; c++) {
        bin *b = &tl.bins[c];
        while (b->head) {
            void **obj = b->head;
            UNPOISON(obj, sizeof(void *));
            b->head = *obj;
            central_free(obj);
        }
        b->n = 0;
    }
}

static void thread_exit(void *arg) {
    (void)arg;
    tl.exiting = true;
    bins_flush();
}

void mt_heap_thread_use(mt_colour_set *s) {
    if (tl.set == s) return;
    bins_flush();
    tl.set = s;
}

mt_colour_set *mt_heap_thread_set(void) {
    if (unlikely(!tl.set)) tl.set = mt_process_set;
    return tl.set;
}

static void *small_slow(mt_colour_set *s, unsigned cls) {
    if (!tl.started) {
        tl.started = true;
        pthread_setspecific(exit_key, (void *)1);
    }
    bin *b = &tl.bins[cls];
    void *first = NULL;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < (tl.exiting ? 1 : REFILL); i++) {
        slab *sl = s->partial[cls];
        if (!sl && !(sl = slab_new(s, cls))) break;
        void *obj = object_pop(s, sl);
        if (!first) { first = obj; continue; }
        *(void **)obj = b->head;
        POISON(obj, sizeof(void *));
        b->head = obj;
        b->n++;
    }
    pthread_mutex_unlock(&s->lock);
    return first;
}

void *mt_heap_malloc(mt_colour_set *s, size_t size) {
    if (likely(size <= SMALL_MAX)) {
        unsigned cls = class_of16[(size + 15) >> 4];
        bin *b = &tl.bins[cls];
        void **obj = b->head;
        if (likely(obj && tl.set == s)) {
            UNPOISON(obj, sizeof(void *));
            b->head = *obj;
            b->n--;
            UNPOISON(obj, size ? size : 1);
            return obj;
        }
        mt_heap_thread_use(s);
        obj = small_slow(s, cls);
        if (obj) UNPOISON(obj, size ? size : 1);
        else errno = ENOMEM;
        return obj;
    }
    if (size > ((size_t)1 << 40)) { errno = ENOMEM; return NULL; }
    void *p = mt_range_alloc(s, (size + MT_PAGE - 1) >> MT_PAGE_SHIFT, 0);
    if (p) UNPOISON(p, size);
    return p;
}

void *mt_heap_memalign(mt_colour_set *s, size_t align, size_t size) {
    if (align <= 16) return mt_heap_malloc(s, size);
    if (size <= SMALL_MAX && align <= SLAB_HEADER) {
        for (unsigned c = 0; c < N_CLASSES; c++)
            if (class_size[c] >= size && class_size[c] % align == 0)
                return mt_heap_malloc(s, class_size[c]);
    }
    if (align > MT_ARENA_ALIGN) { errno = ENOMEM; return NULL; } /* docs/libmemtint.md: up to 1 GB */
    unsigned order = 0;
    while ((MT_PAGE << order) < align) order++;
    if (size == 0) size = 1;
    if (size > ((size_t)1 << 40)) { errno = ENOMEM; return NULL; }
    void *p = mt_range_alloc(s, (size + MT_PAGE - 1) >> MT_PAGE_SHIFT, order);
    if (p) UNPOISON(p, size);
    return p;
}

static _Noreturn void bad_pointer(const char *what, const void *p) {
    mt_text t = {0};
    mt_text_str(&t, what);
    mt_text_str(&t, ": pointer ");
    mt_text_hex(&t, (uintptr_t)p);
    mt_text_str(&t, " was not returned by malloc (or was freed already)");
    mt_say(&t);
    abort();
}

void mt_heap_free(void *p) {
    uint32_t idx = mt_idx(p);
    uint8_t state = mt_pages[idx].state;
    if (likely(state == PD_SLAB)) {
        slab *sl = slab_of(p);
        unsigned cls = sl->cls;
        if (((uintptr_t)p - (uintptr_t)sl - SLAB_HEADER) % class_size[cls]) bad_pointer("free", p);
        bin *b = &tl.bins[cls];
        if (likely(tl.set && sl->set_id == tl.set->id && b->n < CACHE_MAX && !tl.exiting)) {
            POISON(p, class_size[cls]);
            UNPOISON(p, sizeof(void *));
            *(void **)p = b->head;
            POISON(p, sizeof(void *));
            b->head = p;
            b->n++;
            return;
        }
        central_free(p);
        return;
    }
    if (state == PD_HEAD && ((uintptr_t)p & (MT_PAGE - 1)) == 0) {
        POISON(p, (size_t)mt_pages[idx].aux << MT_PAGE_SHIFT);
        mt_range_free(idx);
        return;
    }
    bad_pointer("free", p);
}

bool mt_heap_resize(void *p, size_t size) {
    uint32_t idx = mt_idx(p);
    if (mt_pages[idx].state != PD_HEAD || size <= SMALL_MAX || size > ((size_t)1 << 40)) return false;
    size_t old = (size_t)mt_pages[idx].aux << MT_PAGE_SHIFT;
    if (!mt_range_resize(idx, (size + MT_PAGE - 1) >> MT_PAGE_SHIFT)) return false;
    if (size < old) POISON((char *)p + size, old - size);
    UNPOISON(p, size);
    return true;
}

/* realloc copies the whole usable size of the old block; under ASan only the requested bytes
 * were unpoisoned, so open the rest for the copy (the block is freed right after). */
void mt_heap_unpoison(void *p, size_t n) { UNPOISON(p, n); }

size_t mt_heap_usable(const void *p) {
    uint32_t idx = mt_idx(p);
    if (mt_pages[idx].state == PD_SLAB) return class_size[slab_of(p)->cls];
    if (mt_pages[idx].state == PD_HEAD) return (size_t)mt_pages[idx].aux << MT_PAGE_SHIFT;
    return 0;
}

/* fork(): the child must not inherit a lock held by another thread mid-update. */
void mt_heap_fork_prepare(void) {
    pthread_mutex_lock(&sets_lock);
    for (unsigned i = 0; i < mt_n_sets; i++) pthread_mutex_lock(&mt_sets[i]->lock);
    pthread_mutex_lock(&mt_pool_lock);
}

void mt_heap_fork_parent(void) {
    pthread_mutex_unlock(&mt_pool_lock);
    for (unsigned i = mt_n_sets; i-- > 0;) pthread_mutex_unlock(&mt_sets[i]->lock);
    pthread_mutex_unlock(&sets_lock);
}

void mt_heap_fork_child(void) {
    pthread_mutex_init(&mt_pool_lock, NULL);
    for (unsigned i = 0; i < mt_n_sets; i++) pthread_mutex_init(&mt_sets[i]->lock, NULL);
    pthread_mutex_init(&sets_lock, NULL);
    mt_pagemap_open(); /* the inherited descriptor reads the parent's pagemap */
}
