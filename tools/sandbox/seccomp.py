"""seccomp: the system-call filter the landlock backend installs in its child, as a hand-built BPF program.

Like `landlock.py`, this file is also source for the child (imports only `ctypes`, `os`, `struct`).
`install(app_pid)` makes this process and its descendants unable to: create sockets other than
AF_UNIX (no TCP/UDP/raw/netlink/packet), ptrace or read another process's memory, mount, unshare,
setns, chroot or pivot_root, clone into new namespaces, use io_uring (it would bypass this filter),
keyrings, bpf, perf events, userfaultfd, kernel modules, kexec, reboot, swap, clocks, file handles
(open_by_handle_at), change resource limits or priorities (reading limits works; only the parent
sets them, so it may leave a hard limit open and raise the soft one later), or signal, reschedule or
migrate process groups other than their own and the app's pid. setsid() and
setpgid() succeed without effect, so every process the call starts stays in the call's process group
and dies with it. Other architectures than x86_64 are refused (fail closed): the table is x86_64's.
"""

import ctypes
import os
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_OFF_NR, _OFF_ARCH, _OFF_ARG0, _OFF_ARG2_LO, _OFF_ARG2_HI = 0, 4, 16, 32, 36
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_EPERM, _ENOSYS = 1, 38
_AF_UNIX = 1
_CLONE_NEW_ANY = 0x7E020080  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME

# x86_64 numbers.
_SOCKETS = (41, 53)  # socket, socketpair: AF_UNIX only
_CLONE, _CLONE3 = 56, 435
_NO_EFFECT = (112, 109)  # setsid, setpgid
_PID_FIRST = (62, 200, 234, 129, 297, 434,  # kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_open
              203, 144, 142, 314, 256, 279)  # sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr, migrate_pages, move_pages
_PRLIMIT64 = 302  # reading a limit (no new value) only: the call's limits are the parent's to set
_SETRLIMIT = 160
_DENIED = (
    101, 310, 311, 438,  # ptrace, process_vm_readv, process_vm_writev, pidfd_getfd
    165, 166, 155, 161, 272, 308,  # mount, umount2, pivot_root, chroot, unshare, setns
    428, 429, 430, 431, 432, 433, 442,  # open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr
    425, 426, 427,  # io_uring_setup, io_uring_enter, io_uring_register
    248, 249, 250, 321, 298, 323,  # add_key, request_key, keyctl, bpf, perf_event_open, userfaultfd
    175, 176, 313, 246, 320, 169,  # init_module, delete_module, finit_module, kexec_load, kexec_file_load, reboot
    167, 168, 163, 164, 227, 159,  # swapon, swapoff, acct, settimeofday, clock_settime, adjtimex
    303, 304, 179, 103, 172, 173,  # name_to_handle_at, open_by_handle_at, quotactl, syslog, iopl, ioperm
    _SETRLIMIT, 141, 251,  # setrlimit, setpriority (could renice the app), ioprio_set
    312, 300, 153, 424, 440,  # kcmp, fanotify_init, vhangup, pidfd_send_signal, process_madvise
)


def _program(app_pid: int, pgid: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) with jump targets resolved (labels are strings while building)."""
    ops: list[tuple | str] = [(_LD_W_ABS, 0, 0, _OFF_ARCH), (_JEQ, 0, "kill", _AUDIT_ARCH_X86_64),
                        (_LD_W_ABS, 0, 0, _OFF_NR), (_JGE, "eperm", 0, _X32_BIT)]
    ops += [(_JEQ, "socket", 0, nr) for nr in _SOCKETS]
    ops += [(_JEQ, "clone", 0, _CLONE), (_JEQ, "enosys", 0, _CLONE3)]  # clone3: libc falls back to clone
    ops += [(_JEQ, "no_effect", 0, nr) for nr in _NO_EFFECT]
    ops += [(_JEQ, "pid", 0, nr) for nr in _PID_FIRST]
    ops += [(_JEQ, "prlimit", 0, _PRLIMIT64)]
    ops += [(_JEQ, "eperm", 0, nr) for nr in _DENIED]
    ops += [(_RET, 0, 0, _RET_ALLOW)]
    ops += ["socket", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, "allow", "eperm", _AF_UNIX)]
    ops += ["clone", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JSET, "eperm", "allow", _CLONE_NEW_ANY)]
    # The first argument is a pid: 0 and -pgid are the call's own group; -1 and other groups are refused,
    # and so is the app (signals to other processes are also scoped by Landlock ABI >= 6).
    ops += ["pid", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, "allow", 0, 0), (_JEQ, "allow", 0, (-pgid) & 0xFFFFFFFF),
            (_JSET, "eperm", 0, 0x80000000), (_JEQ, "eperm", "allow", app_pid)]
    ops += ["prlimit", (_LD_W_ABS, 0, 0, _OFF_ARG2_LO), (_JEQ, 0, "eperm", 0), (_LD_W_ABS, 0, 0, _OFF_ARG2_HI),
            (_JEQ, "allow", "eperm", 0)]
    ops += ["allow", (_RET, 0, 0, _RET_ALLOW), "eperm", (_RET, 0, 0, _RET_ERRNO | _EPERM),
            "enosys", (_RET, 0, 0, _RET_ERRNO | _ENOSYS), "no_effect", (_RET, 0, 0, _RET_ERRNO | 0),
            "kill", (_RET, 0, 0, _RET_KILL_PROCESS)]
    labels: dict[str, int] = {}
    code: list[tuple] = []
    for op in ops:
        if isinstance(op, str):
            labels[op] = len(code)
        else:
            code.append(op)
    resolved = []
    for i, (c, jt, jf, k) in enumerate(code):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        if not (0 <= jt <= 255 and 0 <= jf <= 255):
            raise ValueError("seccomp program too long for its jumps")
        resolved.append((c, jt, jf, k))
    return resolved


def install(app_pid: int) -> None:
    """Install the filter on this process (inherited by every child); raise OSError if it cannot be."""
    if os.uname().machine != "x86_64":
        raise OSError(_ENOSYS, f"the seccomp filter is written for x86_64, not {os.uname().machine}")
    code = _program(app_pid, os.getpgrp())
    blob = b"".join(struct.pack("=HBBI", c, jt, jf, k) for c, jt, jf, k in code)
    filters = ctypes.create_string_buffer(blob, len(blob))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = _Prog(len(code), ctypes.cast(filters, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
