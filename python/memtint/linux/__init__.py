"""Page colouring on stock Linux (issue 5): the Python side of libmemtint.

`memtint run` and `memtint run-mix` start unmodified programs with libmemtint preloaded so their
heaps come from chosen bank/channel/LLC colours (BPM §2.3 and §2.6 without the kernel patch),
with the colours computed by the simulator's own colour and placement code; `memtint inspect`
histograms any process's resident pages by bank, channel, rank and LLC colour. One module per
concept: pagemap (frame numbers), maps (mapping classes), layout (the engine's colours),
assigned (a process's colours from its environment), hypervisor, native (finding the library),
launch (environment, affinity, checks), run, run_mix, inspect. See docs/linux.md.
"""

from memtint.linux.errors import LibraryMissingError, LinuxError, PrivilegeError
from memtint.linux.inspect import inspect_process
from memtint.linux.layout import ColourLayout, colour_layout, policy_partition
from memtint.linux.native import library_path
from memtint.linux.run import run_coloured
from memtint.linux.run_mix import run_mix, split_commands

__all__ = ["ColourLayout", "LibraryMissingError", "LinuxError", "PrivilegeError", "colour_layout", "inspect_process",
           "library_path", "policy_partition", "run_coloured", "run_mix", "split_commands"]
