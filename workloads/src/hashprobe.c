/* Random probes into an open-addressing hash table much larger than the L2 (a database
 * hash join's probe side): nearly every probe misses, with little write traffic — the
 * latency-bound, low-locality case. Usage: hashprobe TABLE_LOG2 PROBES SEED. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state;
static unsigned long long next_random(void)
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    int log2;
    long probes, i, hits = 0;
    unsigned long long size, mask, *keys;
    if (argc != 4 || (log2 = atoi(argv[1])) < 4 || log2 > 34 || (probes = atol(argv[2])) <= 0) {
        fprintf(stderr, "usage: hashprobe TABLE_LOG2(4-34) PROBES SEED\n");
        return 2;
    }
    state = strtoull(argv[3], NULL, 10);
    size = 1ULL << log2;
    mask = size - 1;
    keys = calloc(size, sizeof *keys);
    if (!keys) {
        fprintf(stderr, "hashprobe: out of memory\n");
        return 1;
    }
    for (i = 0; i < (long)(size / 2); i++) { /* build: fill half the slots */
        unsigned long long k = next_random() | 1, h = k * 0x9e3779b97f4a7c15ULL >> (64 - log2);
        while (keys[h])
            h = (h + 1) & mask;
        keys[h] = k;
    }
    for (i = 0; i < probes; i++) { /* probe */
        unsigned long long k = next_random() | 1, h = k * 0x9e3779b97f4a7c15ULL >> (64 - log2);
        while (keys[h] && keys[h] != k)
            h = (h + 1) & mask;
        hits += keys[h] == k;
    }
    printf("hashprobe: %ld hits in %ld probes\n", hits, probes);
    return 0;
}
