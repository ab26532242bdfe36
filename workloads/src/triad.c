/* STREAM-style triad, a[i] = b[i] + s * c[i], over arrays far larger than any cache, split
 * between T threads (each its own slice): the streaming, bandwidth-bound case (libquantum-,
 * lbm-like in the papers' mixes). Usage: triad ELEMENTS THREADS PASSES. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static double *a, *b, *c;
static long n, passes;
static int threads;

static void *work(void *arg)
{
    long t = (long)arg, lo = n * t / threads, hi = n * (t + 1) / threads, p, i;
    for (i = lo; i < hi; i++) {
        b[i] = (double)i;
        c[i] = 0.5 * (double)i;
    }
    for (p = 0; p < passes; p++)
        for (i = lo; i < hi; i++)
            a[i] = b[i] + 3.0 * c[i];
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t tid[64];
    long t;
    double sum = 0;
    if (argc != 4 || (n = atol(argv[1])) <= 0 || (threads = atoi(argv[2])) <= 0 || threads > 64
        || (passes = atol(argv[3])) <= 0) {
        fprintf(stderr, "usage: triad ELEMENTS THREADS(1-64) PASSES\n");
        return 2;
    }
    a = malloc(n * sizeof *a);
    b = malloc(n * sizeof *b);
    c = malloc(n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "triad: out of memory\n");
        return 1;
    }
    for (t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, work, (void *)t);
    for (t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    for (t = 0; t < n; t += 4096)
        sum += a[t];
    printf("triad: checksum %.1f\n", sum);
    return 0;
}
