//! The simplest prefetcher: on each demand miss, the next `degree` lines of the same 4 KB page
//! (Nehalem's adjacent-line and DCU next-line prefetchers are of this kind).

use super::prefetcher::{Prefetcher, PrefetcherConfig, PREFETCH_PAGE_BYTES};

pub struct NextLinePrefetcher {
    degree: u64,
    line_bytes: u64,
}

impl NextLinePrefetcher {
    pub fn new(cfg: &PrefetcherConfig, line_bytes: u32) -> Self {
        NextLinePrefetcher { degree: cfg.degree as u64, line_bytes: line_bytes as u64 }
    }
}

impl Prefetcher for NextLinePrefetcher {
    fn on_access(&mut self, line: u64, hit: bool, out: &mut Vec<u64>) {
        if hit {
            return;
        }
        let page_end = (line / PREFETCH_PAGE_BYTES + 1) * PREFETCH_PAGE_BYTES;
        out.extend((1..=self.degree).map(|k| line + k * self.line_bytes).take_while(|&l| l < page_end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::prefetcher::PrefetcherKind;

    #[test]
    fn a_miss_prefetches_the_next_lines_of_its_page_only() {
        let cfg = PrefetcherConfig { kind: PrefetcherKind::NextLine, degree: 3, ..Default::default() };
        let mut p = NextLinePrefetcher::new(&cfg, 64);
        let mut out = Vec::new();
        p.on_access(0x2000, true, &mut out);
        assert!(out.is_empty(), "hits do not trigger");
        p.on_access(0x2000, false, &mut out);
        assert_eq!(out, vec![0x2040, 0x2080, 0x20c0]);
        out.clear();
        p.on_access(0x2f80, false, &mut out);
        assert_eq!(out, vec![0x2fc0]);
    }
}
