"""Linear algebra over GF(2) on address masks (Python ints as bit vectors)."""

from __future__ import annotations

from typing import Iterable, Sequence


def parity(x: int) -> int:
    return x.bit_count() & 1


def bits(x: int) -> list[int]:
    out, i = [], 0
    while x:
        if x & 1:
            out.append(i)
        x >>= 1
        i += 1
    return out


def echelon(rows: Iterable[int]) -> dict[int, int]:
    """A reduced echelon basis of the rows' span, keyed by each row's pivot (its lowest bit);
    no row holds another's pivot."""
    basis: dict[int, int] = {}
    for r in rows:
        for p, b in basis.items():
            if r >> p & 1:
                r ^= b
        if r:
            p = (r & -r).bit_length() - 1
            for q in list(basis):
                if basis[q] >> p & 1:
                    basis[q] ^= r
            basis[p] = r
    return basis


def rank(rows: Iterable[int]) -> int:
    return len(echelon(rows))


def null_space(rows: Sequence[int], width: int, low: int = 0, columns: int | None = None) -> list[int]:
    """Masks m over bits [low, width) (and within `columns`, if given) with parity(m & r) = 0
    for every row."""
    keep = ((1 << width) - 1) & ~((1 << low) - 1)
    if columns is not None:
        keep &= columns
    basis = echelon(r & keep for r in rows)
    out = []
    for f in range(low, width):
        if f in basis or not keep >> f & 1:
            continue
        m = 1 << f
        for p, b in basis.items():
            if b >> f & 1:
                m |= 1 << p
        out.append(m)
    return out


def span(basis: Sequence[int]) -> list[int]:
    """Every nonzero element of the span (the basis is small: a machine's bank functions)."""
    out = [0]
    for b in basis:
        out += [x ^ b for x in out]
    return [x for x in out if x]


def lightest_basis(space: Sequence[int]) -> list[int]:
    """A basis of the span of `space` of least total weight: elements by weight, then by their
    bits, taken while independent."""
    chosen: list[int] = []
    for x in sorted(span(space), key=lambda v: (v.bit_count(), bits(v))):
        if rank(chosen + [x]) > len(chosen):
            chosen.append(x)
    return sorted(chosen, key=lambda v: bits(v))


def solve_duals(functions: Sequence[int], width: int) -> list[int]:
    """Per function i, a light address delta that flips function i and no other (bits taken
    lowest first, so a function's own bit is used where it has one)."""
    n = len(functions)
    basis: dict[int, tuple[int, int]] = {}  # pivot of a signature -> (signature, address bits)
    for b in range(width):
        sig = sum(parity(f >> b & 1) << j for j, f in enumerate(functions))
        mask = 1 << b
        for p in sorted(basis):
            s, m = basis[p]
            if sig >> p & 1:
                sig, mask = sig ^ s, mask ^ m
        if sig:
            basis[(sig & -sig).bit_length() - 1] = (sig, mask)
    out = []
    for j in range(n):
        target, mask = 1 << j, 0
        for p in sorted(basis):
            if target >> p & 1:
                s, m = basis[p]
                target, mask = target ^ s, mask ^ m
        if target:
            raise ValueError("the functions are not independent")
        out.append(mask)
    return out
