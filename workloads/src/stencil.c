/* Jacobi sweeps of a 3-D 7-point stencil over two N^3 grids of doubles (GemsFDTD/leslie3d/
 * milc-like): streaming reads of three planes, a streaming write of the whole output grid each
 * sweep (every line written back). Usage: stencil N SWEEPS. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n, sweeps, s, i, j, k, plane, cells;
    double *a, *b, *t, checksum = 0;
    if (argc != 3 || (n = atol(argv[1])) < 3 || (sweeps = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: stencil N(>2) SWEEPS\n");
        return 2;
    }
    plane = n * n;
    cells = plane * n;
    a = aligned_alloc(64, ((cells * sizeof *a + 63) / 64) * 64);
    b = aligned_alloc(64, ((cells * sizeof *b + 63) / 64) * 64);
    if (!a || !b) {
        fprintf(stderr, "stencil: out of memory\n");
        return 1;
    }
    for (i = 0; i < cells; i++) { /* a deterministic, non-constant field */
        a[i] = (double)((i * 2654435761UL) % 1000) / 1000.0;
        b[i] = 0.0;
    }
    for (s = 0; s < sweeps; s++) {
        for (k = 1; k < n - 1; k++)
            for (j = 1; j < n - 1; j++) {
                const double *c = a + k * plane + j * n;
                double *o = b + k * plane + j * n;
                for (i = 1; i < n - 1; i++)
                    o[i] = 0.4 * c[i] + 0.1 * (c[i - 1] + c[i + 1] + c[i - n] + c[i + n] + c[i - plane] + c[i + plane]);
            }
        t = a;
        a = b;
        b = t;
    }
    for (i = 0; i < cells; i += 4099)
        checksum += a[i];
    printf("stencil: checksum %.6f after %ld sweeps\n", checksum, sweeps);
    return 0;
}
