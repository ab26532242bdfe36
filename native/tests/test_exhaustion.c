/* Acceptance test 4 (issue 5): asking for more than the chosen colours can supply. Allocates
 * BLOCK-byte blocks (touching them) until malloc fails or MAX blocks are held, then prints what
 * happened; the runner checks ENOMEM and the message (MEMTINT_ON_EXHAUSTION=error) or that the
 * allocation continued with counted spilled pages (=spill). Usage: test_exhaustion BLOCK MAX */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <errno.h>

int main(int argc, char **argv) {
    size_t block = argc > 1 ? (size_t)atol(argv[1]) : 1 << 20;
    long max = argc > 2 ? atol(argv[2]) : 100000;
    tc_load_masks();
    static void *held[100000];
    long n = 0;
    int err = 0;
    while (n < max) {
        errno = 0;
        char *p = memtint_malloc(block);
        if (!p) { err = errno; break; }
        memset(p, 1, block);
        held[n++] = p;
    }
    struct memtint_stats st;
    memtint_get_stats(&st);
    printf("blocks=%ld failed=%s errno=%s spilled=%llu delivered=%llu held_aside=%llu from_kernel=%llu\n", n,
           n < max ? "yes" : "no", err == ENOMEM ? "ENOMEM" : err ? "other" : "none",
           (unsigned long long)st.pages_spilled, (unsigned long long)st.pages_delivered,
           (unsigned long long)st.pages_held_aside, (unsigned long long)st.pages_from_kernel);
    /* the memory obtained before the failure is still good and can be freed */
    for (long i = 0; i < n; i++) memtint_free(held[i]);
    return 0;
}
