//! TEMPORARY stand-in (replaced by the real GF(2) mapping).
use crate::dram::{DramAddress, Organisation};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field { Channel, Rank, BankGroup, Bank, Row, Column }

#[derive(Clone, Debug)]
pub struct AddressMapping { name: String, bits: Vec<(Field, u32)>, capacity_bits: u32, offset_bits: u32 }

fn lg(x: u32) -> u32 { x.trailing_zeros() }

impl AddressMapping {
    pub fn from_layout(layout: &str, org: &Organisation) -> Result<Self> {
        let off = lg(org.bus_bytes() as u32);
        let burst = lg(org.burst_length);
        let mut bits = Vec::new();
        for _ in 0..burst { bits.push((Field::Column, 0)); }
        let codes: Vec<&str> = (0..layout.len() / 2).map(|i| &layout[2 * i..2 * i + 2]).collect();
        for code in codes.iter().rev() {
            let (f, n) = match *code {
                "Ch" => (Field::Channel, lg(org.channels)),
                "Ra" => (Field::Rank, lg(org.ranks)),
                "Ba" => { for _ in 0..lg(org.bank_groups) { bits.push((Field::BankGroup, 0)); } (Field::Bank, lg(org.banks_per_group)) }
                "Ro" => (Field::Row, lg(org.rows)),
                "Co" => (Field::Column, lg(org.columns) - burst),
                _ => return Err(Error::config("mapping", format!("bad layout {layout}"))),
            };
            for _ in 0..n { bits.push((f, 0)); }
        }
        Ok(AddressMapping { name: layout.into(), bits, capacity_bits: off + (lg(org.capacity_bytes() as u32 >> 0) ), offset_bits: off }.fix(org))
    }
    fn fix(mut self, org: &Organisation) -> Self { self.capacity_bits = 63 - org.capacity_bytes().leading_zeros(); self }
    pub fn from_toml(_t: &str, origin: &str, _o: &Organisation) -> Result<Self> { Err(Error::config(origin, "mapping files not supported yet")) }
    pub fn name(&self) -> &str { &self.name }
    pub fn capacity_bits(&self) -> u32 { self.capacity_bits }
    pub fn offset_bits(&self) -> u32 { self.offset_bits }
    pub fn decode(&self, addr: u64) -> DramAddress {
        let mut d = DramAddress::default();
        let mut cnt = [0u32; 6];
        for (i, (f, _)) in self.bits.iter().enumerate() {
            let b = ((addr >> (self.offset_bits as usize + i)) & 1) as u32;
            let k = *f as usize;
            let slot = match f { Field::Channel => &mut d.channel, Field::Rank => &mut d.rank, Field::BankGroup => &mut d.bank_group, Field::Bank => &mut d.bank, Field::Row => &mut d.row, Field::Column => &mut d.column };
            *slot |= b << cnt[k];
            cnt[k] += 1;
        }
        d
    }
    pub fn encode(&self, d: &DramAddress) -> u64 {
        let mut a = 0u64;
        let mut cnt = [0u32; 6];
        for (i, (f, _)) in self.bits.iter().enumerate() {
            let k = *f as usize;
            let v = match f { Field::Channel => d.channel, Field::Rank => d.rank, Field::BankGroup => d.bank_group, Field::Bank => d.bank, Field::Row => d.row, Field::Column => d.column };
            a |= (((v >> cnt[k]) & 1) as u64) << (self.offset_bits as usize + i);
            cnt[k] += 1;
        }
        a
    }
}
