//! Machine configurations (TOML presets under configs/machines) and the run specification.
