//! Page colours derived from the address mapping: which physical-address bits the operating
//! system controls (those at or above the page offset), what they index (DRAM channel, rank and
//! bank; LLC set), the colour spaces built from them, and the exact reach of a set of colours.
//! Implements BPM §2.3 (bank colours, XOR colours), BPM §2.6 (channel colours) and HVR §2.1-2.2
//! (B-, C- and O-bits, the (i, j, k) family).

use super::parity_table::{eval_parity as eval, ParityTable};
use crate::error::{Error, Result};
use crate::mapping::{AddressMapping, Field};
use serde::Serialize;
use std::ops::Range;

/// Largest colour space: the buddy allocator keeps free lists per colour and order, so the
/// number of colours stays small (2^16 lists per order at most).
pub const MAX_COLOUR_FUNCTIONS: usize = 16;

/// Largest target of a reach query, in bits (the reach is collected in a 2^bits bitmap).
const MAX_REACH_BITS: usize = 24;

/// A GF(2)-linear function of physical-address bits: its value for an address is the parity of
/// `addr & mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColourFunction {
    mask: u64,
}

impl ColourFunction {
    pub fn new(mask: u64) -> Self {
        ColourFunction { mask }
    }

    pub fn single(bit: u32) -> Self {
        ColourFunction { mask: 1 << bit }
    }

    pub fn mask(self) -> u64 {
        self.mask
    }

    #[inline]
    pub fn value(self, addr: u64) -> u32 {
        (addr & self.mask).count_ones() & 1
    }

    /// The address bits XORed, ascending.
    pub fn bits(self) -> Vec<u32> {
        (0..64).filter(|b| self.mask >> b & 1 == 1).collect()
    }

    /// "b13" or "b13^b17".
    pub fn label(self) -> String {
        self.bits().iter().map(|b| format!("b{b}")).collect::<Vec<_>>().join("^")
    }

    fn lowest_bit(self) -> u32 {
        self.mask.trailing_zeros()
    }
}

/// An ordered list of colour functions. The colour of an address is the integer whose bit i is
/// the value of function i.
#[derive(Clone, Debug)]
pub struct ColourSpace {
    name: String,
    functions: Vec<ColourFunction>,
}

impl ColourSpace {
    /// Functions are kept in the order given; at most [`MAX_COLOUR_FUNCTIONS`].
    pub fn new(name: &str, functions: Vec<ColourFunction>) -> Result<Self> {
        if functions.len() > MAX_COLOUR_FUNCTIONS {
            return Err(Error::config(
                "os",
                format!("colour space '{name}' has {} colour bits; at most {MAX_COLOUR_FUNCTIONS} are supported", functions.len()),
            ));
        }
        Ok(ColourSpace { name: name.to_string(), functions })
    }

    /// One colour: every frame has colour 0 (the uncoloured baseline).
    pub fn uncoloured() -> Self {
        ColourSpace { name: "none".to_string(), functions: Vec::new() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn functions(&self) -> &[ColourFunction] {
        &self.functions
    }

    /// Number of colours, 2^(number of functions).
    pub fn count(&self) -> u32 {
        1 << self.functions.len()
    }

    #[inline]
    pub fn colour_of(&self, addr: u64) -> u32 {
        self.functions.iter().enumerate().fold(0, |c, (i, f)| c | f.value(addr) << i)
    }

    /// An error naming the space unless `colour` is one of its colours.
    pub fn check_colour(&self, colour: u32) -> Result<()> {
        if colour < self.count() {
            return Ok(());
        }
        Err(Error::config(
            "os.colours",
            format!("colour {colour} does not exist: the {} colour space has {} colours (0-{})", self.name, self.count(), self.count() - 1),
        ))
    }

    /// "bank: 32 colours from b13, b14, b15, b21, b22 (colour bit 0 first)".
    pub fn describe(&self) -> String {
        if self.functions.is_empty() {
            return format!("{}: 1 colour (no colour bits)", self.name);
        }
        format!(
            "{}: {} colours from {} (colour bit 0 first)",
            self.name,
            self.count(),
            self.functions.iter().map(|f| f.label()).collect::<Vec<_>>().join(", ")
        )
    }
}

/// A coordinate bit the OS cannot choose per page: some of its address bits lie below the page
/// offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotPageControllable {
    pub field: &'static str,
    /// The coordinate bit within the field, LSB = 0.
    pub bit: usize,
    pub address_bits: Vec<u32>,
    /// True when every address bit is below the offset; false when it mixes bits below and above.
    pub wholly_below: bool,
}

/// Banks, channels and LLC sets that frames of some colours can map to, computed exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ColourReach {
    /// Global bank ids: ((channel * ranks + rank) * bank_groups + bank_group) * banks + bank.
    pub banks: Vec<u32>,
    pub channels: Vec<u32>,
    pub llc_sets: Vec<u32>,
}

/// Which address bits can colour pages on a machine, and what each indexes: the analysis every
/// colour space and reach query starts from.
#[derive(Clone, Debug)]
pub struct ColourBits {
    mapping_name: String,
    page_shift: u32,
    capacity_bits: u32,
    llc_set_bits: Range<u32>,
    excluded: Vec<u32>,
    channel: Vec<ColourFunction>,
    rank: Vec<ColourFunction>,
    /// Rank, bank-group and bank coordinate bits the OS controls.
    bank: Vec<ColourFunction>,
    /// LLC set-index bits at or above the page offset, not excluded.
    llc: Vec<u32>,
    b_bits: Vec<u32>,
    c_bits: Vec<u32>,
    o_bits: Vec<u32>,
    not_controllable: Vec<NotPageControllable>,
    /// Global bank id as linear functions, LSB first: bank, bank group, rank, channel.
    bank_id: Vec<u64>,
    /// `bank_id` as byte tables, for the per-read lookups.
    bank_id_table: ParityTable,
    channel_id: Vec<u64>,
    llc_set: Vec<u64>,
    /// Bank-id and channel offsets reachable by moving inside one page.
    in_page_bank_offsets: Vec<u32>,
    in_page_channel_offsets: Vec<u32>,
}

fn masks(terms: &[Vec<u32>]) -> Vec<u64> {
    terms.iter().map(|t| t.iter().fold(0u64, |m, &b| m | 1 << b)).collect()
}

fn bit_list(bits: &[u32]) -> String {
    if bits.is_empty() {
        return "none".to_string();
    }
    bits.iter().map(|b| format!("b{b}")).collect::<Vec<_>>().join(", ")
}

/// "4 KiB" for a page shift of 12.
pub fn page_size_text(page_shift: u32) -> String {
    let bytes = 1u64 << page_shift;
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// "0-7, 9, 12-13": a sorted colour list with runs collapsed.
pub fn colour_list_text(colours: &[u32]) -> String {
    let mut sorted = colours.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { format!("{}", sorted[i]) } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

/// Every value of `fs` reachable from addresses with some bits free: the span of the values of
/// the single free bits.
fn span_of(fs: &[u64], free_bits: Range<u32>) -> Vec<u32> {
    let mut span = vec![0u32];
    for b in free_bits {
        let v = eval(fs, 1 << b);
        if v != 0 && !span.contains(&v) {
            let more: Vec<u32> = span.iter().map(|s| s ^ v).collect();
            span.extend(more);
        }
    }
    span.sort_unstable();
    span
}

/// Exact image of `{addr in [0, 2^capacity_bits) : colour(addr) = c}` under the linear map
/// `targets`, united over `colours`, as a sorted list.
///
/// Every address bit contributes one vector (colour part high, target part low) to the image of
/// the combined map; with the basis in echelon form (pivot = highest bit), basis vectors whose
/// pivot lies in the target part span the targets reachable at colour 0, and the other vectors
/// give one particular target for each colour.
fn reach_of(colour_masks: &[u64], targets: &[u64], capacity_bits: u32, colours: &[u32]) -> Vec<u32> {
    let nt = targets.len();
    debug_assert!(nt <= MAX_REACH_BITS && colour_masks.len() <= MAX_COLOUR_FUNCTIONS);
    let mut pivots = [0u64; 64];
    for b in 0..capacity_bits {
        let mut v = (eval(colour_masks, 1 << b) as u64) << nt | eval(targets, 1 << b) as u64;
        while v != 0 {
            let p = 63 - v.leading_zeros() as usize;
            if pivots[p] == 0 {
                pivots[p] = v;
                break;
            }
            v ^= pivots[p];
        }
    }
    let target_mask = (1u64 << nt) - 1;
    let free: Vec<u64> = (0..nt).filter(|&p| pivots[p] != 0).map(|p| pivots[p] & target_mask).collect();
    let mut seen = vec![false; 1 << nt];
    for &c in colours {
        let want = (c as u64) << nt;
        let mut y = 0u64;
        let mut reachable = true;
        for p in (nt..64).rev() {
            if (want ^ y) >> p & 1 == 1 {
                if pivots[p] == 0 {
                    reachable = false;
                    break;
                }
                y ^= pivots[p];
            }
        }
        if !reachable {
            continue;
        }
        let mut t = y & target_mask;
        seen[t as usize] = true;
        for i in 1u64..1 << free.len() {
            t ^= free[i.trailing_zeros() as usize];
            seen[t as usize] = true;
        }
    }
    (0..seen.len() as u32).filter(|&t| seen[t as usize]).collect()
}

impl ColourBits {
    /// Analyse `mapping` for pages of `2^page_shift` bytes and an LLC whose set index is the
    /// address bits `llc_set_bits`; `excluded` bits are left out of the B/C/O classes and the LLC
    /// colour bits (HVR leaves out b13, which also indexes the private L2).
    pub fn new(mapping: &AddressMapping, llc_set_bits: Range<u32>, page_shift: u32, excluded: &[u32]) -> Result<Self> {
        let capacity_bits = mapping.capacity_bits();
        if page_shift >= capacity_bits {
            return Err(Error::config(
                "os.page_bytes",
                format!("a {} page is not smaller than the {}-bit address space", page_size_text(page_shift), capacity_bits),
            ));
        }
        // An empty range means no LLC (`cache.llc = "none"`): no LLC colours exist.
        if llc_set_bits.end > 64 || llc_set_bits.len() > MAX_REACH_BITS {
            return Err(Error::config(
                "llc_set_bits",
                format!("{}..{} is not a usable range of LLC set-index bits", llc_set_bits.start, llc_set_bits.end),
            ));
        }
        if let Some(&b) = excluded.iter().find(|&&b| b >= 64) {
            return Err(Error::config("os.exclude_bits", format!("bit {b} is not an address bit")));
        }

        let mut channel = Vec::new();
        let mut rank = Vec::new();
        let mut bank = Vec::new();
        let mut not_controllable = Vec::new();
        for field in [Field::Channel, Field::Rank, Field::BankGroup, Field::Bank] {
            for (i, term) in mapping.field_bits(field).into_iter().enumerate() {
                if term.iter().all(|&b| b >= page_shift) {
                    let f = ColourFunction::new(masks(std::slice::from_ref(&term))[0]);
                    match field {
                        Field::Channel => channel.push(f),
                        Field::Rank => {
                            rank.push(f);
                            bank.push(f)
                        }
                        _ => bank.push(f),
                    }
                } else {
                    let wholly_below = term.iter().all(|&b| b < page_shift);
                    not_controllable.push(NotPageControllable { field: field.name(), bit: i, address_bits: term, wholly_below });
                }
            }
        }
        for fs in [&mut channel, &mut rank, &mut bank] {
            fs.sort_by_key(|f| (f.lowest_bit(), f.mask()));
        }

        let is_excluded = |b: &u32| excluded.contains(b);
        let llc: Vec<u32> = llc_set_bits.clone().filter(|&b| b >= page_shift && b < capacity_bits && !is_excluded(&b)).collect();
        let bank_address_bits: Vec<u32> = {
            let m = bank.iter().fold(0u64, |m, f| m | f.mask());
            (0..64).filter(|b| m >> b & 1 == 1).collect()
        };
        let channel_address_bits = channel.iter().fold(0u64, |m, f| m | f.mask());
        let o_bits: Vec<u32> = bank_address_bits.iter().copied().filter(|b| llc.contains(b)).collect();
        let b_bits: Vec<u32> = bank_address_bits.iter().copied().filter(|b| !llc_set_bits.contains(b) && !is_excluded(b)).collect();
        let c_bits: Vec<u32> =
            llc.iter().copied().filter(|b| !bank_address_bits.contains(b) && channel_address_bits >> b & 1 == 0).collect();

        let mut bank_id = masks(&mapping.field_bits(Field::Bank));
        bank_id.extend(masks(&mapping.field_bits(Field::BankGroup)));
        bank_id.extend(masks(&mapping.field_bits(Field::Rank)));
        bank_id.extend(masks(&mapping.field_bits(Field::Channel)));
        let channel_id = masks(&mapping.field_bits(Field::Channel));
        let llc_set: Vec<u64> = llc_set_bits.clone().map(|b| 1u64 << b).collect();
        let in_page_bank_offsets = span_of(&bank_id, 0..page_shift);
        let in_page_channel_offsets = span_of(&channel_id, 0..page_shift);

        Ok(ColourBits {
            mapping_name: mapping.name().to_string(),
            page_shift,
            capacity_bits,
            llc_set_bits,
            excluded: excluded.to_vec(),
            channel,
            rank,
            bank,
            llc,
            b_bits,
            c_bits,
            o_bits,
            not_controllable,
            bank_id_table: ParityTable::new(&bank_id),
            bank_id,
            channel_id,
            llc_set,
            in_page_bank_offsets,
            in_page_channel_offsets,
        })
    }

    /// The same analysis with no bit excluded (what `os.exclude_bits` changes is the difference).
    pub fn without_exclusions(&self, mapping: &AddressMapping) -> Result<Self> {
        Self::new(mapping, self.llc_set_bits.clone(), self.page_shift, &[])
    }

    pub fn page_shift(&self) -> u32 {
        self.page_shift
    }

    pub fn capacity_bits(&self) -> u32 {
        self.capacity_bits
    }

    /// Bank-indexing address bits that do not index the LLC (HVR's B-bits), ascending.
    pub fn b_bits(&self) -> &[u32] {
        &self.b_bits
    }

    /// LLC-indexing page bits that index no bank or channel (C-bits), ascending.
    pub fn c_bits(&self) -> &[u32] {
        &self.c_bits
    }

    /// Single page bits that index both a bank coordinate and the LLC set (O-bits), ascending.
    pub fn o_bits(&self) -> &[u32] {
        &self.o_bits
    }

    /// LLC set-index bits the OS controls (at or above the page offset, not excluded).
    pub fn llc_bits(&self) -> &[u32] {
        &self.llc
    }

    /// Coordinate bits that mix in address bits below the page offset.
    pub fn not_controllable(&self) -> &[NotPageControllable] {
        &self.not_controllable
    }

    fn offset_text(&self) -> String {
        format!("the {} page offset", page_size_text(self.page_shift))
    }

    fn not_controllable_text(&self, n: &NotPageControllable) -> String {
        let term = n.address_bits.iter().map(|b| format!("b{b}")).collect::<Vec<_>>().join("^");
        let why = if n.wholly_below { "below".to_string() } else { "mixing bits below and above".to_string() };
        format!("{} bit {} ({term}): {why} {}", n.field, n.bit, self.offset_text())
    }

    /// Rank, bank-group and bank coordinate bits: BPM's bank colours (32 on the i7-860).
    pub fn bank_space(&self) -> Result<ColourSpace> {
        if self.bank.is_empty() {
            return Err(Error::config(
                "os.policy",
                format!(
                    "mapping {} has no bank or rank bit at or above {}: banks cannot be coloured",
                    self.mapping_name,
                    self.offset_text()
                ),
            ));
        }
        ColourSpace::new("bank", self.bank.clone())
    }

    /// Rank bits alone.
    pub fn rank_space(&self) -> Result<ColourSpace> {
        ColourSpace::new("rank", self.rank.clone())
    }

    /// Channel bits; an error when any channel bit is not page-controllable or there is one
    /// channel.
    pub fn channel_space(&self) -> Result<ColourSpace> {
        if let Some(n) = self.not_controllable.iter().find(|n| n.field == "channel") {
            let term = n.address_bits.iter().map(|b| format!("b{b}")).collect::<Vec<_>>().join("^");
            let how = if n.wholly_below { "below" } else { "partly below" };
            return Err(Error::config(
                "os.policy",
                format!(
                    "mapping {} selects the channel with {term}, {how} {}; use a mapping whose channel bit is above it, \
                     e.g. i7-860-bpm-plus",
                    self.mapping_name,
                    self.offset_text()
                ),
            ));
        }
        if self.channel.is_empty() {
            return Err(Error::config(
                "os.policy",
                format!("mapping {} has a single channel: there are no channels to partition", self.mapping_name),
            ));
        }
        ColourSpace::new("channel", self.channel.clone())
    }

    /// Channel and bank bits together: BPM+'s colours (64 on i7-860-bpm-plus).
    pub fn channel_bank_space(&self) -> Result<ColourSpace> {
        let mut fs = self.channel_space()?.functions;
        fs.extend(self.bank_space()?.functions);
        fs.sort_by_key(|f| (f.lowest_bit(), f.mask()));
        ColourSpace::new("channel+bank", fs)
    }

    /// Bank colours, plus channel colours when the channel is page-controllable.
    pub fn all_dram_space(&self) -> Result<ColourSpace> {
        match self.channel_space() {
            Ok(_) => self.channel_bank_space(),
            Err(_) => self.bank_space(),
        }
    }

    /// LLC set-index bits at or above the page offset.
    pub fn llc_space(&self) -> Result<ColourSpace> {
        ColourSpace::new("llc", self.llc.iter().map(|&b| ColourFunction::single(b)).collect())
    }

    /// Single address bits as colour functions, ascending.
    pub fn single_bit_space(&self, name: &str, bits: &[u32]) -> Result<ColourSpace> {
        let mut bits = bits.to_vec();
        bits.sort_unstable();
        bits.dedup();
        if let Some(&b) = bits.iter().find(|&&b| b < self.page_shift || b >= self.capacity_bits) {
            return Err(Error::config(
                "os",
                format!("colour bit b{b} is outside the page-frame bits b{}-b{}", self.page_shift, self.capacity_bits - 1),
            ));
        }
        ColourSpace::new(name, bits.into_iter().map(ColourFunction::single).collect())
    }

    /// HVR's (i, j, k) choice: i B-bits, j C-bits, k O-bits. B- and O-bits are taken from the
    /// highest down; C-bits from the lowest above the O-bits up, then from the highest below
    /// them. On the i7-860 this gives HVR Table 1 (B-VP: b22; Bank-Only-8: b15; C-VP: b16;
    /// Cache-Only: b16-18); C-bits under the O-bits (b12) also index the private caches, so they
    /// are used last.
    pub fn vertical_bits(&self, i: u32, j: u32, k: u32) -> Result<Vec<u32>> {
        let top_o = self.o_bits.iter().max().copied().unwrap_or(0);
        let mut c_order: Vec<u32> = self.c_bits.iter().copied().filter(|&b| b > top_o).collect();
        c_order.extend(self.c_bits.iter().rev().copied().filter(|&b| b <= top_o));
        let mut b_order = self.b_bits.clone();
        b_order.reverse();
        let mut o_order = self.o_bits.clone();
        o_order.reverse();
        let mut chosen = Vec::new();
        for (n, class, order) in [(i, "B-bits", &b_order), (j, "C-bits", &c_order), (k, "O-bits", &o_order)] {
            if n as usize > order.len() {
                let mut have = order.clone();
                have.sort_unstable();
                return Err(Error::config(
                    "os.vertical.bits",
                    format!(
                        "(i, j, k) = ({i}, {j}, {k}) asks for {n} {class} but mapping {} has {} ({})",
                        self.mapping_name,
                        order.len(),
                        bit_list(&have)
                    ),
                ));
            }
            chosen.extend_from_slice(&order[..n as usize]);
        }
        chosen.sort_unstable();
        Ok(chosen)
    }

    /// Global bank id as linear functions (mask i gives bit i): bank, bank group, rank, channel.
    pub fn bank_id_masks(&self) -> &[u64] {
        &self.bank_id
    }

    /// Channel id as linear functions (mask i gives bit i).
    pub fn channel_id_masks(&self) -> &[u64] {
        &self.channel_id
    }

    /// Bank-id offsets reachable inside one page (`[0]` when the page selects one bank).
    pub fn in_page_bank_offsets(&self) -> &[u32] {
        &self.in_page_bank_offsets
    }

    /// Channel offsets reachable inside one page.
    pub fn in_page_channel_offsets(&self) -> &[u32] {
        &self.in_page_channel_offsets
    }

    /// Global bank id of an address.
    #[inline]
    pub fn bank_id(&self, addr: u64) -> u32 {
        self.bank_id_table.eval(addr)
    }

    /// Global bank ids one frame covers (more than one when a bank or channel bit lies inside the
    /// page, e.g. the i7-860's channel bit 6).
    pub fn banks_of_frame(&self, frame_addr: u64) -> impl Iterator<Item = u32> + '_ {
        let base = self.bank_id(frame_addr);
        self.in_page_bank_offsets.iter().map(move |o| base ^ o)
    }

    /// Channel id of an address (0 on a one-channel machine).
    #[inline]
    pub fn channel_id(&self, addr: u64) -> u32 {
        eval(&self.channel_id, addr)
    }

    pub fn channels_of_frame(&self, frame_addr: u64) -> impl Iterator<Item = u32> + '_ {
        let base = eval(&self.channel_id, frame_addr);
        self.in_page_channel_offsets.iter().map(move |o| base ^ o)
    }

    /// Exactly which banks, channels and LLC sets frames of `colours` (of `space`) can map to.
    pub fn reach(&self, space: &ColourSpace, colours: &[u32]) -> Result<ColourReach> {
        for &c in colours {
            space.check_colour(c)?;
        }
        let cm: Vec<u64> = space.functions().iter().map(|f| f.mask()).collect();
        if self.bank_id.len() > MAX_REACH_BITS {
            return Err(Error::config("os", format!("{} bank-id bits are too many to enumerate", self.bank_id.len())));
        }
        Ok(ColourReach {
            banks: reach_of(&cm, &self.bank_id, self.capacity_bits, colours),
            channels: reach_of(&cm, &self.channel_id, self.capacity_bits, colours),
            llc_sets: reach_of(&cm, &self.llc_set, self.capacity_bits, colours),
        })
    }

    /// Frames of `colour`: all colours the space can produce hold the same number; others none.
    pub fn frames_of_colour(&self, space: &ColourSpace, colour: u32) -> u64 {
        let frame_bits = self.capacity_bits - self.page_shift;
        let cm: Vec<u64> = space.functions().iter().map(|f| f.mask() >> self.page_shift).collect();
        let rank = span_of(&cm, 0..frame_bits).len().trailing_zeros();
        if reach_of(&cm, &[], frame_bits, &[colour]).is_empty() {
            0
        } else {
            1u64 << (frame_bits - rank)
        }
    }

    /// A few lines for reports: which bits index banks, channels and LLC sets, the B/C/O classes
    /// and what the OS cannot control.
    pub fn describe(&self) -> String {
        let fl = |fs: &[ColourFunction]| {
            if fs.is_empty() {
                "none".to_string()
            } else {
                fs.iter().map(|f| f.label()).collect::<Vec<_>>().join(", ")
            }
        };
        let mut lines = vec![
            format!(
                "mapping {}, {} pages, LLC set bits b{}-b{}",
                self.mapping_name,
                page_size_text(self.page_shift),
                self.llc_set_bits.start,
                self.llc_set_bits.end - 1
            ),
            format!("bank colour bits (rank, bank group, bank): {}", fl(&self.bank)),
            format!("channel colour bits: {}", fl(&self.channel)),
            format!("LLC colour bits: {}", bit_list(&self.llc)),
            format!("B-bits (bank only): {}", bit_list(&self.b_bits)),
            format!("C-bits (cache only): {}", bit_list(&self.c_bits)),
            format!("O-bits (bank and cache): {}", bit_list(&self.o_bits)),
            format!("excluded: {}", bit_list(&self.excluded)),
        ];
        for n in &self.not_controllable {
            lines.push(format!("not page-controllable: {}", self.not_controllable_text(n)));
        }
        lines.join("\n")
    }

    /// The same facts as `describe`, as data.
    pub fn report(&self) -> ColourBitsReport {
        let labels = |fs: &[ColourFunction]| fs.iter().map(|f| f.label()).collect::<Vec<_>>();
        ColourBitsReport {
            mapping: self.mapping_name.clone(),
            page_bytes: 1 << self.page_shift,
            llc_set_bits: [self.llc_set_bits.start, self.llc_set_bits.end],
            bank: labels(&self.bank),
            channel: labels(&self.channel),
            rank: labels(&self.rank),
            llc: self.llc.clone(),
            b_bits: self.b_bits.clone(),
            c_bits: self.c_bits.clone(),
            o_bits: self.o_bits.clone(),
            excluded: self.excluded.clone(),
            not_page_controllable: self.not_controllable.iter().map(|n| self.not_controllable_text(n)).collect(),
        }
    }
}

/// [`ColourBits`] as a serialisable report.
#[derive(Clone, Debug, Serialize)]
pub struct ColourBitsReport {
    pub mapping: String,
    pub page_bytes: u64,
    /// [start, end) of the LLC set-index bits.
    pub llc_set_bits: [u32; 2],
    pub bank: Vec<String>,
    pub channel: Vec<String>,
    pub rank: Vec<String>,
    pub llc: Vec<u32>,
    pub b_bits: Vec<u32>,
    pub c_bits: Vec<u32>,
    pub o_bits: Vec<u32>,
    pub excluded: Vec<u32>,
    pub not_page_controllable: Vec<String>,
}
