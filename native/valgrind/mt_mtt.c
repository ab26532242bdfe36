/* The `.mtt` encoder (see mt_mtt.h); slot choice mirrors the Rust writer's SlotChooser: the
 * slot nearest the line, or the least recently used one when none is within 256 lines. */
#include "mt_mtt.h"

#define NEAR_LINES 256ULL

void mt_mtt_init(mt_mtt_encoder *enc)
{
    unsigned char *p = (unsigned char *)enc;
    unsigned long i;
    for (i = 0; i < sizeof *enc; i++)
        p[i] = 0;
}

static int put_varint(unsigned char *out, int n, mt_u64 v)
{
    while (v >= 0x80) {
        out[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (unsigned char)v;
    return n;
}

static mt_u64 zigzag(long long n) { return ((mt_u64)n << 1) ^ (mt_u64)(n >> 63); }

static unsigned code(mt_slot_table *t, mt_u64 line, long long *delta)
{
    unsigned i, best = 0;
    mt_u64 best_distance = ~0ULL;
    for (i = 0; i < MT_MTT_SLOTS; i++) {
        long long d = (long long)(line - t->lines[i]);
        mt_u64 a = d < 0 ? (mt_u64)0 - (mt_u64)d : (mt_u64)d;
        if (a < best_distance) {
            best = i;
            best_distance = a;
        }
    }
    if (best_distance >= NEAR_LINES) {
        best = 0;
        for (i = 1; i < MT_MTT_SLOTS; i++)
            if (t->last_use[i] < t->last_use[best])
                best = i;
    }
    t->clock++;
    t->last_use[best] = t->clock;
    *delta = (long long)(line - t->lines[best]);
    t->lines[best] = line;
    return best;
}

int mt_mtt_encode(mt_mtt_encoder *enc, unsigned char *out, mt_u64 bubbles, mt_u64 read_addr,
                  int has_writeback, mt_u64 writeback_addr)
{
    mt_u64 wb = has_writeback ? writeback_addr : 0;
    int unaligned = ((read_addr | wb) & 63) != 0;
    long long delta;
    unsigned char sel;
    int n, sel_at;
    if (bubbles > 0xffffffffULL)
        bubbles = 0xffffffffULL; /* the format's bound; only a 4-billion-instruction gap hits it */
    n = put_varint(out, 0, bubbles);
    sel_at = n++;
    sel = (unsigned char)code(&enc->reads, read_addr >> 6, &delta);
    n = put_varint(out, n, zigzag(delta));
    if (has_writeback) {
        sel |= (unsigned char)(code(&enc->writebacks, wb >> 6, &delta) << 3 | 0x40);
        n = put_varint(out, n, zigzag(delta));
    }
    if (unaligned)
        sel |= 0x80;
    out[sel_at] = sel;
    if (unaligned) {
        out[n++] = (unsigned char)(read_addr & 63);
        if (has_writeback)
            out[n++] = (unsigned char)(wb & 63);
    }
    enc->records++;
    enc->instructions += bubbles + 1;
    enc->writebacks_count += (mt_u64)(has_writeback != 0);
    return n;
}

static void put_u64(unsigned char *out, mt_u64 v)
{
    int i;
    for (i = 0; i < 8; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

void mt_mtt_header(const mt_mtt_encoder *enc, int finished, unsigned char out[MT_MTT_HEADER_BYTES])
{
    out[0] = 'M'; out[1] = 'T'; out[2] = 'T'; out[3] = '1';
    out[4] = 1; out[5] = 0;   /* version 1 */
    out[6] = 0; out[7] = 0;   /* flags: plain body */
    put_u64(out + 8, finished ? enc->records : ~0ULL);
    put_u64(out + 16, enc->instructions);
    put_u64(out + 24, enc->writebacks_count);
}
