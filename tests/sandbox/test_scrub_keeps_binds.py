"""The scrub between candidates keeps what the sandbox itself bound below /tmp (kstrata's sources or
virtual environment when they live under /tmp) and removes everything a candidate put among it. After
rt85's strict scrub a bind under /tmp could not be removed, the zygote ended after every candidate, and
no zygote was used twice (tests/sandbox run from a worktree under /tmp: 18 failed)."""

from __future__ import annotations

import os

from kstrata.sandbox import scrub


def test_mount_points_below_tmp_and_the_directories_to_them_are_kept(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text("22 1 0:20 / /tmp rw - tmpfs tmpfs rw\n"
                    "23 22 8:1 /tmp/lead/wt2/src /tmp/lead/wt2/src ro - ext4 /dev/vda ro\n"
                    "24 22 8:1 /x /tmp/a\\040b ro - ext4 /dev/vda ro\n"
                    "25 1 8:1 / /usr ro - ext4 /dev/vda ro\n")
    kept = scrub._mounted(("/tmp", "/dev/shm"), str(info))
    assert kept == {"/tmp/lead", "/tmp/lead/wt2", "/tmp/lead/wt2/src", "/tmp/a b"}


def test_what_a_candidate_put_beside_a_kept_path_goes_and_the_kept_ones_stay(tmp_path):
    root = str(tmp_path / "t")
    src = os.path.join(root, "lead", "wt2", "src")
    os.makedirs(src)
    with open(os.path.join(src, "kstrata.py"), "w") as f:
        f.write("# bound read-only in a sandbox: never entered\n")
    for junk in ("lead/evil", "lead/wt2/evil2", "other/deep/x"):
        os.makedirs(os.path.dirname(os.path.join(root, junk)), exist_ok=True)
        with open(os.path.join(root, junk), "w") as f:
            f.write("left by a candidate")
    os.chmod(os.path.join(root, "other"), 0o400)  # rt85: readable, not searchable
    keep = frozenset({os.path.join(root, "lead"), os.path.join(root, "lead", "wt2"), src})
    scrub._empty(root, keep)
    left = sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs)
    assert left == ["lead", "lead/wt2", "lead/wt2/src", "lead/wt2/src/kstrata.py"]
