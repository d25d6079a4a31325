"""Landlock: the filesystem, TCP and signal confinement the landlock backend applies to its own child.

This file is also *source* for the child: the launcher prepends it (with `seccomp.py`) to the bootstrap
passed with `python -c`, so it imports only `ctypes`, `os` and `struct` and defines no names the
bootstrap uses. `restrict(read, write, files)` runs before any user code: afterwards the process and
everything it starts may read (and execute) only under `read`, read and write only under `write`, open
only the single `files` (read-only, or read-write for the ones marked `rw`). It cannot connect or
bind TCP, and cannot signal or reach abstract UNIX sockets of any process outside its own Landlock
domain (the app and its threads, other calls). That needs Landlock ABI >= 6 (Linux 6.12): on an older
kernel `restrict` refuses (a call there could signal the app's threads), and the backend is not used.
Needs no privilege (no_new_privs). Not restricted by Landlock: stat() of paths outside the rules
(names and sizes, not contents), connect() to pathname UNIX sockets and chmod/utime/xattr (both are
seccomp's, see `seccomp.py`).
"""

import ctypes
import os
import struct

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1

# Filesystem rights by the ABI that introduced them.
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # execute .. make_sym
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
MIN_ABI = 6  # signal and abstract-socket scoping


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _handled_fs(abi: int) -> int:
    rights = _FS_ABI1
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    if abi >= 5:
        rights |= _FS_IOCTL_DEV
    return rights


def _fail(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, f"landlock {what}: {os.strerror(err)}")


def restrict(read: list[str], write: list[str], files: list[str], rw_files: list[str]) -> int:
    """Confine this process (and its future children) to the given paths; return the ABI used.

    Raises OSError when Landlock is unavailable or a rule cannot be added: the caller must not run
    user code then (fail closed). Paths that do not exist are skipped.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = landlock_abi()
    if abi < MIN_ABI:
        raise OSError(38, f"Landlock ABI {abi} is below {MIN_ABI} (no signal scoping): Linux >= 6.12 is needed")
    fs = _handled_fs(abi)
    net = _NET_BIND_TCP | _NET_CONNECT_TCP
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    attr = struct.pack("=QQQ", fs, net, scoped)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        _fail("create_ruleset")
    file_rights = fs & (_FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV)
    rules = [(p, _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR) for p in read] + [(p, fs) for p in write]
    rules += [(p, _FS_READ_FILE) for p in files]
    rules += [(p, _FS_READ_FILE | _FS_WRITE_FILE | (fs & _FS_TRUNCATE)) for p in rw_files]
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= file_rights  # a rule on a file may carry file rights only
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, ctypes.c_uint32(0)) < 0:
                    _fail(f"add_rule {path}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("no_new_privs")
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) < 0:
            _fail("restrict_self")
    finally:
        os.close(ruleset)
    return abi
