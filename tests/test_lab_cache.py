"""The slow Fabric tests' costly folders (tests/fabric_hosts.lab_cache): one per stack, old stacks' removed.

Each is 1-3 GB; this machine's CI shares the disk with its sessions, and a suite run failed with "No space
left on device" once leftovers had filled it.
"""

from __future__ import annotations

import fcntl
import os
import time

from tests.fabric_hosts import STALE_AFTER_S, lab_cache


def _folder(root, name, age_s, now):
    d = root / name
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "wheel.whl").write_bytes(b"x" * 100)
    os.utime(d, (now - age_s, now - age_s))
    return d


def test_an_old_stacks_folder_is_removed_a_recent_or_locked_one_kept(tmp_path):
    now = time.time()
    old = _folder(tmp_path, "test-wheelhouse-aaaa", STALE_AFTER_S + 60, now)
    recent = _folder(tmp_path, "test-wheelhouse-bbbb", STALE_AFTER_S - 60, now)
    in_use = _folder(tmp_path, "test-wheelhouse-cccc", 10 * STALE_AFTER_S, now)
    other_kind = _folder(tmp_path, "test-remote-base-aaaa", 10 * STALE_AFTER_S, now)
    mine = _folder(tmp_path, "test-wheelhouse-dddd", 10 * STALE_AFTER_S, now)
    with open(tmp_path / "test-wheelhouse-cccc.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run of the suite on that stack
        got = lab_cache("test-wheelhouse", "dddd", root=tmp_path, now=now)
    assert got == mine and (mine / "sub" / "wheel.whl").exists()
    assert not old.exists() and not (tmp_path / "test-wheelhouse-aaaa.lock").exists()
    assert recent.exists() and in_use.exists() and other_kind.exists()
    assert mine.stat().st_mtime > now - 60  # marked as in use, so another stack's run keeps it a day


def test_a_new_stacks_folder_is_only_named_not_made(tmp_path):
    got = lab_cache("test-remote-base", "eeee", root=tmp_path)
    assert got == tmp_path / "test-remote-base-eeee" and not got.exists()  # its builder makes it when complete
