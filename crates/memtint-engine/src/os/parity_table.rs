//! A GF(2)-linear function of address bits (bit i of the value is the parity of `addr & masks[i]`,
//! how XOR address mappings define bank and channel ids), evaluated by byte lookup tables.
//!
//! The driver asks a read's global bank id on every DRAM read (bank-level parallelism); without
//! POPCNT in the baseline x86-64 target, one parity per mask costs about a dozen instructions. A
//! linear function is the XOR of its values on each address byte, so one 256-entry table per
//! byte that any mask touches gives the value in a load and an XOR per byte.

/// Value of `masks` on `addr` bit by bit: the reference the tables are built from.
#[inline]
pub fn eval_parity(masks: &[u64], addr: u64) -> u32 {
    masks.iter().enumerate().fold(0, |v, (i, &m)| v | ((addr & m).count_ones() & 1) << i)
}

#[derive(Clone, Debug)]
pub struct ParityTable {
    /// (shift of the byte, the function's value for each value of that byte); only bytes some
    /// mask touches.
    bytes: Vec<(u32, Box<[u32; 256]>)>,
}

impl ParityTable {
    /// At most 32 masks (the value is a `u32`).
    pub fn new(masks: &[u64]) -> Self {
        debug_assert!(masks.len() <= 32);
        let union = masks.iter().fold(0u64, |u, &m| u | m);
        let bytes = (0..8u32)
            .filter(|k| union >> (8 * k) & 0xff != 0)
            .map(|k| {
                let shift = 8 * k;
                let mut table = Box::new([0u32; 256]);
                for (v, slot) in table.iter_mut().enumerate() {
                    *slot = eval_parity(masks, (v as u64) << shift);
                }
                (shift, table)
            })
            .collect();
        ParityTable { bytes }
    }

    #[inline]
    pub fn eval(&self, addr: u64) -> u32 {
        self.bytes.iter().fold(0, |v, (shift, table)| v ^ table[(addr >> shift) as usize & 0xff])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn tables_agree_with_the_bitwise_parity() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut next = || rng.gen::<u64>();
        for _ in 0..50 {
            // 1-8 masks of random bits, some spanning bytes (XOR hashes over row bits).
            let n = (next() % 8 + 1) as usize;
            let masks: Vec<u64> = (0..n).map(|_| next() & next() & next()).collect();
            let t = ParityTable::new(&masks);
            for _ in 0..200 {
                let a = next();
                assert_eq!(t.eval(a), eval_parity(&masks, a), "masks {masks:x?}, addr {a:#x}");
            }
        }
        // No masks: the value is always 0.
        assert_eq!(ParityTable::new(&[]).eval(u64::MAX), 0);
        // The top byte alone.
        let t = ParityTable::new(&[1 << 63, 3 << 62]);
        assert_eq!(t.eval(1 << 63), 0b11);
        assert_eq!(t.eval(3 << 62), 0b01);
    }
}
