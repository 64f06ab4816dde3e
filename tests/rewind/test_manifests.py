"""Pure logic of checkpoints: manifest parsing (every bad input costs that manifest only),
safe paths, the config key, which state a rewind restores, and the size cap."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.manifests import ABSENT, Change, FileState, Manifest
from invincat_server.runtime.checkpoints.planning import plan
from invincat_server.runtime.checkpoints.pruning import enforce_cap, storage_bytes
from invincat_server.runtime.checkpoints.store import CheckpointError, ObjectStore
from invincat_server.runtime.config import ConfigError, load_settings

BLOB = "a" * 64


def _raw(**changes: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "version": 1,
        "seq": 1,
        "kind": "turn",
        "message_id": "m1",
        "turn": 1,
        "created_at": "2026-01-01T00:00:00+00:00",
        "files": {"a.txt": {"before": {"blob": BLOB, "mode": 0o644}, "after": None}},
    }
    raw.update(changes)
    return raw


def test_a_good_manifest_round_trips() -> None:
    manifest = mf.parse(json.dumps(_raw()).encode(), "m")
    assert manifest.files["a.txt"].before == FileState(BLOB, 0o644)
    assert manifest.files["a.txt"].after == ABSENT
    assert mf.parse(json.dumps(manifest.to_json()).encode(), "m") == manifest


@pytest.mark.parametrize(
    "bad",
    [
        {"seq": "1"},
        {"seq": True},
        {"seq": 0},
        {"kind": "other"},
        {"turn": "2"},
        {"message_id": 5},
        {"files": "nope"},
        {"files": {"/etc/passwd": {"before": None}}},
        {"files": {"../out.txt": {"before": None}}},
        {"files": {"a\x00b": {"before": None}}},
        {"files": {".git/config": {"before": None}}},
        {"files": {"x" * 5000: {"before": None}}},
        {"files": {"a.txt": {"before": {"blob": "zz", "mode": 420}}}},
        {"files": {"a.txt": {"before": {"blob": BLOB, "mode": 10**9}}}},
        {"files": {"a.txt": {"before": {"blob": BLOB}}}},
        {"files": {"a.txt": {"before": [1]}}},
        {"version": 2},
        {"created_at": None},
    ],
)
def test_a_bad_manifest_is_named(bad: dict[str, object]) -> None:
    with pytest.raises(CheckpointError):
        mf.parse(json.dumps(_raw(**bad)).encode(), "checkpoint 1")


@pytest.mark.parametrize("data", [b"", b"\xff\xfe", b"[]", b"null", b"{" * 100_000])
def test_undecodable_manifests_are_named(data: bytes) -> None:
    with pytest.raises(CheckpointError):
        mf.parse(data, "checkpoint 1")


def test_one_bad_manifest_costs_that_manifest_only(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "home", tmp_path / "ws")
    good = Manifest(1, "turn", "m1", 1, mf.now(), {"a.txt": Change(ABSENT)})
    mf.save(store, "t_1", good)
    mf.manifest_path(store, "t_1", 2).write_text("{broken")
    linked = mf.manifest_path(store, "t_1", 3)
    linked.symlink_to(mf.manifest_path(store, "t_1", 1))
    loaded, problems = mf.load_all(store, "t_1")
    assert [m.seq for m in loaded] == [1]
    assert len(problems) == 2 and any("symbolic link" in p for p in problems)


def test_odd_thread_ids_get_safe_folder_names(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "home", tmp_path / "ws")
    for thread in ("../../etc", "a/b", ".", "", "x\x00y", "é" * 300):
        folder = store.thread_dir(thread)
        assert folder.parent == store.base / "threads" and "/" not in folder.name


def test_the_earliest_before_since_the_turn_is_restored(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    store = ObjectStore(tmp_path / "home", root)
    first, second, third = (store.put(text) for text in (b"v1\n", b"v2\n", b"v3\n"))
    (root / "a.txt").write_bytes(b"v3\n")
    manifests = [
        Manifest(
            1, "turn", "m1", 1, mf.now(), {"a.txt": Change(FileState(first), FileState(second))}
        ),
        Manifest(
            2, "turn", "m2", 2, mf.now(), {"a.txt": Change(FileState(second), FileState(third))}
        ),
    ]
    [to_first] = plan(store, "t", manifests, 1).files
    [to_second] = plan(store, "t", manifests, 2).files
    assert (to_first.target.digest, to_second.target.digest) == (first, second)
    assert not to_first.changed_by_hand and "+v2" in to_second.diff
    (root / "a.txt").write_bytes(b"mine\n")
    assert plan(store, "t", manifests, 2).conflicts == ["a.txt"]


def test_the_cap_prunes_oldest_first_but_never_the_last_turn_of_the_thread(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "home", tmp_path / "ws")
    for seq in range(1, 6):
        digest = store.put(os.urandom(10_000))
        manifest = Manifest(seq, "turn", f"m{seq}", seq, f"2026-01-0{seq}", {})
        manifest.files["a.txt"] = Change(FileState(digest))
        mf.save(store, "t_1", manifest)
    pruned = enforce_cap(store, 1, "t_1")
    assert [seq for _, seq in pruned] == [1, 2, 3, 4]
    assert mf.seqs(store, "t_1") == [5] and storage_bytes(store) > 10_000


@pytest.mark.parametrize("raw", ["0", "-5", "nan", "inf", "lots", "true"])
def test_a_bad_cap_is_a_config_error(raw: str, tmp_path: Path) -> None:
    env = {"INVINCAT_HOME": str(tmp_path), "INVINCAT_CHECKPOINTS_MAX_MB": raw}
    with pytest.raises(ConfigError, match="max_mb"):
        load_settings(env)


def test_the_cap_from_config_toml(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[checkpoints]\nmax_mb = 2\n")
    assert load_settings({"INVINCAT_HOME": str(tmp_path)}).checkpoints_max_bytes == 2 << 20
    (tmp_path / "config.toml").write_text("checkpoints = 3\n")
    with pytest.raises(ConfigError, match="table"):
        load_settings({"INVINCAT_HOME": str(tmp_path)})
