"""Real servers on loopback for the remote-tier tests: each starts on a free port, is waited for,
and is stopped at teardown; a test that cannot start one skips (pytest.skip) rather than fails."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Optional

import pytest

START_TIMEOUT_SECONDS = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = START_TIMEOUT_SECONDS) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        """SIGKILL: the server dies the way a crashed or unplugged one does."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start(command: list[str], port: int, workdir: str, name: str) -> Server:
    log = os.path.join(workdir, f"{name}.log")
    with open(log, "wb") as handle:
        process = subprocess.Popen(command, cwd=workdir, stdout=handle, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    if not wait_for_port(port, process):
        process.kill()
        process.wait()
        with open(log, errors="replace") as handle:
            tail = handle.read()[-2000:]
        pytest.skip(f"{name} did not start on port {port}: {tail}")
    return Server(process, port, log)


def start_redis(workdir: str) -> Server:
    """redis-server on 127.0.0.1:<free port>, nothing persisted."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--daemonize", "no", "--dir", workdir]
    return start(command, port, workdir, "redis")


def redis_url(server: Optional[Server]) -> str:
    assert server is not None
    return f"redis://127.0.0.1:{server.port}"


def accepted(listener: socket.socket):
    """Each connection ``listener`` accepts, until it is closed."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        yield connection


class KillAfterProxy:
    """A loopback TCP proxy in front of ``server`` that SIGKILLs the server when the
    ``after``-th GET passes through it (before forwarding that GET): the server dies mid-build at
    a chosen point, not at a moment a timer happened to pick."""

    GET = b"\r\nGET\r\n"  # how a GET's name travels in RESP

    def __init__(self, server: Server, after: int):
        self.server = server
        self.after = after
        self.gets = 0
        self.killed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        for client in accepted(self._listener):
            try:
                upstream = socket.create_connection(("127.0.0.1", self.server.port))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_client and self._kill_now(data):
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _kill_now(self, data: bytes) -> bool:
        with self._lock:
            self.gets += data.count(self.GET)
            if self.gets >= self.after and not self.killed.is_set():
                self.server.kill()
                self.killed.set()
            return self.killed.is_set()


class SilentServer:
    """Accepts connections and never answers: what a hung or firewalled server looks like."""

    def __init__(self):
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        self._held.extend(accepted(self._listener))

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()


class HttpStore:
    """A minimal HTTP object store on loopback (GET, HEAD, PUT, DELETE of whole paths, kept in
    memory): the kind of server ccache's http:// remote storage talks to."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        objects = self.objects = {}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self._answer(objects.get(self.path), with_body=True)

            def do_HEAD(self):
                self._answer(objects.get(self.path), with_body=False)

            def do_PUT(self):
                objects[self.path] = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_DELETE(self):
                objects.pop(self.path, None)
                self.send_response(204)
                self.end_headers()

            def _answer(self, body, with_body):
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                if with_body and body:
                    self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def url(self, path: str = "ccache") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
