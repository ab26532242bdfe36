//! TEMPORARY stand-in until the generators land: random only.
use super::{DramRequest, TraceSource};
use crate::dram::{DramAddress, Organisation};
use crate::error::Result;
use rand::{Rng, SeedableRng};
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)] #[serde(rename_all = "lowercase")]
pub enum GeneratorKind { Stream, Random, Strided, Conflict, Mix }
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)] #[serde(deny_unknown_fields)]
pub struct GeneratorSpec { pub kind: GeneratorKind, pub requests: u64, #[serde(default)] pub seed: u64, #[serde(default)] pub read_fraction: Option<f64>, #[serde(default)] pub footprint_bytes: Option<u64>, #[serde(default)] pub stride_bytes: Option<u64>, #[serde(default)] pub streams: Option<u32>, #[serde(default)] pub banks: Option<u32> }
pub struct RequestGenerator { left: u64, rng: rand_chacha::ChaCha8Rng, lines: u64, kind: GeneratorKind, k: u64, rf: f64, streams: u64 }
impl RequestGenerator {
    pub fn new(spec: &GeneratorSpec, org: &Organisation, _e: Box<dyn Fn(&DramAddress) -> u64 + Send>) -> Result<Self> {
        Ok(RequestGenerator { left: spec.requests, rng: rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed), lines: org.capacity_bytes() / 64, kind: spec.kind, k: 0, rf: spec.read_fraction.unwrap_or(if spec.kind == GeneratorKind::Mix { 2.0 / 3.0 } else { 1.0 }), streams: spec.streams.unwrap_or(8) as u64 })
    }
}
impl TraceSource for RequestGenerator {
    fn next_request(&mut self) -> Result<Option<DramRequest>> {
        if self.left == 0 { return Ok(None); }
        self.left -= 1; self.k += 1;
        let line = match self.kind { GeneratorKind::Stream => { let s = self.k % self.streams; s * (self.lines / self.streams) + self.k / self.streams } _ => self.rng.gen_range(0..self.lines) };
        let is_write = self.rf < 1.0 && self.rng.gen::<f64>() >= self.rf;
        Ok(Some(DramRequest { addr: line * 64, is_write, arrival: None }))
    }
}
