"""A host socket that only counts the connections it accepts: a sandboxed payload that reaches it has escaped."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path


class CountingListener:
    """Accepts (and at once closes) every connection on a listening socket in a daemon thread, counting them."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(0.2)  # the serving thread looks for close() this often
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.accepted += 1
                conn.close()
            except OSError:
                continue

    def close(self) -> None:
        """Stop counting and close the socket."""
        self._stop.set()
        self._thread.join(1)
        self.sock.close()


class TCPListener(CountingListener):
    """A TCP server on 127.0.0.1 (a free port) that records every connection it accepts."""

    def __init__(self) -> None:
        super().__init__(socket.create_server(("127.0.0.1", 0)))
        self.port: int = self.sock.getsockname()[1]


class UnixListener(CountingListener):
    """A host process's pathname UNIX socket (stream), open to every user, counting accepted connections."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        os.chmod(path, 0o777)
        sock.listen(8)
        super().__init__(sock)
