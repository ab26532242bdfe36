//! Independent timing checker: consumes the issued command stream and verifies every JEDEC
//! constraint from its own table. (filled in by the checker work)
