/* Per-thread node + colours (issue 30; TintMalloc's tint_init(node, colours), Pan §3.2(c)).
 * The test asks the kernel itself where frames are (move_pages(2) query, status = node) and
 * reads their colours through pagemap; it checks the binding with get_mempolicy(MPOL_F_ADDR):
 * the library's frames are MPOL_BIND to the node, the program's own memory and the thread's
 * policy stay default. Usage: test_node [MEDIUM_BYTES] (small enough for hugepage runs). */
#include "../libmemtint/include/memtint.h"
#include "check.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static int failures;
static size_t medium = 64 << 10;
#define EXPECT(cond, what) do { if (!(cond)) { fprintf(stderr, "FAILED: %s (%s:%d)\n", what, __FILE__, __LINE__); failures++; } } while (0)

/* Pages of [p, p+len) not on `node` by the kernel's own query. */
static long off_node(const void *p, size_t len, int node) {
    long bad = 0;
    for (uintptr_t a = (uintptr_t)p & ~4095UL; a < (uintptr_t)p + len; a += 4096) {
        void *page = (void *)a;
        int status = -1;
        if (syscall(SYS_move_pages, 0, 1UL, &page, NULL, &status, 0) || status != node) {
            if (!bad) fprintf(stderr, "  page %#lx: move_pages status %d, want node %d\n", (unsigned long)a, status, node);
            bad++;
        }
    }
    return bad;
}

/* The policy of the mapping holding p (MPOL_F_ADDR), or of the thread (p NULL). */
static int policy_of(const void *p, unsigned long *mask) {
    int mode = -1;
    *mask = 0;
    if (syscall(SYS_get_mempolicy, &mode, mask, 65UL, p, p ? MPOL_F_ADDR : 0)) return -1;
    return mode;
}

typedef struct {
    int node;
    unsigned cols[4];
    size_t n;
    long bad_colour, bad_node, bad_policy;
    int set_result;
} job;

/* Allocates small objects and medium blocks under (node, colours), checks every page. */
static void *work(void *arg) {
    job *j = arg;
    uint64_t set[1024] = {0};
    tc_set_from_list(set, j->cols, j->n);
    j->set_result = memtint_set_node_colors(j->node, j->cols, j->n);
    if (j->set_result) return NULL;
    char *small[500], *med[16];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 500; i++) { small[i] = memtint_malloc(96); memset(small[i], i, 96); }
        for (int i = 0; i < 16; i++) { med[i] = memtint_malloc(medium); memset(med[i], i, medium); }
        for (int i = 0; i < 500; i++) {
            j->bad_colour += tc_check_block(small[i], 96, set);
            if (j->node >= 0) j->bad_node += off_node(small[i], 96, j->node);
        }
        for (int i = 0; i < 16; i++) {
            j->bad_colour += tc_check_block(med[i], medium, set);
            unsigned long mask;
            int mode = policy_of(med[i], &mask);
            if (j->node >= 0) {
                j->bad_node += off_node(med[i], medium, j->node);
                if (mode != MPOL_BIND || mask != 1UL << j->node) j->bad_policy++;
            } else if (mode != MPOL_DEFAULT) {
                j->bad_policy++;
            }
        }
        for (int i = 0; i < 500; i++) memtint_free(small[i]);
        for (int i = 0; i < 16; i++) memtint_free(med[i]);
    }
    return NULL;
}

static void run_job(job *j, const char *what) {
    work(j);
    char m[200];
    snprintf(m, sizeof m, "%s: set %d, pages off colour %ld, off node %ld, wrong policy %ld", what, j->set_result,
             j->bad_colour, j->bad_node, j->bad_policy);
    EXPECT(j->set_result == 0 && !j->bad_colour && !j->bad_node && !j->bad_policy, m);
}

int main(int argc, char **argv) {
    tc_load_masks();
    if (argc > 1) medium = (size_t)atol(argv[1]);
    unsigned all[] = {0, 1, 2, 3, 4, 5, 6, 7}, cols[] = {2, 5};

    /* node 0 with colours: frames on node 0, colours as asked, bound on the library's mapping */
    job a = {.node = 0, .cols = {2, 5}, .n = 2};
    run_job(&a, "node 0 colours 2,5");
    uint64_t on0 = memtint_pages_delivered_on_node(0);
    EXPECT(on0 > 0, "pages delivered on node 0 are counted");
    EXPECT(memtint_pages_delivered_on_node(1) == 0 && memtint_pages_delivered_on_node(64) == 0 &&
           memtint_pages_delivered_on_node(-2) == 0, "no pages on nodes that do not exist");

    /* refused nodes: EINVAL, nothing changes for the thread */
    int bad_nodes[] = {1, 63, 64, -2, 1000000};
    for (unsigned i = 0; i < sizeof bad_nodes / sizeof *bad_nodes; i++) {
        errno = 0;
        int r = memtint_set_node_colors(bad_nodes[i], cols, 2);
        char m[80];
        snprintf(m, sizeof m, "node %d is refused with EINVAL", bad_nodes[i]);
        EXPECT(r == -1 && errno == EINVAL, m);
    }
    errno = 0;
    EXPECT(memtint_set_node_colors(0, NULL, 0) == -1 && errno == EINVAL, "node 0 without colours is EINVAL");
    unsigned outside[] = {1u << tc_n_masks};
    errno = 0;
    EXPECT(memtint_set_node_colors(0, outside, 1) == -1 && errno == EINVAL, "a colour outside the space is EINVAL");
    /* the thread still uses (0, {2,5}) from the last successful call of run_job's thread: main */
    char *after = memtint_malloc(medium);
    uint64_t set25[1024] = {0};
    tc_set_from_list(set25, cols, 2);
    EXPECT(after && tc_check_block(after, medium, set25) == 0 && off_node(after, medium, 0) == 0,
           "after a refused node the thread keeps its node and colours");
    memtint_free(after);

    /* node -1: today's behaviour (no binding, pages counted as "any") */
    uint64_t any0 = memtint_pages_delivered_on_node(-1);
    job b = {.node = -1, .cols = {0, 1, 2, 3}, .n = 4};
    run_job(&b, "node -1 colours 0-3");
    EXPECT(memtint_pages_delivered_on_node(-1) > any0, "pages of node -1 are counted as any");
    EXPECT(memtint_set_node_colors(-1, all, 8) == 0, "node -1 all colours");

    /* the same colours on another node slot are another pool: a block freed under (-1, {7})
     * is not reused by (0, {7}), whose pages all come bound from node 0 */
    unsigned seven[] = {7};
    EXPECT(memtint_set_node_colors(-1, seven, 1) == 0, "set (-1, {7})");
    char *blk = memtint_malloc(medium);
    memset(blk, 1, medium);
    memtint_free(blk);
    uint64_t before = memtint_pages_delivered_on_node(0);
    EXPECT(memtint_set_node_colors(0, seven, 1) == 0, "set (0, {7})");
    char *blk0 = memtint_malloc(medium);
    unsigned long mask;
    EXPECT(blk0 && memtint_pages_delivered_on_node(0) - before >= medium / 4096 && off_node(blk0, medium, 0) == 0 &&
           policy_of(blk0, &mask) == MPOL_BIND, "(0, {7}) takes bound frames, not the freed unbound block");
    memtint_free(blk0);

    /* per thread: two threads with different (node, colours) keep them, at the same time */
    job t[2] = {{.node = 0, .cols = {1, 3}, .n = 2}, {.node = -1, .cols = {4, 6}, .n = 2}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, work, &t[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        char m[200];
        snprintf(m, sizeof m, "thread %d (node %d): set %d, off colour %ld, off node %ld, wrong policy %ld", i,
                 t[i].node, t[i].set_result, t[i].bad_colour, t[i].bad_node, t[i].bad_policy);
        EXPECT(t[i].set_result == 0 && !t[i].bad_colour && !t[i].bad_node && !t[i].bad_policy, m);
    }

    /* the binding stays on the library's mappings: the thread's policy and the program's own
     * mappings are untouched */
    EXPECT(policy_of(NULL, &mask) == MPOL_DEFAULT, "the thread's memory policy is still the default");
    char *own = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    own[0] = 1;
    EXPECT(policy_of(own, &mask) == MPOL_DEFAULT, "the program's own mapping has the default policy");
    munmap(own, 1 << 20);

    printf("node checks: %d failed (%llu pages on node 0, %llu on any node)\n", failures,
           (unsigned long long)memtint_pages_delivered_on_node(0), (unsigned long long)memtint_pages_delivered_on_node(-1));
    return failures != 0;
}
