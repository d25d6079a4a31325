"""multiprocessing without /dev/shm: the landlock child's locks are unnamed semaphores in shared memory.

Like `landlock.py`, this file is *source* for the landlock child (appended to its bootstrap after the
confinement; imports only what it uses, defines one private name). The host's /dev/shm is outside
the child's Landlock rules (it is shared with every process of the machine), and glibc's named
semaphores (`sem_open`) live there, so `multiprocessing.Lock()` and everything built on it (Pool,
Queue, ProcessPoolExecutor) would fail. With the `fork` start method a lock needs no name: a POSIX
semaphore initialised process-shared (`sem_init(pshared=1)`) in an anonymous shared mapping is
inherited by every forked child. Other start methods keep the stock (named, failing) semaphores.
Not available in this backend: `multiprocessing.shared_memory` and managers (a socket server).
This is convenience, not confinement: the child could undo it and would only lose its own locks.
"""


def _anonymous_semaphores() -> None:
    import _multiprocessing
    import ctypes
    import mmap
    import multiprocessing.context as mp_context
    import multiprocessing.synchronize as sync
    import multiprocessing.util as mp_util
    from typing import Any

    libc = ctypes.CDLL(None, use_errno=True)
    stock_init = sync.SemLock.__init__

    def init(self: Any, kind: int, value: int, maxvalue: int, *, ctx: Any) -> None:
        ctx = ctx or mp_context._default_context.get_context()
        if ctx.get_start_method() != "fork":
            stock_init(self, kind, value, maxvalue, ctx=ctx)
            return
        area = mmap.mmap(-1, 64, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)  # sem_t is 32 bytes on x86_64
        address = ctypes.addressof(ctypes.c_char.from_buffer(area))
        if libc.sem_init(ctypes.c_void_p(address), 1, ctypes.c_uint(value)) != 0:
            raise OSError(ctypes.get_errno(), "sem_init failed")
        self._area = area  # the mapping lives as long as the lock (forked children inherit it)
        self._semlock = _multiprocessing.SemLock._rebuild(address, kind, maxvalue, None)
        self._make_methods()
        mp_util.register_after_fork(self, lambda obj: obj._semlock._after_fork())

    sync.SemLock.__init__ = init  # type: ignore[method-assign]


_anonymous_semaphores()
del _anonymous_semaphores
