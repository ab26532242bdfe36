/* memtint-dram-probe: timed rounds of loads to physical addresses, for `memtint probe`.
 *
 * The program holds a locked buffer, reads its pages' frame numbers from /proc/self/pagemap and
 * then times measurements the Python front end (memtint.probe.linux) sends as physical
 * addresses: each round's loads are issued back to back between two rdtscp, then its lines are
 * flushed (clflush) so the next round goes to DRAM again. Pairs whose rounds are slow share a
 * bank but not a row (DRAMA; the BPM paper's Algorithm 1).
 *
 * Usage: memtint-dram-probe BUFFER_MB [--hugepages]
 * Startup output (stdout, text):
 *   tsc_hz <hz>
 *   page_bytes <4096 | 2097152>
 *   overhead <ticks>                 median time of an empty round
 *   frames <pages> <runs>            the buffer's 4 KiB frames in virtual order, as runs:
 *   <first frame, hex> <count>       `runs` lines of consecutive frame numbers
 *   ready
 * Then, per request on stdin:
 *   batch <measurements> <repetitions> <warmup>
 *   <measurement>                    one line each: rounds separated by ';', a round's
 *                                    physical addresses in hex separated by spaces
 * answered with one line per measurement, `t <ticks> ...` (repetitions x rounds round times,
 * TSC ticks, pass-major), then `ok`; or one line `error <why>` and the batch is not run.
 * `quit` or end of input ends the program.
 * x86-64 only (clflush, rdtscp). Needs root: frame numbers read as 0 otherwise. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#if !defined(__x86_64__)
int main(void) {
    fprintf(stderr, "memtint-dram-probe: x86-64 only (clflush and rdtscp)\n");
    return 2;
}
#else
#include <x86intrin.h>

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif

#define PAGE 4096u
#define HUGE_PAGE (2u << 20)
#define PFN_MASK ((1ull << 55) - 1)
#define PRESENT (1ull << 63)
/* Bounds of one request, so that a runaway batch is refused rather than exhausting memory. */
#define MAX_MEASUREMENTS 1000000L
#define MAX_REPETITIONS 100000L
#define MAX_WARMUP 1000L
#define MAX_ROUND 4096
#define MAX_SAMPLES 16000000L

/* Exit statuses: the Python side words its error from stderr, these tell the cause apart. */
enum { EXIT_USAGE = 2, EXIT_PRIVILEGE = 3, EXIT_MEMORY = 4 };

struct frame {
    uint64_t pfn;
    uint32_t vpage;
};

static uint8_t *buf;
static size_t pages;          /* 4 KiB pages of the buffer */
static uint64_t *pfn_of;      /* by virtual page */
static struct frame *by_pfn;  /* sorted by pfn, for translation */
static uint32_t *seen;        /* batch number that last touched each page */
static int pagemap_fd = -1;

#include "../include/tsc_clock.h"

/* One round: the loads are independent, so they are in flight together; rdtscp waits for them
 * all. mfence first so the previous round's clflushes are done before the clock starts. */
static inline uint64_t time_round(volatile uint8_t *const *p, size_t n) {
    unsigned aux;
    _mm_mfence();
    uint64_t t0 = __rdtscp(&aux);
    _mm_lfence();
    for (size_t i = 0; i < n; i++)
        (void)*p[i];
    uint64_t t1 = __rdtscp(&aux);
    _mm_lfence();
    for (size_t i = 0; i < n; i++)
        _mm_clflush((const void *)p[i]);
    return t1 - t0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_frame(const void *a, const void *b) {
    uint64_t x = ((const struct frame *)a)->pfn, y = ((const struct frame *)b)->pfn;
    return (x > y) - (x < y);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "memtint-dram-probe: out of memory (%zu bytes)\n", n);
        exit(EXIT_MEMORY);
    }
    return p;
}

static void allocate(size_t bytes, int huge) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
    if (huge)
        flags |= MAP_HUGETLB | MAP_HUGE_2MB;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) {
        if (huge)
            fprintf(stderr, "memtint-dram-probe: cannot map %zu MiB of 2 MiB hugepages (%s): it needs %zu free ones; "
                    "as root: echo N > /proc/sys/vm/nr_hugepages, N the hugepages in use plus %zu\n",
                    bytes >> 20, strerror(errno), bytes / HUGE_PAGE, bytes / HUGE_PAGE);
        else
            fprintf(stderr, "memtint-dram-probe: cannot map a %zu MiB buffer (%s): choose a smaller buffer\n",
                    bytes >> 20, strerror(errno));
        exit(EXIT_MEMORY);
    }
    buf = p;
    /* A write to every page: private pages of their own, never the shared zero page. */
    for (size_t i = 0; i < bytes / PAGE; i++)
        buf[i * PAGE] = (uint8_t)i;
    if (mlock(buf, bytes) != 0) {
        struct rlimit r;
        getrlimit(RLIMIT_MEMLOCK, &r);
        char limit[32];
        if (r.rlim_cur == RLIM_INFINITY)
            snprintf(limit, sizeof limit, "unlimited");
        else
            snprintf(limit, sizeof limit, "%llu KiB", (unsigned long long)(r.rlim_cur >> 10));
        fprintf(stderr, "memtint-dram-probe: cannot lock the %zu MiB buffer in memory (%s; RLIMIT_MEMLOCK is %s): "
                "run as root, or raise the limit (ulimit -l unlimited) or choose a smaller buffer\n",
                bytes >> 20, strerror(errno), limit);
        exit(EXIT_MEMORY);
    }
}

static uint64_t pagemap_entry(size_t vpage) {
    uint64_t e = 0;
    off_t at = (off_t)(((uintptr_t)buf / PAGE + vpage) * sizeof e);
    if (pread(pagemap_fd, &e, sizeof e, at) != (ssize_t)sizeof e)
        return 0;
    return e;
}

/* Every page's frame number, in chunks of 8192 entries (32 MiB of buffer per read). */
static void read_frames(void) {
    pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
    if (pagemap_fd < 0) {
        fprintf(stderr, "memtint-dram-probe: cannot open /proc/self/pagemap (%s)\n", strerror(errno));
        exit(1);
    }
    pfn_of = xmalloc(pages * sizeof *pfn_of);
    enum { CHUNK = 8192 };
    static uint64_t entries[CHUNK];
    size_t zero = 0;
    for (size_t first = 0; first < pages; first += CHUNK) {
        size_t n = pages - first < CHUNK ? pages - first : CHUNK;
        off_t at = (off_t)(((uintptr_t)buf / PAGE + first) * sizeof(uint64_t));
        if (pread(pagemap_fd, entries, n * sizeof(uint64_t), at) != (ssize_t)(n * sizeof(uint64_t))) {
            fprintf(stderr, "memtint-dram-probe: reading /proc/self/pagemap failed (%s)\n", strerror(errno));
            exit(1);
        }
        for (size_t i = 0; i < n; i++) {
            if (!(entries[i] & PRESENT)) {
                fprintf(stderr, "memtint-dram-probe: page %zu of the locked buffer is not present in memory\n", first + i);
                exit(1);
            }
            pfn_of[first + i] = entries[i] & PFN_MASK;
            zero += pfn_of[first + i] == 0;
        }
    }
    if (zero == pages) {
        fprintf(stderr, "memtint-dram-probe: /proc/self/pagemap shows frame number 0 for every page: frame numbers need "
                "root (CAP_SYS_ADMIN); run memtint probe as root\n");
        exit(EXIT_PRIVILEGE);
    }
    by_pfn = xmalloc(pages * sizeof *by_pfn);
    for (size_t i = 0; i < pages; i++)
        by_pfn[i] = (struct frame){pfn_of[i], (uint32_t)i};
    qsort(by_pfn, pages, sizeof *by_pfn, cmp_frame);
    seen = calloc(pages, sizeof *seen);
    if (!seen) {
        fprintf(stderr, "memtint-dram-probe: out of memory\n");
        exit(EXIT_MEMORY);
    }
}

/* The buffer's virtual address of a physical one, or NULL when its frame is not the buffer's. */
static volatile uint8_t *translate(uint64_t phys, size_t *vpage) {
    uint64_t pfn = phys / PAGE;
    size_t lo = 0, hi = pages;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_pfn[mid].pfn < pfn)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == pages || by_pfn[lo].pfn != pfn)
        return NULL;
    *vpage = by_pfn[lo].vpage;
    return buf + (size_t)by_pfn[lo].vpage * PAGE + phys % PAGE;
}

static void print_frames(void) {
    size_t runs = 0;
    for (size_t i = 0; i < pages; i++)
        runs += i == 0 || pfn_of[i] != pfn_of[i - 1] + 1;
    printf("frames %zu %zu\n", pages, runs);
    size_t start = 0;
    for (size_t i = 1; i <= pages; i++)
        if (i == pages || pfn_of[i] != pfn_of[i - 1] + 1) {
            printf("%" PRIx64 " %zu\n", pfn_of[start], i - start);
            start = i;
        }
}

static uint64_t empty_round_ticks(void) {
    enum { N = 1001 };
    static uint64_t t[N];
    for (int i = 0; i < N; i++)
        t[i] = time_round(NULL, 0);
    qsort(t, N, sizeof t[0], cmp_u64);
    return t[N / 2];
}

/* A batch as parsed: measurement m's rounds are round_at[meas_at[m] .. meas_at[m + 1]), round
 * r's loads are ptr[round_at[r] .. round_at[r + 1]). */
struct batch {
    long measurements, repetitions, warmup;
    volatile uint8_t **ptr;
    size_t *round_at, *meas_at;
    size_t nptr, nround, cap_ptr, cap_round;
    uint32_t number;
    char error[256];
};

static void grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q) {
        fprintf(stderr, "memtint-dram-probe: out of memory\n");
        exit(EXIT_MEMORY);
    }
    *p = q;
    *cap = n;
}

static void fail(struct batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct batch *b, const char *fmt, ...) {
    if (b->error[0])
        return; /* the first problem is the one reported */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
}

/* One measurement line into the batch; a problem is recorded in b->error (first one wins). */
static void parse_measurement(struct batch *b, long m, char *line) {
    char *s = line;
    for (;;) {
        size_t round_start = b->nptr;
        for (;;) {
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s == ';' || *s == '\n' || *s == '\0')
                break;
            char *end;
            errno = 0;
            uint64_t phys = strtoull(s, &end, 16);
            if (end == s || errno) {
                fail(b, "measurement %ld: cannot read an address at '%.20s'", m, s);
                return;
            }
            s = end;
            size_t vpage;
            volatile uint8_t *v = translate(phys, &vpage);
            if (!v) {
                fail(b, "measurement %ld: address 0x%" PRIx64 " is outside the buffer (frame 0x%" PRIx64
                     " is not one of its %zu frames)", m, phys, phys / PAGE, pages);
                return;
            }
            seen[vpage] = b->number;
            grow((void **)&b->ptr, &b->cap_ptr, b->nptr + 1, sizeof *b->ptr);
            b->ptr[b->nptr++] = v;
        }
        size_t n = b->nptr - round_start;
        if (n == 0) {
            fail(b, "measurement %ld: an empty round", m);
            return;
        }
        if (n > MAX_ROUND) {
            fail(b, "measurement %ld: a round of %zu loads (at most %d)", m, n, MAX_ROUND);
            return;
        }
        grow((void **)&b->round_at, &b->cap_round, b->nround + 2, sizeof *b->round_at);
        b->round_at[b->nround++] = round_start;
        b->round_at[b->nround] = b->nptr;
        if (*s != ';')
            break;
        s++;
    }
}

/* Pages the kernel moved since startup (compaction may migrate even locked pages). */
static size_t moved_pages(uint32_t number) {
    size_t moved = 0;
    for (size_t i = 0; i < pages; i++)
        if (seen[i] == number && (pagemap_entry(i) & PFN_MASK) != pfn_of[i])
            moved++;
    return moved;
}

static int run_batch(struct batch *b, const char *header) {
    char extra;
    if (sscanf(header, "batch %ld %ld %ld %c", &b->measurements, &b->repetitions, &b->warmup, &extra) != 3) {
        printf("error cannot read the request '%.60s'\n", header);
        return -1;
    }
    if (b->measurements < 1 || b->measurements > MAX_MEASUREMENTS || b->repetitions < 1 ||
        b->repetitions > MAX_REPETITIONS || b->warmup < 0 || b->warmup > MAX_WARMUP) {
        printf("error measurements must be 1-%ld, repetitions 1-%ld, warmup 0-%ld: got '%.60s'\n",
               MAX_MEASUREMENTS, MAX_REPETITIONS, MAX_WARMUP, header);
        return -1;
    }
    b->number++;
    b->error[0] = '\0';
    b->nptr = b->nround = 0;
    b->meas_at = xmalloc((size_t)(b->measurements + 1) * sizeof *b->meas_at);
    char *line = NULL;
    size_t cap = 0;
    for (long m = 0; m < b->measurements; m++) {
        if (getline(&line, &cap, stdin) < 0) {
            free(line);
            printf("error the batch ended after %ld of its %ld measurements\n", m, b->measurements);
            return -1;
        }
        b->meas_at[m] = b->nround;
        if (!b->error[0])
            parse_measurement(b, m, line);
    }
    b->meas_at[b->measurements] = b->nround;
    free(line);
    if (!b->error[0] && (double)b->nround * (double)b->repetitions > (double)MAX_SAMPLES)
        fail(b, "%zu rounds x %ld repetitions is more than %ld samples in one batch: split it", b->nround,
             b->repetitions, MAX_SAMPLES);
    if (b->error[0]) {
        printf("error %s\n", b->error);
        free(b->meas_at);
        return 0;
    }

    uint64_t *ticks = xmalloc(b->nround * (size_t)b->repetitions * sizeof *ticks);
    size_t k = 0;
    for (long m = 0; m < b->measurements; m++) {
        size_t r0 = b->meas_at[m], r1 = b->meas_at[m + 1];
        for (long pass = 0; pass < b->warmup; pass++)
            for (size_t r = r0; r < r1; r++)
                (void)time_round(b->ptr + b->round_at[r], b->round_at[r + 1] - b->round_at[r]);
        for (long pass = 0; pass < b->repetitions; pass++)
            for (size_t r = r0; r < r1; r++)
                ticks[k++] = time_round(b->ptr + b->round_at[r], b->round_at[r + 1] - b->round_at[r]);
    }
    size_t moved = moved_pages(b->number);
    if (moved) {
        printf("error the kernel moved %zu of the measured pages to other frames during the batch (compaction "
               "migrates even locked pages): as root, sysctl -w vm.compact_unevictable_allowed=0, then restart the probe\n",
               moved);
    } else {
        k = 0;
        for (long m = 0; m < b->measurements; m++) {
            size_t n = (b->meas_at[m + 1] - b->meas_at[m]) * (size_t)b->repetitions;
            fputc('t', stdout);
            for (size_t i = 0; i < n; i++)
                printf(" %" PRIu64, ticks[k++]);
            fputc('\n', stdout);
        }
        printf("ok\n");
    }
    free(ticks);
    free(b->meas_at);
    return 0;
}

int main(int argc, char **argv) {
    int huge = argc == 3 && strcmp(argv[2], "--hugepages") == 0;
    if (argc != 2 && !huge) {
        fprintf(stderr, "usage: memtint-dram-probe BUFFER_MB [--hugepages]\n");
        return EXIT_USAGE;
    }
    char *end;
    long long mb = strtoll(argv[1], &end, 10);
    if (*end || mb < 1 || mb > (1LL << 20)) {
        fprintf(stderr, "memtint-dram-probe: BUFFER_MB must be an integer from 1 to 1048576, got '%s'\n", argv[1]);
        return EXIT_USAGE;
    }
    /* The probe must not outlive its front end (which would leave its buffer locked). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    size_t bytes = (size_t)mb << 20;
    if (huge)
        bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    pages = bytes / PAGE;
    allocate(bytes, huge);
    read_frames();

    static char out[1 << 20];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    printf("tsc_hz %.0f\n", tsc_hz());
    printf("page_bytes %u\n", huge ? HUGE_PAGE : PAGE);
    printf("overhead %" PRIu64 "\n", empty_round_ticks());
    print_frames();
    printf("ready\n");
    fflush(stdout);

    struct batch b = {0};
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) >= 0) {
        if (strncmp(line, "quit", 4) == 0)
            break;
        int status = strncmp(line, "batch", 5) == 0 ? run_batch(&b, line) : (printf("error unknown request '%.40s'\n", line), -1);
        fflush(stdout);
        if (status < 0)
            return EXIT_USAGE; /* out of step with the front end: no way to find the next request */
    }
    return 0;
}
#endif
