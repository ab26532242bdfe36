/* A known access pattern for the capture tests: write a buffer of N lines (caches warm, L2 full
 * of dirty lines), then one pass reading one word per line in a loop of exactly 5 instructions
 * per line (inline assembly, so the compiler cannot change it). Prints the buffer's address.
 * Usage: one_pass LINES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long lines = argc == 2 ? atol(argv[1]) : 0;
    char *buf, *end;
    unsigned long sum = 0;
    if (lines <= 0) {
        fprintf(stderr, "usage: one_pass LINES\n");
        return 2;
    }
    buf = aligned_alloc(64, lines * 64);
    memset(buf, 1, lines * 64);
    end = buf + lines * 64;
    printf("%lu %ld\n", (unsigned long)buf, lines);
    fflush(stdout);
    __asm__ volatile(
        "1: movq (%[p]), %%rax\n\t"
        "addq %%rax, %[s]\n\t"
        "addq $64, %[p]\n\t"
        "cmpq %[e], %[p]\n\t"
        "jb 1b\n\t"
        : [p] "+r"(buf), [s] "+r"(sum)
        : [e] "r"(end)
        : "rax", "cc", "memory");
    return sum == 0; /* never 0: keeps the loop's result alive */
}
