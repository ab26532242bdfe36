//! DRAM-trace simulation driver: closed-loop or timestamped injection, event skipping.
