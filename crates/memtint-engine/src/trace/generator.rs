//! Seeded request generators. (filled in by the trace work)
