/* Pointer chasing over a randomly linked list of 64-byte nodes (network-simplex pricing,
 * mcf-like): each step's address comes from the previous load, so misses do not overlap. A
 * node holds a potential and three arcs; pricing them is the work per miss, and a node whose
 * best arc has a negative reduced cost is updated (some write-backs).
 * Usage: chase NODES STEPS SEED. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state;
static unsigned long long next_random(void) /* splitmix64: the same list on every machine */
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct node { /* one cache line */
    struct node *next;
    long potential, ident;
    long cost[3], flow[2];
};

int main(int argc, char **argv)
{
    long n, steps, i, negative = 0;
    struct node *nodes, *p;
    unsigned *order;
    if (argc != 4 || (n = atol(argv[1])) < 2 || (steps = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: chase NODES(>1) STEPS SEED\n");
        return 2;
    }
    state = strtoull(argv[3], NULL, 10);
    nodes = aligned_alloc(64, n * sizeof *nodes);
    order = malloc(n * sizeof *order);
    if (!nodes || !order) {
        fprintf(stderr, "chase: out of memory\n");
        return 1;
    }
    for (i = 0; i < n; i++)
        order[i] = i;
    for (i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every node */
        long j = next_random() % i;
        unsigned t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (i = 0; i < n; i++) {
        struct node *q = &nodes[order[i]];
        q->next = &nodes[order[(i + 1) % n]];
        q->potential = (long)(next_random() % 1000);
        q->ident = order[i];
        q->cost[0] = (long)(next_random() % 1000);
        q->cost[1] = (long)(next_random() % 1000);
        q->cost[2] = (long)(next_random() % 1000);
        q->flow[0] = q->flow[1] = 0;
    }
    free(order);
    p = &nodes[0];
    for (i = 0; i < steps; i++) {
        long best = 0, a, price = p->next->ident & 1023; /* the head's price: from the next node */
        for (a = 0; a < 3; a++) { /* price the node's arcs: Dantzig's rule, the most negative */
            long reduced = p->cost[a] - p->potential + price * (a + 1) / 2;
            if (reduced < p->cost[best] - p->potential + price * (best + 1) / 2)
                best = a;
        }
        if (p->cost[best] - p->potential + price * (best + 1) / 2 < 0) { /* pivot: push flow, reprice */
            p->flow[best & 1]++;
            p->potential -= (p->cost[best] + price) / 8;
            negative++;
        } else if (p->potential < 500) {
            p->potential += 1;
        }
        p = p->next;
    }
    printf("chase: %ld negative arcs in %ld steps (ended at %ld)\n", negative, steps, p->ident);
    return 0;
}
