//! The memtint._engine Python extension (PyO3).
