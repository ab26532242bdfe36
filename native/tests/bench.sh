#!/usr/bin/env bash
# libmemtint benchmark (see bench/native/bench_alloc.c and bench/README.md). Needs root for
# pagemap mode; prints markdown tables.
set -eu
B=$(cd "${1:-../build}" && pwd)/tests/bench_alloc
export MEMTINT_COLOR_MASKS=0x2000,0x4000,0x8000,0x200000,0x400000 MEMTINT_QUIET=1 MEMTINT_MODE=pagemap
if [ "$(id -u)" != 0 ]; then echo "bench: libmemtint benchmark needs root (pagemap frame numbers); skipped"; exit 0; fi
# Hundreds of MB of coloured blocks are tens of thousands of mappings; the default limit (65530)
# is too low for the 512 MB run, so raise it for the benchmark and restore it afterwards.
OLD_MAPS=$(cat /proc/sys/vm/max_map_count)
if [ "$OLD_MAPS" -lt 1048576 ]; then
    echo 1048576 > /proc/sys/vm/max_map_count
    trap 'echo "$OLD_MAPS" > /proc/sys/vm/max_map_count' EXIT
fi
echo "libmemtint allocation throughput (16 B-1 KB objects, 1024 live per thread; colours 0-15 of 32)"
echo "| threads | glibc Mops/s | libmemtint Mops/s | ratio |"
echo "|---|---|---|---|"
for t in 1 2 4; do MEMTINT_COLORS=0-15 "$B" throughput $t 2000000; done
echo
echo "mixed sizes (90 % 2 B-2 KB, 9.5 % 2-64 KB, 0.5 % 64 KB-4 MB; 20 % realloc; pages touched; colours 0-15 of 32)"
echo "| threads | glibc Mops/s | glibc kernel share | libmemtint Mops/s | libmemtint kernel share | glibc / libmemtint |"
echo "|---|---|---|---|---|---|"
for t in 1 2 4; do MEMTINT_COLORS=0-15 "$B" mixed $t 400000; done
echo
echo "coloured memory rate (4 MB blocks, touched; i7-860 bank colours, 32 of them)"
echo "| mode | colours | block | MB | GB/s | held aside GB per GB | from kernel GB per GB | released GB per GB | glibc malloc+touch GB/s |"
echo "|---|---|---|---|---|---|---|---|---|"
MEMTINT_COLORS=0-15 "$B" rate 512
MEMTINT_COLORS=0-3 "$B" rate 256
MEMTINT_COLORS=0 "$B" rate 64
# Hugepage mode: low masks (bits 13-15, 8 colours) give runs of 32 KB for colours 0-3 and 8 KB
# for colour 0 inside every hugepage; the i7-860 masks colour whole hugepages (b21, b22).
OLD_HUGE=$(cat /proc/sys/vm/nr_hugepages)
echo 768 > /proc/sys/vm/nr_hugepages
trap 'echo "$OLD_HUGE" > /proc/sys/vm/nr_hugepages; [ -n "${OLD_MAPS:-}" ] && echo "$OLD_MAPS" > /proc/sys/vm/max_map_count' EXIT
MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=0x2000,0x4000,0x8000 MEMTINT_COLORS=0-3 "$B" rate 256 32
MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=0x2000,0x4000,0x8000 MEMTINT_COLORS=0 "$B" rate 64 8
MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=0x2000,0x4000,0x8000 MEMTINT_COLORS=0-7 "$B" rate 512
best=$(MEMTINT_COLOR_MASKS=0x200000,0x400000 "$(dirname "$B")/hugepage_colours" 768 | head -1)
g=${best%% *}
MEMTINT_MODE=hugepage MEMTINT_COLORS=$((8 * g))-$((8 * g + 7)) "$B" rate 256
