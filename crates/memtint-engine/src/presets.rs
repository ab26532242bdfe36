//! The preset catalogue: every TOML file under configs/, embedded at build time.
