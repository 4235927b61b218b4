"""The CPU bandwidth probe's buffers stay bounded (the newcomer's suite had pytest
workers OOM-killed: 8x a reported 480 MiB L3 was two 3.75 GiB buffers per process)."""

from kstrata.measure.roofline import cpu_copy_bytes

MiB, GiB = 1 << 20, 1 << 30


def test_copy_buffers_are_4x_the_llc_within_256_mib_and_1_gib():
    assert cpu_copy_bytes(32 * MiB, available=16 * GiB) == 256 * MiB  # small caches: the floor
    assert cpu_copy_bytes(128 * MiB, available=16 * GiB) == 512 * MiB  # 4x the LLC
    assert cpu_copy_bytes(480 * MiB, available=16 * GiB) == GiB  # a VM's reported host L3: capped
    assert cpu_copy_bytes(None, available=16 * GiB) == 256 * MiB


def test_copy_buffers_leave_most_of_the_available_memory():
    assert cpu_copy_bytes(480 * MiB, available=2 * GiB) == 256 * MiB  # an eighth of what is free
    assert cpu_copy_bytes(480 * MiB, available=128 * MiB) == 64 * MiB
