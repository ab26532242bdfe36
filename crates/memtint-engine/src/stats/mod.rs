//! Statistics: counters, latency distributions, the JSON schema of docs/stats.md.
