"""Results files with one section per CPU vendor (and mode): a run rewrites only its own section, so the
numbers of one machine family stay next to the other's (bench/RESULTS.md, bench/LLM_RESULTS.md). A CPU
without AVX-512 (AMD Zen 3, Intel client cores) has a section of its own: its kernels are other code
(``relax_mlir/lowering/vectors.py``)."""

from __future__ import annotations

from pathlib import Path

VENDORS = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}


def _cpuinfo(key: str) -> str:
    """The first value of field ``key`` in /proc/cpuinfo ("" when there is none or no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == key:
            return value.strip()
    return ""


def cpu_vendor() -> str:
    """This machine's CPU vendor (``AMD``, ``Intel``, else /proc/cpuinfo's ``vendor_id`` or ``unknown``)."""
    vendor = _cpuinfo("vendor_id")
    return VENDORS.get(vendor, vendor or "unknown")


def machine_family() -> str:
    """This machine's section: its vendor (``cpu_vendor``), with ``AVX2`` after it on a CPU without AVX-512."""
    vendor = cpu_vendor()
    return vendor if "avx512f" in _cpuinfo("flags").split() else f"{vendor} AVX2"


def markers(key: str) -> tuple[str, str]:
    """The comments that open and close section ``key`` (a vendor, e.g. ``AMD``, or ``AMD under load``)."""
    return f"<!-- results: {key} begin -->", f"<!-- results: {key} end -->"


def merge_section(old: str, section: str, key: str, header: list[str], notes_marker: str = "") -> str:
    """The text ``old`` with section ``key`` replaced by ``section`` (or added after the other sections;
    ``header`` starts a new file); the other sections, and anything after ``notes_marker``, are kept."""
    body, marker, notes = old.partition(notes_marker) if notes_marker else (old, "", "")
    begin, end = markers(key)
    block = f"{begin}\n{section.rstrip()}\n{end}\n"
    if begin in body and end in body:
        head, _, rest = body.partition(begin)
        body = head + block + rest.partition(end)[2].lstrip("\n")
    else:
        body = (body if body.strip() else "\n".join(header)).rstrip() + "\n\n" + block
    return body.rstrip() + "\n" + (f"\n{notes_marker}{notes}" if marker else "")
