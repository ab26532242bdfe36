//! Composite timing constraints the controller enforces, derived from base JEDEC values.
