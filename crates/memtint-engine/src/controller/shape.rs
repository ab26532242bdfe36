//! The lane controller's organisation as a type: how many 8-lane blocks its lane operations
//! run over (one lane per bank), and whether the channel has more than one rank. The closed
//! loop (`dram_sim/routing.rs`) picks its shape once per run (`with_shape!`), so the
//! controller's hot code has the two as constants: no block-count dispatch per lane operation,
//! no rank-scope test per command. Common organisations get a `Fixed` shape; every other one
//! runs `Dynamic`, which reads the same two from the controller at run time (as the outlined
//! `tick` and `enqueue` always do), so every supported organisation has a path and the answers
//! are the same on both.

/// An organisation's lane shape; 0 (or `None`) means "read it from the controller".
pub trait Shape {
    /// Blocks per lane operation: 1, 2, 4 or 8 (the lanes rounded up to a power of two).
    const BLOCKS: usize;
    /// More than one rank (lane raises then have a third scope).
    const MULTI_RANK: Option<bool>;
}

/// A shape known at compile time.
pub struct Fixed<const BLOCKS: usize, const MULTI_RANK: bool>;

impl<const BLOCKS: usize, const MULTI_RANK: bool> Shape for Fixed<BLOCKS, MULTI_RANK> {
    const BLOCKS: usize = BLOCKS;
    const MULTI_RANK: Option<bool> = Some(MULTI_RANK);
}

/// The catch-all: every part read at run time.
pub struct Dynamic;

impl Shape for Dynamic {
    const BLOCKS: usize = 0;
    const MULTI_RANK: Option<bool> = None;
}

/// A controller's shape as values (`LaneController::shape`), which `with_shape!` turns into a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeKey {
    pub blocks: usize,
    pub multi_rank: bool,
}

/// Run `$body` with `$S` the `Shape` of `$key`: a `Fixed` shape for the organisations below,
/// `Dynamic` for the others. Each `Fixed` shape is a copy of the code `$body` reaches, so the
/// list is short: DDR3 (8 banks per rank) and DDR4 (16) with one rank, and with two or four
/// ranks.
#[macro_export]
#[doc(hidden)]
macro_rules! with_shape {
    ($key:expr, $S:ident => $body:expr) => {{
        use $crate::controller::shape::{Dynamic, Fixed, ShapeKey};
        match $key {
            ShapeKey { blocks: 1, multi_rank: false } => {
                type $S = Fixed<1, false>;
                $body
            }
            ShapeKey { blocks: 2, multi_rank: false } => {
                type $S = Fixed<2, false>;
                $body
            }
            ShapeKey { blocks: 2, multi_rank: true } => {
                type $S = Fixed<2, true>;
                $body
            }
            ShapeKey { blocks: 4, multi_rank: true } => {
                type $S = Fixed<4, true>;
                $body
            }
            _ => {
                type $S = Dynamic;
                $body
            }
        }
    }};
}

/// The name of the shape `key` runs as (`Fixed<..>` or `Dynamic`), for tests that check each
/// fixed shape is reached.
pub fn shape_name(key: ShapeKey) -> &'static str {
    crate::with_shape!(key, S => std::any::type_name::<S>().rsplit("::").next().unwrap_or("?"))
}
