//! The memory system: address mapping plus one controller per channel.
