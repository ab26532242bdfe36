/* Drives the cache filter (mt_cache.c) and the .mtt encoder (mt_mtt.c) outside Valgrind, for
 * the tests: reads "L1_BYTES L1_WAYS L2_BYTES L2_WAYS LINE_BYTES" then one access per line,
 * "r ADDR" or "w ADDR" (hex or decimal, one line each), and prints one line per L2 miss,
 * "INDEX LINE_ADDR [WRITEBACK_ADDR]" (INDEX: the access's 0-based position). With -o FILE it
 * also writes the misses as an .mtt trace, each access counted as one instruction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mt_cache.h"
#include "mt_mtt.h"

int main(int argc, char **argv)
{
    unsigned long long l1, l1w, l2, l2w, line_bytes, addr, index = 0, last = 0;
    const char *why, *mtt_path = argc == 3 && !strcmp(argv[1], "-o") ? argv[2] : NULL;
    char op[8];
    mt_hierarchy h;
    mt_mtt_encoder enc;
    unsigned char buf[MT_MTT_MAX_RECORD_BYTES], header[MT_MTT_HEADER_BYTES];
    FILE *mtt = NULL;
    int shift = 0, started = 0;
    if (scanf("%llu %llu %llu %llu %llu", &l1, &l1w, &l2, &l2w, &line_bytes) != 5) {
        fprintf(stderr, "cache_driver: expected a geometry line: L1_BYTES L1_WAYS L2_BYTES L2_WAYS LINE_BYTES\n");
        return 2;
    }
    if ((why = mt_level_check(l1, l1w, line_bytes)) || (why = mt_level_check(l2, l2w, line_bytes))) {
        fprintf(stderr, "cache_driver: bad geometry: %s\n", why);
        return 2;
    }
    while ((1ULL << shift) < line_bytes)
        shift++;
    h.line_shift = shift;
    mt_level_init(&h.l1, l1, l1w, line_bytes, malloc(mt_level_bytes(l1, l1w, line_bytes)));
    mt_level_init(&h.l2, l2, l2w, line_bytes, malloc(mt_level_bytes(l2, l2w, line_bytes)));
    mt_mtt_init(&enc);
    if (mtt_path) {
        if (!(mtt = fopen(mtt_path, "wb"))) {
            perror(mtt_path);
            return 2;
        }
        mt_mtt_header(&enc, 0, header);
        fwrite(header, 1, sizeof header, mtt);
    }
    while (scanf("%7s %lli", op, (long long *)&addr) == 2) {
        mt_outcome o = mt_access_line(&h, addr >> shift, op[0] == 'w');
        if (o.l2_miss) {
            if (o.has_writeback)
                printf("%llu 0x%llx 0x%llx\n", index, (addr >> shift) << shift, o.writeback << shift);
            else
                printf("%llu 0x%llx\n", index, (addr >> shift) << shift);
            if (mtt) {
                unsigned long long bubbles = started ? index - last - 1 : index;
                int n = mt_mtt_encode(&enc, buf, bubbles, (addr >> shift) << shift, o.has_writeback,
                                      o.writeback << shift);
                fwrite(buf, 1, n, mtt);
                last = index;
                started = 1;
            }
        }
        index++;
    }
    if (mtt) {
        mt_mtt_header(&enc, 1, header);
        fseek(mtt, 0, SEEK_SET);
        fwrite(header, 1, sizeof header, mtt);
        if (fclose(mtt)) {
            perror(mtt_path);
            return 2;
        }
    }
    return 0;
}
