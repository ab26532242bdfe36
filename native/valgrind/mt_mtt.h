/* Encodes CPU-trace records in memtint's binary `.mtt` format, version 1 (the specification is
 * at the top of crates/memtint-engine/src/workload/binary_trace.rs). Freestanding C: the caller
 * owns the output buffer and the file. The tool writes the plain (not gzip) body, so the format
 * is written at full speed inside the traced process and read by every memtint command. */
#ifndef MT_MTT_H
#define MT_MTT_H

#include "mt_cache.h"

#define MT_MTT_HEADER_BYTES 32
#define MT_MTT_MAX_RECORD_BYTES 28
#define MT_MTT_SLOTS 8

typedef struct {
    mt_u64 lines[MT_MTT_SLOTS];
    mt_u64 last_use[MT_MTT_SLOTS];
    mt_u64 clock;
} mt_slot_table;

typedef struct {
    mt_slot_table reads, writebacks;
    mt_u64 records, instructions, writebacks_count;
} mt_mtt_encoder;

void mt_mtt_init(mt_mtt_encoder *enc);
/* Encodes one record (byte addresses) into out (>= MT_MTT_MAX_RECORD_BYTES); returns its length. */
int mt_mtt_encode(mt_mtt_encoder *enc, unsigned char *out, mt_u64 bubbles, mt_u64 read_addr,
                  int has_writeback, mt_u64 writeback_addr);
/* The 32-byte header; `finished` = 0 writes the "never finished" record count. */
void mt_mtt_header(const mt_mtt_encoder *enc, int finished, unsigned char out[MT_MTT_HEADER_BYTES]);

#endif
