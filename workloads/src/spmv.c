/* Sparse matrix-vector products y = A x, A in CSR (soplex-like; HPCG's SpMV): each row has
 * nonzeros in a band around the diagonal (local couplings, gathers that hit) and RANDOM of
 * them in uniformly random columns (gathers that miss), with streaming reads of values and
 * indices. Usage: spmv ROWS NONZEROS_PER_ROW RANDOM_PER_ROW SEED PRODUCTS. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state;
static unsigned long long next_random(void) /* splitmix64: the same matrix on every machine */
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    long n, per_row, random_per_row, products, nnz, i, k, p;
    unsigned *col, *start;
    double *val, *x, *y, *t, norm = 0;
    if (argc != 6 || (n = atol(argv[1])) < 1 || (per_row = atol(argv[2])) < 1
        || (random_per_row = atol(argv[3])) < 0 || random_per_row > per_row || (products = atol(argv[5])) < 0) {
        fprintf(stderr, "usage: spmv ROWS NONZEROS_PER_ROW RANDOM_PER_ROW(<= NONZEROS_PER_ROW) SEED PRODUCTS\n");
        return 2;
    }
    state = strtoull(argv[4], NULL, 10);
    nnz = n * per_row;
    col = malloc(nnz * sizeof *col);
    val = malloc(nnz * sizeof *val);
    start = malloc((n + 1) * sizeof *start);
    x = malloc(n * sizeof *x);
    y = malloc(n * sizeof *y);
    if (!col || !val || !start || !x || !y) {
        fprintf(stderr, "spmv: out of memory\n");
        return 1;
    }
    for (i = 0; i <= n; i++)
        start[i] = i * per_row;
    for (k = 0; k < nnz; k++) {
        unsigned long long r = next_random();
        long row = k / per_row;
        if (k % per_row < random_per_row)
            col[k] = r % n;
        else /* within 2048 columns of the diagonal */
            col[k] = (unsigned long)(row + n + (long)(r % 4097) - 2048) % n;
        val[k] = (double)(r >> 44) / (double)(1 << 20) - 0.5;
    }
    for (i = 0; i < n; i++)
        x[i] = 1.0 / (1 + i % 7);
    for (p = 0; p < products; p++) {
        for (i = 0; i < n; i++) {
            double sum = 0;
            for (k = start[i]; k < start[i + 1]; k++)
                sum += val[k] * x[col[k]];
            y[i] = sum;
        }
        t = x; /* iterate on the result, as a power method does */
        x = y;
        y = t;
    }
    for (i = 0; i < n; i += 997)
        norm += x[i] * x[i];
    printf("spmv: %ld products, sampled norm %.6g\n", products, norm);
    return 0;
}
