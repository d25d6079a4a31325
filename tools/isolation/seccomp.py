"""seccomp: the system-call filter the landlock backend installs in its child, as a hand-built BPF program.

Like `landlock.py`, this file is also source for the child (imports only `ctypes`, `os`, `struct`).
`install(app_pid)` makes this process and its descendants unable to:
- create sockets: `socket()` is refused for every family (no TCP/UDP/raw/netlink/packet, and no
  AF_UNIX socket that could `connect()` to a host's pathname socket, which Landlock does not cover);
  only `socketpair(AF_UNIX, SOCK_STREAM)` works (asyncio's self-pipe, multiprocessing's duplex
  pipes): a connected pair cannot reach anything else;
- change file metadata: the chmod, utime and set/remove-xattr families succeed *without effect*
  (so `shutil.copy`/`copy2` keep working in the working directory, and no file of the app's uid
  can be made unreadable); the chown family is refused;
- keep anything after the call outside its working directory: System V IPC, POSIX message queues
  and memfd_create are refused (their objects would outlive the call or escape its limits);
- reach another process: ptrace, process_vm_*, pidfd_getfd/send_signal, kcmp are refused; signals
  (kill, tkill, tgkill, rt_*sigqueueinfo) and pidfd_open go only to 0 or the call's own process
  group by number, never to the app's pid or another group, and a positive target must pass
  Landlock's signal scope (ABI >= 6, required: the app's threads, other runs); scheduling,
  affinity, NUMA page moves and robust-list reads take only pid 0 (the calling thread itself);
  prlimit only reads the caller's own limits;
- mount, unshare, setns, chroot or pivot_root, clone into new namespaces, use io_uring (it would
  bypass this filter), keyrings, bpf, perf events, userfaultfd, kernel modules, kexec, reboot,
  swap, clocks, file handles (open_by_handle_at), change resource limits or priorities.
setsid() and setpgid() succeed without effect, so every process the call starts stays in the
call's process group and dies with it. Other architectures than x86_64 are refused (fail closed):
the table is x86_64's.
"""

import ctypes
import os
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET, _ALU_AND = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
_OFF_NR, _OFF_ARCH, _OFF_ARG0, _OFF_ARG0_HI, _OFF_ARG1, _OFF_ARG2_LO, _OFF_ARG2_HI = 0, 4, 16, 20, 24, 32, 36
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_EPERM, _ENOSYS = 1, 38
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF
_CLONE_NEW_ANY = 0x7E020080  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME

# x86_64 numbers.
_SOCKET, _SOCKETPAIR = 41, 53
_CLONE, _CLONE3 = 56, 435
_NO_EFFECT = (112, 109,  # setsid, setpgid
              90, 91, 268, 452,  # chmod, fchmod, fchmodat, fchmodat2
              132, 235, 261, 280,  # utime, utimes, futimesat, utimensat
              188, 189, 190, 197, 198, 199, 463, 466)  # set/remove xattr (path, l-, f-, -at)
_SIGNALS = (62, 200, 234, 129, 297, 434)  # kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_open
_SELF_ONLY = (203, 204, 144, 145, 142, 143, 314, 315,  # sched_{set,get}{affinity,scheduler,param,attr}
              148, 256, 279, 274)  # sched_rr_get_interval, migrate_pages, move_pages, get_robust_list
_PRLIMIT64 = 302  # reading the caller's own limit (pid 0, no new value) only: the call's limits are the parent's to set
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
    92, 93, 94, 260,  # chown, fchown, lchown, fchownat
    29, 30, 31, 64, 65, 66, 68, 69, 70, 71, 220,  # System V shm*, sem*, msg*, semtimedop
    240, 241, 242, 243, 244, 245, 319, 447,  # mq_open .. mq_getsetattr, memfd_create, memfd_secret
)


def _program(app_pid: int, pgid: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) with jump targets resolved (labels are strings while building)."""
    ops: list[tuple[int, int | str, int | str, int] | str] = [
        (_LD_W_ABS, 0, 0, _OFF_ARCH), (_JEQ, 0, "kill", _AUDIT_ARCH_X86_64),
        (_LD_W_ABS, 0, 0, _OFF_NR), (_JGE, "eperm", 0, _X32_BIT)]
    ops += [(_JEQ, "eperm", 0, _SOCKET), (_JEQ, "socketpair", 0, _SOCKETPAIR)]
    ops += [(_JEQ, "clone", 0, _CLONE), (_JEQ, "enosys", 0, _CLONE3)]  # clone3: libc falls back to clone
    ops += [(_JEQ, "no_effect", 0, nr) for nr in _NO_EFFECT]
    ops += [(_JEQ, "pid", 0, nr) for nr in _SIGNALS]
    ops += [(_JEQ, "self", 0, nr) for nr in _SELF_ONLY]
    ops += [(_JEQ, "prlimit", 0, _PRLIMIT64)]
    ops += [(_JEQ, "eperm", 0, nr) for nr in _DENIED]
    ops += [(_RET, 0, 0, _RET_ALLOW)]
    ops += ["socketpair", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, 0, "eperm", _AF_UNIX), (_LD_W_ABS, 0, 0, _OFF_ARG1),
            (_ALU_AND, 0, 0, _SOCK_TYPE_MASK), (_JEQ, "allow", "eperm", _SOCK_STREAM)]
    ops += ["clone", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JSET, "eperm", "allow", _CLONE_NEW_ANY)]
    # The first argument is a pid: 0 and -pgid are the call's own group; -1 and other groups are refused,
    # and so is the app (signals to other processes are also scoped by Landlock ABI >= 6).
    ops += ["pid", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, "allow", 0, 0), (_JEQ, "allow", 0, (-pgid) & 0xFFFFFFFF),
            (_JSET, "eperm", 0, 0x80000000), (_JEQ, "eperm", "allow", app_pid)]
    # pid 0 is the calling thread; the high half is checked too (a 64-bit pid argument of 1 << 32 is not 0).
    ops += ["self", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, 0, "eperm", 0), (_LD_W_ABS, 0, 0, _OFF_ARG0_HI),
            (_JEQ, "allow", "eperm", 0)]
    ops += ["prlimit", (_LD_W_ABS, 0, 0, _OFF_ARG0), (_JEQ, 0, "eperm", 0), (_LD_W_ABS, 0, 0, _OFF_ARG2_LO),
            (_JEQ, 0, "eperm", 0), (_LD_W_ABS, 0, 0, _OFF_ARG2_HI), (_JEQ, "allow", "eperm", 0)]
    ops += ["allow", (_RET, 0, 0, _RET_ALLOW), "eperm", (_RET, 0, 0, _RET_ERRNO | _EPERM),
            "enosys", (_RET, 0, 0, _RET_ERRNO | _ENOSYS), "no_effect", (_RET, 0, 0, _RET_ERRNO | 0),
            "kill", (_RET, 0, 0, _RET_KILL_PROCESS)]
    labels: dict[str, int] = {}
    code: list[tuple[int, int | str, int | str, int]] = []
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
