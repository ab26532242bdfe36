/* Multi-threaded capture test: THREADS workers each write then read their own slice of LINES
 * lines (disjoint); prints each slice's address. Usage: slices THREADS LINES_PER_THREAD. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long lines;

static void *work(void *arg)
{
    volatile char *p = arg;
    long i;
    unsigned long sum = 0;
    for (i = 0; i < lines; i++)
        p[i * 64] = (char)i;
    for (i = 0; i < lines; i++)
        sum += p[i * 64];
    return (void *)sum;
}

int main(int argc, char **argv)
{
    int threads = argc == 3 ? atoi(argv[1]) : 0, t;
    pthread_t tid[16];
    char *slice[16];
    lines = argc == 3 ? atol(argv[2]) : 0;
    if (threads < 1 || threads > 16 || lines < 1) {
        fprintf(stderr, "usage: slices THREADS(1-16) LINES_PER_THREAD\n");
        return 2;
    }
    for (t = 0; t < threads; t++) {
        slice[t] = aligned_alloc(64, lines * 64);
        printf("%lu\n", (unsigned long)slice[t]);
    }
    fflush(stdout);
    for (t = 0; t < threads; t++) /* all at once: Valgrind interleaves them */
        pthread_create(&tid[t], NULL, work, slice[t]);
    for (t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    return 0;
}
