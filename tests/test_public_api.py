import subprocess
import sys

import harnesskit as hk


def test_all_is_sorted_and_complete():
    assert hk.__all__ == sorted(hk.__all__, key=str)
    for name in hk.__all__:
        assert getattr(hk, name) is not None


def test_import_is_light_and_silent():
    code = (
        "import sys, io, contextlib\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):\n"
        "    import harnesskit\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'httpx', 'ipywidgets', 'tqdm') if m in sys.modules]\n"
        "print(repr(buf.getvalue()), heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert out.stdout.strip() == "'' []"
