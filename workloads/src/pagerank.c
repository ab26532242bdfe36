/* PageRank, pull direction (GAP-style): each vertex sums its in-neighbours' contributions.
 * The graph is web-like, in CSR by the vertex an edge points to: LOCAL_PERCENT of the edges
 * come from within 1024 vertex ids (links inside a host, ids in URL order), the others from
 * a power-law source (N * r^3, scattered by a multiplicative hash). Streaming reads of the edge
 * list, gathers that hit for local sources and hubs and miss for the tail.
 * Usage: pagerank VERTICES(power of two) AVERAGE_DEGREE LOCAL_PERCENT SEED ITERATIONS. */
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
    long n, degree, local, iterations, m, i, k, it;
    unsigned *in, *start, *out_degree;
    double *rank, *contrib, damping = 0.85, total = 0;
    if (argc != 6 || (n = atol(argv[1])) < 2 || (n & (n - 1)) || (degree = atol(argv[2])) < 1
        || (local = atol(argv[3])) < 0 || local > 100 || (iterations = atol(argv[5])) < 0) {
        fprintf(stderr, "usage: pagerank VERTICES(power of two) AVERAGE_DEGREE LOCAL_PERCENT(0-100) SEED ITERATIONS\n");
        return 2;
    }
    state = strtoull(argv[4], NULL, 10);
    m = n * degree;
    in = malloc(m * sizeof *in);
    start = malloc((n + 1) * sizeof *start);
    out_degree = calloc(n, sizeof *out_degree);
    rank = malloc(n * sizeof *rank);
    contrib = malloc(n * sizeof *contrib);
    if (!in || !start || !out_degree || !rank || !contrib) {
        fprintf(stderr, "pagerank: out of memory\n");
        return 1;
    }
    for (i = 0; i <= n; i++)
        start[i] = i * degree;
    for (k = 0; k < m; k++) {
        unsigned long long z = next_random();
        if ((long)(z % 100) < local) {
            in[k] = (unsigned long long)(k / degree + n + (long)((z >> 8) % 2049) - 1024) & (n - 1);
        } else {
            double r = (double)(z >> 11) / 9007199254740992.0;
            unsigned long long u = (unsigned long long)(r * r * r * n);
            in[k] = (u * 0x9e3779b97f4a7c15ULL) & (n - 1); /* odd multiplier: a permutation */
        }
        out_degree[in[k]]++;
    }
    for (i = 0; i < n; i++)
        rank[i] = 1.0 / n;
    for (it = 0; it < iterations; it++) {
        for (i = 0; i < n; i++)
            contrib[i] = out_degree[i] ? rank[i] / out_degree[i] : 0.0;
        for (i = 0; i < n; i++) {
            double sum = 0;
            for (k = start[i]; k < start[i + 1]; k++)
                sum += contrib[in[k]];
            rank[i] = (1.0 - damping) / n + damping * sum;
        }
    }
    for (i = 0; i < n; i++)
        total += rank[i];
    printf("pagerank: %ld iterations, rank sum %.6f\n", iterations, total);
    return 0;
}
