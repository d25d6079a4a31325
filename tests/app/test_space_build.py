"""The Space's build, as its builder runs it: one `pip install -r requirements.txt gradio[oauth,mcp]==<sdk_version>`.

The builder never reads the Makefile or the Dockerfile, so requirements.txt alone must bring the CPU torch
wheel (PyPI's torch pulls ~2 GB of `nvidia-*` CUDA wheels and triton), and the card's `sdk_version` must be
the `gradio==` pin (a drift fails the build with ResolutionImpossible).

Resolved offline: pip itself (`--dry-run --report`, isolated from this machine's pip config) over two local
package indexes shaped like the real ones — a PyPI double whose torch 2.13.0 wheel requires the CUDA wheels
(as PyPI's manylinux wheel does) and a CPU-index double holding `torch-2.13.0+cpu`; every other pin is a
dependency-free stub wheel of its exact name and version.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^\s;#]+)")
CUDA_DEPS = ("nvidia-cublas-cu12==12.8.4.1", "nvidia-cudnn-cu12==9.10.2.21", "triton==3.5.0")
"""What PyPI's torch manylinux wheel requires on Linux (a sample of its Requires-Dist)."""


def _requirement_lines(path: Path) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.split("#", 1)[0].strip()]


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in _requirement_lines(path):
        if (found := PIN.match(line)) is not None:
            pins[found.group(1).lower().replace("_", "-")] = found.group(3)
    return pins


def card_sdk_version() -> str:
    """`sdk_version` from the README's Space card (the YAML block at its top)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    card = text.split("---", 2)[1]
    found = re.search(r"^sdk_version:\s*['\"]?([^'\"\s]+)", card, re.MULTILINE)
    assert found, "the README card has no sdk_version"
    return found.group(1)


def _wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = (), extras: tuple[str, ...] = ()) -> None:
    """A minimal valid wheel: METADATA (with Requires-Dist / Provides-Extra), WHEEL and RECORD."""
    dist = name.replace("-", "_")
    project = folder / name.lower().replace("_", "-")
    project.mkdir(parents=True, exist_ok=True)
    info = f"{dist}-{version}.dist-info"
    meta = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}"]
    meta += [f"Provides-Extra: {e}" for e in extras] + [f"Requires-Dist: {r}" for r in requires]
    with zipfile.ZipFile(project / f"{dist}-{version}-py3-none-any.whl", "w") as whl:
        whl.writestr(f"{info}/METADATA", "\n".join(meta) + "\n")
        whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{info}/RECORD", "")
    links = "".join(f'<a href="{w.name}">{w.name}</a>\n' for w in sorted(project.glob("*.whl")))
    (project / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n", encoding="utf-8")


def _indexes(tmp: Path, pins: dict[str, str], sdk: str) -> tuple[Path, Path]:
    pypi, cpu = tmp / "pypi", tmp / "cpu"
    for name, version in pins.items():
        if name not in ("torch", "gradio"):
            _wheel(pypi, name, version)
    _wheel(pypi, "gradio", sdk, extras=("oauth", "mcp"))
    torch_version = pins["torch"].split("+", 1)[0]
    _wheel(pypi, "torch", torch_version, requires=CUDA_DEPS)
    for dep in CUDA_DEPS:
        name, version = dep.split("==")
        _wheel(pypi, name, version)
    _wheel(cpu, "torch", f"{torch_version}+cpu")
    return pypi, cpu


def builder_resolution(requirements: Path, tmp: Path) -> dict[str, str]:
    """What the builder's pip command would install: {name: version}, from pip's own --report."""
    pins = _pins(requirements)
    pypi, cpu = _indexes(tmp, pins, card_sdk_version())
    local = tmp / "requirements.txt"  # the CPU index line pointed at its double; nothing else changed
    local.write_text(requirements.read_text(encoding="utf-8").replace(CPU_INDEX, cpu.as_uri()), encoding="utf-8")
    report = tmp / "report.json"
    cmd = [sys.executable, "-m", "pip", "--isolated", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--disable-pip-version-check", "--index-url", pypi.as_uri(), "--report", str(report),
           "-r", str(local), f"gradio[oauth,mcp]=={card_sdk_version()}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in installs}


def test_the_card_sdk_version_is_the_gradio_pin():
    assert _pins(ROOT / "requirements.txt")["gradio"] == card_sdk_version()


def test_requirements_name_the_cpu_index_and_the_cpu_wheel():
    lines = _requirement_lines(ROOT / "requirements.txt")
    assert f"--extra-index-url {CPU_INDEX}" in lines
    assert _pins(ROOT / "requirements.txt")["torch"].endswith("+cpu")


def test_makefile_and_dockerfile_install_torch_from_requirements_only():
    for name in ("Makefile", "Dockerfile"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "-r requirements.txt" in text, name
        assert not re.search(r"pip install[^\n]*\btorch==", text), f"{name} pins torch apart from requirements.txt"


def test_the_builders_pip_command_gets_the_cpu_torch_and_no_cuda(tmp_path):
    resolved = builder_resolution(ROOT / "requirements.txt", tmp_path)
    assert resolved["torch"].endswith("+cpu"), resolved["torch"]
    assert not [n for n in resolved if n.startswith("nvidia-") or n == "triton"]
    assert resolved["gradio"] == card_sdk_version()


def test_a_plain_torch_pin_would_bring_cuda(tmp_path):
    """The check above can fail: the old requirements (no index line, plain pin) resolve to the CUDA build."""
    old = tmp_path / "old.txt"
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    old.write_text(text.replace(f"--extra-index-url {CPU_INDEX}\n", "").replace("+cpu", ""), encoding="utf-8")
    (tmp_path / "build").mkdir()
    resolved = builder_resolution(old, tmp_path / "build")
    assert not resolved["torch"].endswith("+cpu") and "triton" in resolved

