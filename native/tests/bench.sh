#!/usr/bin/env bash
# libmemtint benchmark (see bench/native/bench_alloc.c and bench/README.md). Needs root for
# pagemap mode; prints markdown tables.
set -eu
B=$(cd "${1:-../build}" && pwd)/tests/bench_alloc
export MEMTINT_COLOR_MASKS=0x2000,0x4000,0x8000,0x200000,0x400000 MEMTINT_QUIET=1 MEMTINT_MODE=pagemap
if [ "$(id -u)" != 0 ]; then echo "bench: libmemtint benchmark needs root (pagemap frame numbers); skipped"; exit 0; fi
echo "libmemtint allocation throughput (16 B-1 KB objects, 1024 live per thread; colours 0-15 of 32)"
echo "| threads | glibc Mops/s | libmemtint Mops/s | ratio |"
echo "|---|---|---|---|"
for t in 1 2 4; do MEMTINT_COLORS=0-15 "$B" throughput $t 2000000; done
echo
echo "coloured memory rate (4 MB blocks, touched; i7-860 bank colours, 32 of them)"
echo "| colours | MB | GB/s | held aside GB per GB | from kernel GB per GB | released GB per GB | glibc malloc+touch GB/s |"
echo "|---|---|---|---|---|---|---|"
MEMTINT_COLORS=0-15 "$B" rate 512
MEMTINT_COLORS=0-3 "$B" rate 256
MEMTINT_COLORS=0 "$B" rate 64
