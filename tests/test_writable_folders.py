"""Default folders move to a per-user cache when the app folder is read-only (a Space, a system install)."""

from __future__ import annotations

from pathlib import Path

import config
from config import Settings


def _defaults(monkeypatch) -> None:
    for name in config.WRITABLE_DEFAULTS:
        monkeypatch.delenv(name, raising=False)  # the suite's conftest points them at tmp_path


def _read_only_root(monkeypatch, tmp_path: Path) -> Path:
    """The app folder (config.PROJECT_ROOT) treated as read-only, as on a Space run as uid 1000."""
    _defaults(monkeypatch)
    real = config._can_write
    monkeypatch.setattr(config, "_can_write", lambda folder: not folder.is_relative_to(config.PROJECT_ROOT)
                        and real(folder))
    return config.PROJECT_ROOT


def test_defaults_stay_in_a_writable_app_folder(monkeypatch):
    _defaults(monkeypatch)
    monkeypatch.setattr(config, "_can_write", lambda folder: True)
    assert Settings(_env_file=None).OUTPUT_DIR == config.PROJECT_ROOT / "runs"


def test_a_read_only_app_folder_sends_defaults_to_the_home_cache(tmp_path, monkeypatch):
    _read_only_root(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    s = Settings(_env_file=None)
    cache = tmp_path / "home" / ".cache" / config.APP_CACHE_NAME
    assert (cache / "runs", cache / "rag_index", cache / "gaia") == (s.OUTPUT_DIR, s.RAG_INDEX_DIR, s.GAIA_CACHE_DIR)


def test_without_a_writable_home_the_fallback_is_per_user_in_temp(tmp_path, monkeypatch):
    app = _read_only_root(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(app / "nohome"))  # inside the read-only folder
    monkeypatch.setattr(config.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    out = Settings(_env_file=None).OUTPUT_DIR
    assert out == tmp_path / "tmp" / f"{config.APP_CACHE_NAME}-{config.os.getuid()}" / "runs"


def test_an_explicit_folder_is_kept_as_given(tmp_path, monkeypatch):
    app = _read_only_root(monkeypatch, tmp_path)
    monkeypatch.setenv("OUTPUT_DIR", str(app / "mine"))
    assert app / "mine" == Settings(_env_file=None).OUTPUT_DIR


def test_a_shipped_read_only_index_is_still_read(tmp_path):
    shipped = tmp_path / "data" / "rag_index"
    shipped.mkdir(parents=True)
    (shipped / "index.faiss").write_bytes(b"x")
    shipped.chmod(0o500)
    try:
        assert config.writable_folder(shipped, "rag_index") in (shipped,)
    finally:
        shipped.chmod(0o700)


def test_can_write_follows_the_nearest_existing_parent(tmp_path):
    assert config._can_write(tmp_path / "not" / "yet")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    try:
        assert config._can_write(ro / "x") is (config.os.getuid() == 0)
    finally:
        ro.chmod(0o700)
