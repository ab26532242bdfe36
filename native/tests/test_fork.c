/* fork() safety: while 4 threads allocate and free without pause, the main thread forks 40
 * times; each child allocates and frees small and large blocks and exits. A lock held across
 * fork() would hang a child (the runner's timeout catches it). Colours after fork() are NOT
 * kept (docs/libmemtint.md): heap pages are copy-on-write, so the child's first write copies a
 * page to a frame of any colour. What the library promises is to detect that: each child writes
 * a block allocated before the fork, and memtint_check_pages() must report it moved (the child
 * reads its own pagemap, which also shows the inherited pagemap descriptor was reopened). */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

static atomic_int stop;

static void *churn(void *arg) {
    uint64_t r = (uintptr_t)arg * 2654435761u + 1;
    void *slot[256] = {0};
    while (!atomic_load(&stop)) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        unsigned k = r % 256;
        if (slot[k]) { memtint_free(slot[k]); slot[k] = NULL; }
        else slot[k] = memtint_malloc(1 + (r >> 32) % (r & 1 ? 300 : 70000));
    }
    for (int k = 0; k < 256; k++) memtint_free(slot[k]);
    return NULL;
}

int main(void) {
    tc_load_masks();
    uint64_t set[1024] = {0};
    unsigned cols[] = {0, 1, 2, 3};
    tc_set_from_list(set, cols, 4);
    pthread_t th[4];
    for (long t = 0; t < 4; t++) pthread_create(&th[t], NULL, churn, (void *)t);
    int bad = 0;
    char *before = memtint_malloc(1 << 20);
    memset(before, 1, 1 << 20);
    if (tc_check_block(before, 1 << 20, set)) { fprintf(stderr, "parent block not coloured\n"); return 1; }
    for (int i = 0; i < 40; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char *a = memtint_malloc(100), *b = memtint_malloc(1 << 20);
            if (!a || !b) _exit(3);
            memset(a, 1, 100);
            memset(b, 2, 1 << 20);
            memtint_free(a);
            memtint_free(b);
            memset(before, 3, 1 << 20); /* copy-on-write: new frames */
            long moved = memtint_check_pages(before, 1 << 20);
            _exit(moved == 256 ? 0 : 4);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status)) { fprintf(stderr, "child %d: status %#x\n", i, status); bad++; }
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    printf("forks=40 failed_children=%d\n", bad);
    memtint_free(before);
    return bad != 0;
}
