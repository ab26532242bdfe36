/* A key-value store under a random get/put mix (YCSB workload A: 50 % reads, 50 % updates,
 * uniform keys): a chained hash index of 16-byte string keys pointing at 64-byte values in a
 * separate heap. A get hashes the key, walks the bucket's chain, copies the value out; a put
 * overwrites it (dirty lines, write-backs). Usage: kvstore LOG2_KEYS OPERATIONS SEED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long state;
static unsigned long long next_random(void) /* splitmix64: the same workload on every machine */
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct entry {
    char key[16];
    struct entry *chain;
    char *value;
};

static void make_key(char *key, unsigned long long id)
{
    int i;
    memcpy(key, "user", 4);
    for (i = 4; i < 16; i++, id /= 10)
        key[i] = '0' + id % 10;
}

static unsigned long long hash(const char *key) /* FNV-1a */
{
    unsigned long long h = 1469598103934665603ULL;
    int i;
    for (i = 0; i < 16; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return h;
}

int main(int argc, char **argv)
{
    int log2;
    long keys, operations, i, found = 0;
    unsigned long long mask;
    struct entry *entries, **buckets;
    char *heap, key[16], out[64] = "";
    if (argc != 4 || (log2 = atoi(argv[1])) < 4 || log2 > 30 || (operations = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: kvstore LOG2_KEYS(4-30) OPERATIONS SEED\n");
        return 2;
    }
    state = strtoull(argv[3], NULL, 10);
    keys = 1L << log2;
    mask = keys - 1;
    entries = malloc(keys * sizeof *entries);
    buckets = calloc(keys, sizeof *buckets);
    heap = malloc(keys * 64);
    if (!entries || !buckets || !heap) {
        fprintf(stderr, "kvstore: out of memory\n");
        return 1;
    }
    for (i = 0; i < keys; i++) { /* load phase, as YCSB's */
        struct entry *e = &entries[i];
        unsigned long long b;
        make_key(e->key, i);
        e->value = heap + 64 * ((i * 0x9e3779b97f4a7c15ULL) & mask); /* values scattered in the heap */
        memset(e->value, 'a' + i % 26, 64);
        b = hash(e->key) & mask;
        e->chain = buckets[b];
        buckets[b] = e;
    }
    for (i = 0; i < operations; i++) {
        unsigned long long r = next_random(), id = (r >> 1) & mask;
        struct entry *e;
        make_key(key, id);
        for (e = buckets[hash(key) & mask]; e && memcmp(e->key, key, 16); e = e->chain)
            ;
        if (!e)
            continue;
        found++;
        if (r & 1)
            memcpy(out, e->value, 64);
        else
            memset(e->value, 'a' + (int)(r >> 40) % 26, 64);
    }
    printf("kvstore: %ld of %ld operations found their key (%c)\n", found, operations, out[0]);
    return 0;
}
