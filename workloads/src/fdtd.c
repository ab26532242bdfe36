/* 3-D finite-difference time-domain steps on a Yee grid (GemsFDTD-like): six field arrays of
 * N^3 doubles; each half step reads six arrays and rewrites three, with a few flops per
 * element, so it is bandwidth-bound with a write-back for every line it writes.
 * Usage: fdtd N STEPS. */
#include <stdio.h>
#include <stdlib.h>

static double *field(long cells, long salt)
{
    double *f = aligned_alloc(64, ((cells * sizeof *f + 63) / 64) * 64);
    long i;
    if (!f) {
        fprintf(stderr, "fdtd: out of memory\n");
        exit(1);
    }
    for (i = 0; i < cells; i++)
        f[i] = (double)(((i + salt) * 2654435761UL) % 1000) / 1000.0 - 0.5;
    return f;
}

int main(int argc, char **argv)
{
    long n, steps, s, i, j, k, plane, cells;
    double *ex, *ey, *ez, *hx, *hy, *hz, ch = 0.5, ce = 0.5, checksum = 0;
    if (argc != 3 || (n = atol(argv[1])) < 3 || (steps = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: fdtd N(>2) STEPS\n");
        return 2;
    }
    plane = n * n;
    cells = plane * n;
    ex = field(cells, 1), ey = field(cells, 2), ez = field(cells, 3);
    hx = field(cells, 4), hy = field(cells, 5), hz = field(cells, 6);
    for (s = 0; s < steps; s++) {
        for (k = 0; k < n - 1; k++) /* H from the curl of E */
            for (j = 0; j < n - 1; j++)
                for (i = 0; i < n - 1; i++) {
                    long c = k * plane + j * n + i;
                    hx[c] += ch * ((ey[c + plane] - ey[c]) - (ez[c + n] - ez[c]));
                    hy[c] += ch * ((ez[c + 1] - ez[c]) - (ex[c + plane] - ex[c]));
                    hz[c] += ch * ((ex[c + n] - ex[c]) - (ey[c + 1] - ey[c]));
                }
        for (k = 1; k < n; k++) /* E from the curl of H */
            for (j = 1; j < n; j++)
                for (i = 1; i < n; i++) {
                    long c = k * plane + j * n + i;
                    ex[c] += ce * ((hz[c] - hz[c - n]) - (hy[c] - hy[c - plane]));
                    ey[c] += ce * ((hx[c] - hx[c - plane]) - (hz[c] - hz[c - 1]));
                    ez[c] += ce * ((hy[c] - hy[c - 1]) - (hx[c] - hx[c - n]));
                }
    }
    for (i = 0; i < cells; i += 4099)
        checksum += ex[i] + hz[i];
    printf("fdtd: checksum %.6f after %ld steps\n", checksum, steps);
    return 0;
}
