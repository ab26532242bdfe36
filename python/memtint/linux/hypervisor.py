"""Is this a virtual machine? In a guest, /proc/PID/pagemap gives guest-physical frame numbers,
which the hypervisor maps to host frames as it likes: colours computed from them do not select
real DRAM banks, channels or LLC sets. Every Linux command warns when a hypervisor is present."""

from __future__ import annotations


def detect_hypervisor() -> str | None:
    """A short description of the hypervisor evidence, or None on bare metal (as far as Linux tells)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags") and " hypervisor" in line:
                    return "the CPU reports the 'hypervisor' flag"
    except OSError:
        pass
    for path in ("/sys/hypervisor/type", "/sys/class/dmi/id/sys_vendor"):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().strip()
        except OSError:
            continue
        if path.endswith("type") and text:
            return f"/sys/hypervisor/type is '{text}'"
        if any(v in text for v in ("QEMU", "KVM", "VMware", "Xen", "Microsoft Corporation", "innotek", "Amazon EC2")):
            return f"the system vendor is '{text}'"
    return None


# Set in a coloured program's environment once the VM warning was given: libmemtint then does
# not repeat it in every process of the program (a shell pipeline printed it per child).
NOTED = "MEMTINT_HYPERVISOR_NOTED"


def vm_warning() -> str | None:
    """The warning the commands print in a virtual machine (None on bare metal)."""
    evidence = detect_hypervisor()
    if evidence is None:
        return None
    return (
        f"running in a virtual machine ({evidence}): frame numbers are guest-physical, so colours "
        "do not map to real DRAM banks, channels or LLC sets; the partition is exact in guest-physical "
        "terms only"
    )
