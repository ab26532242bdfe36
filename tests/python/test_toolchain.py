"""`make`'s toolchain check: a Rust older than the locked dependencies need is refused with the
version memtint needs, before cargo fails on the lock file with a message about its format."""


def test_an_old_rust_is_refused_with_the_version_it_needs(make):
    done = make("toolchain", rustc=["rustc 1.75.0 (82e1608df 2023-12-21)"], timeout=60)
    assert done.returncode != 0
    assert "memtint needs Rust >= 1.88, found rustc 1.75.0" in done.stdout + done.stderr


def test_a_new_enough_rust_passes_the_toolchain_check(make):
    # 1.100 sorts after 1.88 as a version, not as text.
    done = make("toolchain", rustc=["rustc 1.100.0 (0000000 2030-01-01)"], timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
