/* The preloaded malloc family at its edges, against glibc's behaviour (2.36) or, where the
 * library is documented to differ, its documentation (docs/libmemtint.md): a program that works
 * with glibc must get the same answers under LD_PRELOAD. Built without the library; run with it
 * preloaded and colours set. Prints one line per failure and "ok N" at the end. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
#define EXPECT(cond, what) do { checks++; if (!(cond)) { printf("FAILED: %s (errno %d)\n", what, errno); failures++; } } while (0)

int main(void) {
    int (*colour_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "memtint_color_of");
    EXPECT(colour_of != NULL, "libmemtint is preloaded");
    volatile size_t huge = SIZE_MAX; /* volatile: the compiler must not fold the calls */
    void *p;
    errno = 0;
    p = pvalloc(huge);
    EXPECT(p == NULL && errno == ENOMEM, "pvalloc(SIZE_MAX) fails with ENOMEM (it wrapped round to one page)");
    errno = 0;
    p = pvalloc(huge - 100);
    EXPECT(p == NULL && errno == ENOMEM, "pvalloc(SIZE_MAX - 100) fails with ENOMEM");
    p = pvalloc(5000);
    EXPECT(p && ((uintptr_t)p & 4095) == 0 && malloc_usable_size(p) >= 8192, "pvalloc(5000) gives two whole pages");
    free(p);
    errno = 0;
    p = valloc(huge);
    EXPECT(p == NULL && errno == ENOMEM, "valloc(SIZE_MAX) fails with ENOMEM");
    /* glibc rounds an alignment that is not a power of two up to the next one */
    p = memalign(24, 100);
    EXPECT(p && ((uintptr_t)p % 32) == 0 && colour_of && colour_of(p) >= 0, "memalign(24) is 32-aligned and coloured");
    free(p);
    p = aligned_alloc(48, 1000);
    EXPECT(p && ((uintptr_t)p % 64) == 0, "aligned_alloc(48) is 64-aligned");
    free(p);
    p = memalign(3 << 20, 5000);
    EXPECT(p && ((uintptr_t)p % (4 << 20)) == 0, "memalign(3 MB) is 4 MB-aligned");
    free(p);
    /* documented: alignments up to 1 GB; larger ones fail with ENOMEM */
    errno = 0;
    p = memalign((size_t)2 << 30, 100);
    EXPECT(p == NULL && errno == ENOMEM, "memalign(2 GB) fails with ENOMEM");
    errno = 0;
    p = memalign(huge, 10);
    EXPECT(p == NULL && errno == EINVAL, "memalign(SIZE_MAX) fails with EINVAL, as glibc");
    void *q = (void *)1;
    EXPECT(posix_memalign(&q, 24, 100) == EINVAL && q == (void *)1, "posix_memalign(24) is EINVAL (POSIX)");
    printf("ok %d\n", checks);
    return failures != 0;
}
