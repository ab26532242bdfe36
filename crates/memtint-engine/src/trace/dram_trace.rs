//! Readers of DRAM-level traces. (filled in by the trace work)
