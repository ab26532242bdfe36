/* Breadth-first search on a random graph (uniform random edges, CSR form) built from a fixed
 * seed: irregular, pointer-chasing accesses with poor locality (graph analytics; mcf-like).
 * LOCAL_PERCENT (default 0) of the edges end within 1024 vertex ids of their source (a web
 * graph's links inside a host), the others anywhere.
 * Usage: bfs VERTICES AVERAGE_DEGREE SEED ROOTS [LOCAL_PERCENT]. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state;
static unsigned long long next_random(void) /* splitmix64: the same graph on every machine */
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    long n, degree, roots, local = 0, m, i, r;
    unsigned *src, *dst, *offset, *adj, *queue;
    int *level;
    long visited_total = 0;
    if (argc == 6)
        local = atol(argv[5]);
    if (argc < 5 || argc > 6 || (n = atol(argv[1])) <= 1 || (degree = atol(argv[2])) <= 0
        || (roots = atol(argv[4])) <= 0 || local < 0 || local > 100) {
        fprintf(stderr, "usage: bfs VERTICES(>1) AVERAGE_DEGREE SEED ROOTS [LOCAL_PERCENT(0-100)]\n");
        return 2;
    }
    state = strtoull(argv[3], NULL, 10);
    m = n * degree;
    src = malloc(m * sizeof *src);
    dst = malloc(m * sizeof *dst);
    offset = calloc(n + 1, sizeof *offset);
    adj = malloc(m * sizeof *adj);
    queue = malloc(n * sizeof *queue);
    level = malloc(n * sizeof *level);
    if (!src || !dst || !offset || !adj || !queue || !level) {
        fprintf(stderr, "bfs: out of memory\n");
        return 1;
    }
    for (i = 0; i < m; i++) {
        src[i] = next_random() % n;
        if ((long)(next_random() % 100) < local)
            dst[i] = (src[i] + n + next_random() % 2049 - 1024) % n;
        else
            dst[i] = next_random() % n;
        offset[src[i] + 1]++;
    }
    for (i = 0; i < n; i++)
        offset[i + 1] += offset[i];
    for (i = 0; i < m; i++)
        adj[offset[src[i]]++] = dst[i];
    for (i = n; i > 0; i--)
        offset[i] = offset[i - 1];
    offset[0] = 0;
    for (r = 0; r < roots; r++) {
        long head = 0, tail = 0;
        for (i = 0; i < n; i++)
            level[i] = -1;
        queue[tail++] = next_random() % n;
        level[queue[0]] = 0;
        while (head < tail) {
            unsigned v = queue[head++];
            unsigned e;
            for (e = offset[v]; e < offset[v + 1]; e++) {
                unsigned w = adj[e];
                if (level[w] < 0) {
                    level[w] = level[v] + 1;
                    queue[tail++] = w;
                }
            }
        }
        visited_total += tail;
    }
    printf("bfs: %ld vertices reached over %ld searches\n", visited_total, roots);
    return 0;
}
