#!/usr/bin/env bash
# libmemtint acceptance tests (issue 5: tests 1, 2, 4, 5; configuration errors; unmodified
# programs under LD_PRELOAD). Colour checks read frames through pagemap, so most tests need root
# (CI runs as root); without it they are reported as SKIPPED with the reason, never as passed.
# Hugepage tests set vm.nr_hugepages and restore it. Usage: run.sh BUILD_DIR
set -u
BUILD=$(cd "${1:-../build}" && pwd)
T=$BUILD/tests
LIB=$BUILD/libmemtint.so
I7=0x2000,0x4000,0x8000,0x200000,0x400000     # i7-860 bank-colour bits 13,14,15,21,22 (BPM §2.2)
LOW=0x2000,0x4000,0x8000                      # bits below 21: hugepage mode needs no pagemap
HIGH=0x200000,0x400000                        # the i7-860 rank bits alone
export MEMTINT_QUIET=1
unset MEMTINT_COLORS MEMTINT_NODE MEMTINT_COLOR_MASKS MEMTINT_MODE MEMTINT_ON_EXHAUSTION MEMTINT_REPORT MEMTINT_POOL_LIMIT
WORK=$(mktemp -d /tmp/memtint-test.XXXXXX)
chmod 1777 "$WORK" # the unprivileged run writes its report here
PASSED=0 FAILED=0 SKIPPED=0
pass() { echo "PASS  $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL  $1"; [ $# -gt 1 ] && echo "      $2"; FAILED=$((FAILED + 1)); }
skip() { echo "SKIP  $1: $2"; SKIPPED=$((SKIPPED + 1)); }
ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
OLD_HUGE=$(cat /proc/sys/vm/nr_hugepages)
OLD_MAPS=$(cat /proc/sys/vm/max_map_count)
cleanup() {
    [ $ROOT = 1 ] && echo "$OLD_HUGE" > /proc/sys/vm/nr_hugepages
    [ $ROOT = 1 ] && echo "$OLD_MAPS" > /proc/sys/vm/max_map_count
    rm -rf "$WORK"
}
trap cleanup EXIT
# expect_error NAME 'ENV=...' PATTERN: the preloaded library refuses to start (status 2) and says why
expect_error() {
    local name=$1 envs=$2 pattern=$3 out rc
    out=$(env $envs LD_PRELOAD="$LIB" /bin/true 2>&1); rc=$?
    if [ $rc = 2 ] && grep -qF -- "$pattern" <<<"$out"; then pass "$name"
    else fail "$name" "status $rc, output: $out"; fi
}
# json_field FILE KEY: an integer field of a MEMTINT_REPORT file
json_field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

echo "== configuration errors name the variable and the bad text, exit 2 before main"
expect_error config_bad_mask "MEMTINT_COLOR_MASKS=0x2000,zz" "MEMTINT_COLOR_MASKS='0x2000,zz'"
expect_error config_mask_inside_page "MEMTINT_COLOR_MASKS=0x40" "bits below 12"
# colours such masks cannot give would have no frames: a pool filled with nothing usable
expect_error config_repeated_mask "MEMTINT_COLOR_MASKS=0x2000,0x2000" "a mask is a repeat or the XOR of earlier ones"
expect_error config_dependent_masks "MEMTINT_COLOR_MASKS=0x2000,0x6000,0x4000" "a mask is a repeat or the XOR of earlier ones"
SEVENTEEN=$(for b in $(seq 12 28); do printf '0x%x,' $((1 << b)); done)
expect_error config_too_many_masks "MEMTINT_COLOR_MASKS=${SEVENTEEN%,}" "more than 16"
expect_error config_colour_out_of_range "MEMTINT_COLOR_MASKS=$I7 MEMTINT_COLORS=0-40" "MEMTINT_COLORS='0-40': colour 40 is outside the colour space: 5 masks give 32 colours (0-31)"
# checked before the range is filled in (it used to be expanded first)
expect_error config_colour_range_huge "MEMTINT_COLOR_MASKS=$I7 MEMTINT_COLORS=0-4294967296" "colour 4294967296 is outside the colour space: 5 masks give 32 colours"
expect_error config_colour_number_huge "MEMTINT_COLOR_MASKS=$I7 MEMTINT_COLORS=3,99999999999999999999" "colour 99999999999999999999 is outside"
expect_error config_backwards_range "MEMTINT_COLOR_MASKS=$I7 MEMTINT_COLORS=3-1" "ends before it starts"
expect_error config_colours_without_masks "MEMTINT_COLORS=1" "MEMTINT_COLOR_MASKS is not set"
expect_error config_bad_mode "MEMTINT_COLOR_MASKS=$I7 MEMTINT_MODE=fast" "MEMTINT_MODE='fast'"
expect_error config_bad_exhaustion "MEMTINT_ON_EXHAUSTION=maybe" "MEMTINT_ON_EXHAUSTION='maybe'"
expect_error config_bad_limit "MEMTINT_POOL_LIMIT=12Q" "MEMTINT_POOL_LIMIT='12Q'"
expect_error config_limit_over_64_bits "MEMTINT_POOL_LIMIT=17179869186G" "MEMTINT_POOL_LIMIT='17179869186G': too large"
# the node: the first node without memory here (node 1 on a one-node machine) is refused by name
HAS_MEMORY=$(cat /sys/devices/system/node/has_memory 2>/dev/null || echo 0)
ABSENT=$(python3 -c "import sys
have = set()
for part in sys.argv[1].split(','):
    a, _, b = part.partition('-'); have.update(range(int(a), int(b or a) + 1))
print(min(set(range(64)) - have))" "$HAS_MEMORY")
expect_error config_node_without_memory "MEMTINT_COLOR_MASKS=$I7 MEMTINT_COLORS=0-7 MEMTINT_NODE=$ABSENT" "MEMTINT_NODE='$ABSENT': node $ABSENT does not exist or has no memory (nodes with memory: $HAS_MEMORY)"
expect_error config_node_outside "MEMTINT_COLOR_MASKS=$I7 MEMTINT_NODE=64" "MEMTINT_NODE='64': node 64 is outside the nodes libmemtint supports (0-63"
expect_error config_node_malformed "MEMTINT_COLOR_MASKS=$I7 MEMTINT_NODE=zero" "MEMTINT_NODE='zero': expected a node number"
expect_error config_node_without_masks "MEMTINT_NODE=0" "MEMTINT_NODE='0': MEMTINT_COLOR_MASKS is not set"

echo "== uncoloured pass-through (MEMTINT_COLORS unset) is a working malloc"
if [ "$(LD_PRELOAD=$LIB ls -la /usr/lib 2>&1)" = "$(ls -la /usr/lib 2>&1)" ] &&
   [ "$(LD_PRELOAD=$LIB MEMTINT_COLOR_MASKS=$I7 $T/colour_probe | tail -1)" = ok ]; then
    pass passthrough_ls_identical
else fail passthrough_ls_identical; fi

echo "== MEMTINT_REPORT: a device or FIFO is written into, a symlink followed; nothing but a regular file is replaced"
# what the report must not change: inode and file type
ino_type() { stat -c '%i %F' "$1"; }
report_to() { timeout 20 env MEMTINT_QUIET=0 MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT="$1" LD_PRELOAD="$LIB" /bin/true 2>&1; }
# coreutils close stderr before exit handlers run (close_stdout): the warning still reaches it
out=$(timeout 20 env MEMTINT_QUIET=0 MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT="$WORK/no-such-dir/r.json" LD_PRELOAD="$LIB" /bin/echo hi 2>&1)
if grep -qF "cannot write MEMTINT_REPORT file $WORK/no-such-dir/r.json" <<<"$out"; then
    pass report_warning_after_the_program_closed_stderr; else fail report_warning_after_the_program_closed_stderr "$out"; fi
if mknod "$WORK/null" c 1 3 2>/dev/null && mknod "$WORK/full" c 1 7 2>/dev/null; then
    before=$(ino_type "$WORK/null")
    out=$(report_to "$WORK/null"); rc=$?
    if [ $rc = 0 ] && [ "$(ino_type "$WORK/null")" = "$before" ] && ! grep -q MEMTINT_REPORT <<<"$out"; then
        pass "report_into_char_device (still $before)"; else fail report_into_char_device "status $rc, now $(ino_type "$WORK/null"): $out"; fi
    before=$(ino_type "$WORK/full")
    out=$(report_to "$WORK/full"); rc=$?
    if [ $rc = 0 ] && [ "$(ino_type "$WORK/full")" = "$before" ] &&
       grep -qF "cannot write MEMTINT_REPORT file $WORK/full: No space left on device" <<<"$out"; then
        pass "report_write_error_names_the_file"; else fail report_write_error_names_the_file "status $rc: $out"; fi
    before=$(ino_type "$WORK/null")
    ln -s "$WORK/null" "$WORK/to-null"
    out=$(report_to "$WORK/to-null"); rc=$?
    if [ $rc = 0 ] && [ -L "$WORK/to-null" ] && [ "$(ino_type "$WORK/null")" = "$before" ]; then
        pass report_through_symlink_to_device; else fail report_through_symlink_to_device "status $rc: $out"; fi
else
    skip report_into_char_device "mknod failed (needs root or CAP_MKNOD)"
fi
mkfifo "$WORK/fifo"
before=$(ino_type "$WORK/fifo")
start=$(date +%s)
out=$(report_to "$WORK/fifo"); rc=$?
if [ $rc = 0 ] && [ $(( $(date +%s) - start )) -lt 10 ] && [ "$(ino_type "$WORK/fifo")" = "$before" ] &&
   grep -qF "MEMTINT_REPORT $WORK/fifo is a FIFO that no process is reading" <<<"$out"; then
    pass "report_into_fifo_without_reader (exits at once, warns)"; else fail report_into_fifo_without_reader "status $rc: $out"; fi
timeout 20 cat "$WORK/fifo" > "$WORK/fifo.json" &
reader=$!
sleep 0.3
out=$(report_to "$WORK/fifo"); rc=$?
wait $reader
if [ $rc = 0 ] && [ "$(ino_type "$WORK/fifo")" = "$before" ] && [ "$(json_field "$WORK/fifo.json" page_size)" = 4096 ]; then
    pass "report_into_fifo_with_reader"; else fail report_into_fifo_with_reader "status $rc: $out; read: $(head -c 200 "$WORK/fifo.json")"; fi
# /dev/stdout into a pipe: the link's target ("pipe:[N]") is no path; the pipe is written into
got=$(timeout 20 env MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT=/dev/stdout LD_PRELOAD="$LIB" /bin/true 2>/dev/null | cat)
if python3 -c "import json,sys; assert json.loads(sys.argv[1])['page_size'] == 4096" "$got" 2>/dev/null; then
    pass "report_into_stdout_as_a_pipe"; else fail report_into_stdout_as_a_pipe "read: $(head -c 300 <<<"$got")"; fi
echo old > "$WORK/target"
chmod 600 "$WORK/target"
ln -s target "$WORK/link"
out=$(report_to "$WORK/link"); rc=$?
if [ $rc = 0 ] && [ -L "$WORK/link" ] && [ "$(readlink "$WORK/link")" = target ] &&
   [ "$(json_field "$WORK/target" page_size)" = 4096 ] && [ "$(stat -c %a "$WORK/target")" = 600 ]; then
    pass "report_through_symlink (the link stays, its target is replaced, keeping its mode)"
else fail report_through_symlink "status $rc, $(ls -l "$WORK/link" "$WORK/target"): $out"; fi

if [ $ROOT = 0 ]; then
    for t in stability api node invariant_pagemap invariant_hugepage stress_8_threads exhaustion unprivileged unmodified_programs preload_edges fork_safety; do
        skip $t "needs root (pagemap frame numbers, hugepages, dropping privileges); CI runs as root"
    done
    echo "passed $PASSED, failed $FAILED, skipped $SKIPPED"
    [ $FAILED = 0 ]; exit
fi

echo "== the API's contract and error cases"
out=$(MEMTINT_COLOR_MASKS=$I7 $T/test_api 2>&1) && pass "api ($out)" || fail api "$out"

echo "== per-thread node and colours (TintMalloc's tint_init): frames on the node by move_pages, bound by mbind"
# One node here: the refused node is the first without memory; two nodes cannot be tested.
out=$(MEMTINT_COLOR_MASKS=$I7 $T/test_node 2>&1); rc=$?
if [ $rc = 0 ] && grep -qF "memtint_set_node_colors: node $ABSENT does not exist or has no memory (nodes with memory: $HAS_MEMORY)" <<<"$out"; then
    pass "node_pagemap ($(tail -1 <<<"$out"))"; else fail node_pagemap "status $rc: $out"; fi
# Threads colouring while others map memory: a page moved by mremap left a hole that another
# thread's mmap could take before the reservation covered it again (and then lost it: 11 of 300
# runs crashed). Thirty runs catch that two times in three.
crashed=0
for i in $(seq 1 30); do MEMTINT_COLOR_MASKS=$I7 $T/test_node >/dev/null 2>&1 || crashed=$((crashed + 1)); done
if [ $crashed = 0 ]; then pass "node_pagemap_repeated (30 runs)"; else fail node_pagemap_repeated "$crashed of 30 runs failed"; fi
seq 1 200000 | sort -R > "$WORK/node-input.txt"
out=$(MEMTINT_NODE=0 MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT=$WORK/node.json LD_PRELOAD=$LIB sort -n "$WORK/node-input.txt" | md5sum)
per_node=$(python3 -c "import json,sys; r = json.load(open(sys.argv[1])); print(r['node'], r['pages_delivered_per_node'])" "$WORK/node.json" 2>&1)
if [ "$out" = "$(sort -n "$WORK/node-input.txt" | md5sum)" ] && grep -qE "^0 \{'0': [1-9][0-9]*\}$" <<<"$per_node"; then
    pass "node_preloaded (MEMTINT_NODE=0, sort: report node, pages per node $per_node)"; else fail node_preloaded "$per_node"; fi

echo "== test 1: colour invariant through pagemap (small, medium, 64 MB)"
for cols in 0,1,2,3,4,5,6,7 5; do
    out=$(MEMTINT_MODE=pagemap MEMTINT_COLOR_MASKS=$I7 $T/test_invariant $cols 64 2>&1) \
        && pass "invariant_pagemap colours=$cols ($out)" || fail "invariant_pagemap colours=$cols" "$out"
done
echo 256 > /proc/sys/vm/nr_hugepages
HUGE_OK=1; [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 64 ] && HUGE_OK=0
if [ $HUGE_OK = 0 ]; then
    skip invariant_hugepage "the kernel gave only $(cat /proc/sys/vm/nr_hugepages) hugepages"
else
    # low masks: no pagemap needed; 16 KB blocks fit the 32 KB runs of colours 0-3; a set of all
    # 8 colours covers whole hugepages, so 64 MB blocks chain hugepages
    out=$(MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=$LOW $T/test_invariant 0,1,2,3 0 16384 2>&1) \
        && pass "invariant_hugepage low masks colours=0-3 ($out)" || fail "invariant_hugepage low masks" "$out"
    out=$(MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=$LOW $T/test_invariant 0,1,2,3,4,5,6,7 64 2>&1) \
        && pass "invariant_hugepage low masks all colours 64 MB ($out)" || fail "invariant_hugepage all colours" "$out"
    # i7-860 masks: hugepages whose b21,b22 give colour group g hold colours 8g..8g+7 whole; the
    # machine's free hugepages are not spread evenly over b21,b22, so take the best-supplied group
    best=$(MEMTINT_COLOR_MASKS=$HIGH $T/hugepage_colours 256 | head -1)
    g=${best%% *}; n=${best##* }
    if [ "${n:-0}" -lt 40 ]; then
        skip invariant_hugepage_i7 "no colour group has 40 free hugepages (best: ${best:-none})"
    else
        cols=$(seq -s, $((8 * g)) $((8 * g + 7)))
        out=$(MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=$I7 $T/test_invariant $cols 64 100000 2>&1) \
            && pass "invariant_hugepage i7-860 masks colours=$cols ($out)" || fail "invariant_hugepage i7-860" "$out"
    fi
fi

if [ $HUGE_OK = 0 ]; then skip node_hugepage "no hugepages could be reserved"; else
    # 8 KB blocks: with masks below bit 21 each colour is an 8 KB run inside a hugepage
    out=$(MEMTINT_MODE=hugepage MEMTINT_COLOR_MASKS=$LOW $T/test_node 8192 2>&1) \
        && pass "node_hugepage ($(tail -1 <<<"$out"))" || fail node_hugepage "$out"
fi

echo "== test 4: exhaustion"
out=$(MEMTINT_COLORS=0 MEMTINT_POOL_LIMIT=64M MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion 262144 200 2>&1)
if grep -q "failed=yes errno=ENOMEM spilled=0" <<<"$out" && grep -q "out of memory in colours 0: MEMTINT_POOL_LIMIT reached" <<<"$out" \
    && grep -qE "the library holds [1-9][0-9]* MB of frames of colours no thread uses aside" <<<"$out" \
    && grep -q "memtint run's --spill" <<<"$out"; then
    pass "exhaustion_error ($(head -1 <<<"$out"))"; else fail exhaustion_error "$out"; fi
out=$(MEMTINT_COLORS=0 MEMTINT_POOL_LIMIT=64M MEMTINT_ON_EXHAUSTION=spill MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion 262144 200 2>&1)
if grep -qE "blocks=200 failed=no errno=none spilled=[1-9]" <<<"$out" && ! grep -q "came from other colours" <<<"$out"; then
    pass "exhaustion_spill ($out)"; else fail exhaustion_spill "$out"; fi
# Spilled pages are said at exit (the exit status cannot say them), with the count and the fix.
out=$(env -u MEMTINT_QUIET MEMTINT_COLORS=0 MEMTINT_POOL_LIMIT=64M MEMTINT_ON_EXHAUSTION=spill MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion 262144 200 2>&1)
n=$(grep -oE "spilled=[0-9]+" <<<"$out" | cut -d= -f2)
if grep -q "libmemtint: warning: $n heap pages came from other colours than the ones asked for .*MEMTINT_POOL_LIMIT was reached.* give more colours or a higher MEMTINT_POOL_LIMIT" <<<"$out"; then
    pass "exhaustion_spill_warned ($n pages)"; else fail exhaustion_spill_warned "$out"; fi
out=$(MEMTINT_COLORS=0 MEMTINT_POOL_LIMIT=64M MEMTINT_ON_EXHAUSTION=spill MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion 262144 1000 2>&1)
# With spill already on, the message must not suggest turning it on.
if grep -qE "failed=yes errno=ENOMEM spilled=[1-9]" <<<"$out" && grep -q "spilling (MEMTINT_ON_EXHAUSTION=spill) is on and could not help" <<<"$out" \
    && ! grep -q "takes other colours" <<<"$out"; then
    pass "exhaustion_spill_then_limit ($(head -1 <<<"$out"))"; else fail exhaustion_spill_then_limit "$out"; fi
if [ $HUGE_OK = 0 ]; then skip exhaustion_hugepage "no hugepages could be reserved"; else
out=$(MEMTINT_MODE=hugepage MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$LOW $T/test_exhaustion 1048576 4 2>&1)
if grep -q "failed=yes errno=ENOMEM" <<<"$out" && grep -q "longest run of these colours" <<<"$out"; then
    pass "exhaustion_hugepage_run (1 MB block, colours 0-3 interleave every 32 KB)"; else fail exhaustion_hugepage_run "$out"; fi
out=$(MEMTINT_MODE=hugepage MEMTINT_ON_EXHAUSTION=spill MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$LOW $T/test_exhaustion 1048576 4 2>&1)
if grep -qE "blocks=4 failed=no errno=none spilled=[1-9]" <<<"$out"; then
    pass "exhaustion_hugepage_spill ($out)"; else fail exhaustion_hugepage_spill "$out"; fi
# i7-860 masks, colours 0-3: the bits below 21 give every hugepage one group of colours 8g..8g+7,
# so no hugepage is all of 0-3 (a 4 MB block chains whole hugepages) and none holds a run of them
# over 32 KB (a 64 KB block). Both are refused before any hugepage is taken; the search used to
# take every free hugepage (all 256 reserved, 131072 pages) and then fail. With spill they are
# made of other colours, taking only the hugepages they use (4 MB: 2 per block; 64 KB: 1 for all).
for b in "65536 512 the block is larger than the longest run of these colours that any 2 MB hugepage can hold (32 KB)" \
         "4194304 4096 blocks over 2 MB in hugepage mode need whole hugepages of the colours, and no hugepage can be all of these colours: the mask bits below bit 21 (inside a hugepage) give every hugepage pieces of 8 colours at once (a group such as 0-7)"; do
    read -r block most why <<<"$b"
    out=$(MEMTINT_MODE=hugepage MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion $block 4 2>&1)
    if grep -q "blocks=0 failed=yes errno=ENOMEM .* from_kernel=0$" <<<"$out" && grep -qF "out of memory in colours 0-3: $why" <<<"$out"; then
        pass "exhaustion_hugepage_mixed_masks_$block (refused up front: $(tail -1 <<<"$out"))"
    else fail "exhaustion_hugepage_mixed_masks_$block" "$out"; fi
    out=$(env -u MEMTINT_QUIET MEMTINT_MODE=hugepage MEMTINT_ON_EXHAUSTION=spill MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$I7 $T/test_exhaustion $block 4 2>&1)
    taken=$(grep -oE "from_kernel=[0-9]+" <<<"$out" | cut -d= -f2)
    if grep -qE "blocks=4 failed=no errno=none spilled=[1-9]" <<<"$out" && [ "${taken:-999999}" -le "$most" ] &&
       grep -q "were in blocks that hugepage mode cannot make of these colours" <<<"$out"; then
        pass "exhaustion_hugepage_mixed_masks_${block}_spill ($(grep blocks= <<<"$out"))"
    else fail "exhaustion_hugepage_mixed_masks_${block}_spill" "$out"; fi
done
# A search that takes new hugepages gives back, once it ends, those of no colour in use (another
# colour set's: run-mix's other programs need them). Colours of the group the free hugepages
# supply least, so searches walk past hugepages of the others.
least=$(MEMTINT_COLOR_MASKS=$HIGH $T/hugepage_colours 256 | tail -1)
g=${least%% *}
for b in "32768 4000" "64 400000"; do
    read -r block most <<<"$b"
    out=$(MEMTINT_MODE=hugepage MEMTINT_COLORS=$((8 * g))-$((8 * g + 7)) MEMTINT_COLOR_MASKS=$I7 \
          $T/test_give_back $block $most "$(cat /proc/sys/vm/nr_hugepages)" 2>&1); rc=$?
    if [ $rc = 0 ] && grep -q "searched=yes" <<<"$out"; then
        pass "hugepage_search_gives_back_$block ($(grep -v '^libmemtint: ' <<<"$out" | tr '\n' ' '))"
    elif [ $rc = 0 ]; then skip "hugepage_search_gives_back_$block" "no search took more than one hugepage ($out)"
    else fail "hugepage_search_gives_back_$block" "$out"; fi
done
fi

echo "== test 5: unprivileged run (setpriv to nobody)"
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
cp "$LIB" "$T/colour_probe" "$WORK/" && chmod 755 "$WORK"/*
for mode in pagemap auto; do
    out=$(env MEMTINT_MODE=$mode MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$I7 LD_PRELOAD=$WORK/libmemtint.so $AS_NOBODY $WORK/colour_probe 2>&1); rc=$?
    if [ $rc = 2 ] && grep -q "run as root, grant CAP_SYS_ADMIN, or use MEMTINT_MODE=hugepage" <<<"$out" && ! grep -q "^ok" <<<"$out"; then
        pass "unprivileged_$mode refuses with a clear error"; else fail "unprivileged_$mode" "status $rc: $out"; fi
done
out=$(env MEMTINT_MODE=hugepage MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$I7 LD_PRELOAD=$WORK/libmemtint.so $AS_NOBODY $WORK/colour_probe 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "masks using bits >= 21" <<<"$out"; then
    pass "unprivileged_hugepage_high_masks refuses"; else fail unprivileged_hugepage_high_masks "status $rc: $out"; fi
if [ $HUGE_OK = 0 ]; then skip unprivileged_auto_falls_back_to_hugepage "no hugepages could be reserved"; else
out=$(env MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$LOW MEMTINT_REPORT=$WORK/r.json LD_PRELOAD=$WORK/libmemtint.so $AS_NOBODY $WORK/colour_probe 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "^ok" <<<"$out" && ! grep -qvE "colour=[0-3]$|^ok$" <<<"$out" && [ "$(json_field $WORK/r.json mode)" = hugepage ]; then
    pass "unprivileged_auto_falls_back_to_hugepage (low masks, no pagemap needed)"
else fail unprivileged_auto_falls_back_to_hugepage "status $rc: $out"; fi
fi

echo 0 > /proc/sys/vm/nr_hugepages
out=$(env MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$LOW LD_PRELOAD=$WORK/libmemtint.so $AS_NOBODY $WORK/colour_probe 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "no free 2 MB hugepages" <<<"$out"; then
    pass "unprivileged_without_hugepages refuses with a clear error"; else fail unprivileged_without_hugepages "status $rc: $out"; fi
echo 256 > /proc/sys/vm/nr_hugepages

echo "== unmodified programs under LD_PRELOAD give identical output"
# sort's buffers are large: in pagemap mode a coloured heap is one mapping per run of neighbouring
# frames, more than the default 65530 on a fragmented machine (docs/libmemtint.md, "Limits").
echo 1048576 > /proc/sys/vm/max_map_count
seq 1 400000 | awk '{print ($1 * 7919) % 1000003, $1}' > "$WORK/numbers.txt"
run_same() {
    local name=$1; shift
    "$@" > "$WORK/$name.plain" 2>&1
    MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT=$WORK/$name.json LD_PRELOAD=$LIB "$@" > "$WORK/$name.coloured" 2>&1
    if cmp -s "$WORK/$name.plain" "$WORK/$name.coloured" && [ -s "$WORK/$name.json" ] &&
       [ "$(json_field $WORK/$name.json pages_spilled)" = 0 ]; then
        pass "unmodified_$name ($(json_field $WORK/$name.json pages_delivered) pages delivered at exit)"
    else fail "unmodified_$name" "coloured run's output begins: $(head -c 600 "$WORK/$name.coloured")"; fi
}
run_same ls ls -la /usr/lib /usr/bin
run_same sort sort -n "$WORK/numbers.txt"
run_same gzip sh -c "gzip -c '$WORK/numbers.txt' | gzip -dc | md5sum"
MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 MEMTINT_REPORT="$WORK/pipe.%p.json" LD_PRELOAD=$LIB sh -c "ls /usr/bin | sort | wc -l" >/dev/null
n=$(ls "$WORK"/pipe.*.json 2>/dev/null | wc -l)
# each names the process that wrote it: the pid in its file name, and its command
if [ "$n" -ge 3 ] && python3 -c "
import json, os, sys
for f in sys.argv[1:]:
    r = json.load(open(f))
    assert str(r['pid']) == os.path.basename(f).split('.')[1] and r['comm'], (f, r.get('pid'), r.get('comm'))
" "$WORK"/pipe.*.json; then
    pass "report_per_process (%p: $n reports from one pipeline, all valid JSON, each naming its writer)"
else fail report_per_process "$n reports"; fi
run_same python python3 -c "
d = {i: str(i) * 3 for i in range(1_000_000)}
l = sorted(d.values(), key=len)
print(len(d), sum(map(len, l)), l[-1])"
run_same shell_fork sh -c "ls /usr | sort | head -3; python3 -c 'import subprocess; print(subprocess.run([\"echo\", \"child\"], capture_output=True).stdout)'"

echo "== the preloaded malloc family at its edges answers as glibc does (or as documented)"
out=$(MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 LD_PRELOAD=$LIB $T/preload_edges 2>&1) && pass "preload_edges ($(tail -1 <<<"$out"))" || fail preload_edges "$out"

echo "== stability: compaction may move mlocked pages; the check sees it; the documented sysctl stops it"
OLD_CU=$(cat /proc/sys/vm/compact_unevictable_allowed 2>/dev/null || echo)
if [ -z "$OLD_CU" ]; then skip stability "no vm.compact_unevictable_allowed on this kernel"; else
    echo 1 > /proc/sys/vm/compact_unevictable_allowed
    out1=$(MEMTINT_QUIET=0 MEMTINT_REPORT=$WORK/moved.json MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 $T/test_moved 256 2>&1); rc1=$?
    echo 0 > /proc/sys/vm/compact_unevictable_allowed
    out0=$(MEMTINT_COLORS=0-7 MEMTINT_COLOR_MASKS=$I7 $T/test_moved 256 2>&1); rc0=$?
    echo "$OLD_CU" > /proc/sys/vm/compact_unevictable_allowed
    if [ $rc1 != 0 ]; then fail stability_detects_moves "$out1"
    elif grep -q "moved_by_compaction=0 " <<<"$out1"; then
        skip stability "compaction moved no page of the block even when allowed, so neither the detection nor the sysctl can be shown here ($out1)"
    else
        pass "stability_detects_moves (compact_unevictable_allowed=1: $(grep moved_ <<<"$out1"))"
        # the exit warning gives the report's count, the cause and the remedy
        moved=$(json_field "$WORK/moved.json" pages_found_moved)
        if grep -q "the kernel moved $moved heap pages to new frames during the run, $(json_field "$WORK/moved.json" pages_moved_out_of_colours) of them out of the colours in use (compaction, NUMA balancing" <<<"$out1" &&
           grep -q "vm.compact_unevictable_allowed=0" <<<"$out1" && grep -q "MEMTINT_MODE=hugepage" <<<"$out1"; then
            pass "stability_warns_at_exit ($moved moved)"; else fail stability_warns_at_exit "$out1"; fi
    fi
    if grep -q "moved_by_compaction=0 " <<<"$out1"; then :
    elif [ $rc0 = 0 ] && grep -q "moved_by_compaction=0 " <<<"$out0"; then
        pass "stability_sysctl_prevents_moves (compact_unevictable_allowed=0: $out0)"
    else fail stability_sysctl_prevents_moves "$out0"; fi
fi

echo "== fork(): no deadlock with threads allocating; copy-on-write moves are detected"
out=$(MEMTINT_COLORS=0-3 MEMTINT_COLOR_MASKS=$I7 timeout 120 $T/test_fork 2>&1) && pass "fork_safety ($out)" || fail fork_safety "$out"

echo "== test 2: stress, 8 threads with their own colours, 10^6 operations, AddressSanitizer"
out=$(MEMTINT_COLOR_MASKS=$I7 $T/test_stress 1000000 8 2>&1) && pass "stress_8_threads ($out)" || fail stress_8_threads "$(tail -20 <<<"$out")"

echo "passed $PASSED, failed $FAILED, skipped $SKIPPED"
[ $FAILED = 0 ]
