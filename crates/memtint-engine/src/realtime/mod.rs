//! Real-time tasks and the schedules Colored Refresh and its server build around refresh (Pan
//! thesis ch. 4-5): periodic tasks, the cyclic executive's frames and the rank colours each
//! task may use (`cyclic`), the Colored Refresh Server's top-level schedule (`crs`), and the
//! schedulability analysis both rely on (`servers`), and the tests a run's task set is judged by
//! at its declared WCETs (`schedulability`). The refresh side is the burst refresh
//! manager (`controller/refresh/burst.rs`); docs/refresh.md says how they fit.

pub mod crs;
pub mod cyclic;
pub mod schedulability;
pub mod servers;
pub mod task;

pub use task::Task;
