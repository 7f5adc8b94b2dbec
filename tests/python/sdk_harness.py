"""What the SDK tests share: a `ctxd serve` subprocess that can be stopped and started
again on the same port and database, and a TCP proxy that drops a connection right
after the server has answered (the answer never reaches the client)."""

import os
import queue
import signal
import socket
import subprocess
import tempfile
import threading
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVICE = "ctxd.v1.ContextService"
START_DEADLINE_S = 60
STOP_DEADLINE_S = 30


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, what, deadline_s=30, interval_s=0.05):
    """Polls `condition` until it returns something truthy (returned) or the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {deadline_s} s waiting for {what}")
        time.sleep(interval_s)


class Server:
    """`CTXD_BIN serve` on a fixed loopback port. DATABASE_URL, when set, is inherited
    (else the server keeps a private PostgreSQL in its data directory, which a restart
    reuses): a restarted server sees everything the previous one committed."""

    def __init__(self, env_extra=None):
        self.binary = os.environ["CTXD_BIN"]
        self.tmp = tempfile.TemporaryDirectory(prefix="ctxd-py-sdk-")
        self.log_path = os.path.join(self.tmp.name, "ctxd.log")
        self.data_dir = os.path.join(self.tmp.name, "data")
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.env_extra = dict(env_extra or {})
        self.process = None
        self.starts = 0

    def log_tail(self, lines=40):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                return "".join(log.readlines()[-lines:])
        except OSError:
            return "(no server log)"

    def start(self):
        env = {name: value for name, value in os.environ.items() if not name.startswith("CTXD_")}
        # On the suite's database (DATABASE_URL) ctxd refuses calls without a key unless told.
        env["CTXD_ANONYMOUS_ACCESS"] = "allow"
        env.update(self.env_extra)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self.binary, "serve", "--listen", self.addr, "--data-dir", self.data_dir],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1
        try:
            self._wait_serving()
        except BaseException:
            self.stop()
            raise

    def _wait_serving(self):
        deadline = time.monotonic() + START_DEADLINE_S
        last = "no answer yet"
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"ctxd exited with {self.process.returncode}; log tail:\n{self.log_tail()}")
            with grpc.insecure_channel(self.addr) as channel:
                try:
                    response = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=SERVICE), timeout=2
                    )
                    if response.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                    last = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
                except grpc.RpcError as error:
                    last = f"{error.code().name}: {error.details()}"
            if time.monotonic() > deadline:
                raise RuntimeError(f"ctxd not SERVING within {START_DEADLINE_S} s ({last}); log:\n{self.log_tail()}")
            time.sleep(0.1)

    def stop(self):
        """SIGTERM (which also stops a private PostgreSQL); fails the test when the
        server does not exit cleanly."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=STOP_DEADLINE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"ctxd did not stop within {STOP_DEADLINE_S} s; log:\n{self.log_tail()}")
        if code != 0:
            raise AssertionError(f"ctxd exited with {code} after SIGTERM; log:\n{self.log_tail()}")

    def close(self):
        try:
            self.stop()
        finally:
            self.tmp.cleanup()


class CuttingProxy:
    """A TCP proxy in front of the server. Armed, it closes the connection (both sides)
    when the server starts its next answer, an HTTP/2 HEADERS frame on a stream: the
    server has done the work, the client only sees the connection go (UNAVAILABLE).
    With reset_next_stream(), it resets the next stream the server sends data on
    instead (RST_STREAM INTERNAL_ERROR to both sides), the connection staying up."""

    DATA = 0x0
    HEADERS = 0x1
    RST_STREAM = 0x3

    def __init__(self, upstream):
        self.upstream = upstream
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.addr = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.armed = 0
        self.cuts = 0
        self.reset_armed = False
        self.resets = 0
        self.upstream_send = threading.Lock()
        self.connections = 0
        # Connections closed at once because the server was not listening.
        self.refused = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, times=1):
        with self.lock:
            self.armed = times

    def reset_next_stream(self):
        with self.lock:
            self.reset_armed = True

    def _take_reset(self):
        with self.lock:
            if not self.reset_armed:
                return False
            self.reset_armed = False
            self.resets += 1
            return True

    @classmethod
    def _rst_stream(cls, stream):
        internal_error = 0x2
        return (
            (4).to_bytes(3, "big")
            + bytes([cls.RST_STREAM, 0])
            + stream.to_bytes(4, "big")
            + internal_error.to_bytes(4, "big")
        )

    def _take_shot(self):
        with self.lock:
            if self.armed <= 0:
                return False
            self.armed -= 1
            self.cuts += 1
            return True

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream.rsplit(":", 1))
            except OSError:
                client.close()
                with self.lock:
                    self.refused += 1
                continue
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._pump_up, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump_down, args=(server, client), daemon=True).start()

    @staticmethod
    def _close(*socks):
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _pump_up(self, client, server):
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                with self.upstream_send:
                    server.sendall(data)
        except OSError:
            pass
        self._close(client, server)

    def _pump_down(self, server, client):
        """Forwards whole HTTP/2 frames (9-byte header + payload) so a cut falls between
        frames, before the answer's HEADERS frame."""
        buffer = b""
        try:
            while True:
                data = server.recv(65536)
                if not data:
                    break
                buffer += data
                while len(buffer) >= 9:
                    length = int.from_bytes(buffer[0:3], "big")
                    if len(buffer) < 9 + length:
                        break
                    frame, buffer = buffer[: 9 + length], buffer[9 + length :]
                    stream = int.from_bytes(frame[5:9], "big") & 0x7FFFFFFF
                    if frame[3] == self.HEADERS and stream != 0 and self._take_shot():
                        self._close(server, client)
                        return
                    if frame[3] == self.DATA and stream != 0 and self._take_reset():
                        # Both ends see the stream reset; frames of the client's request
                        # preface are whole by now, so the upstream write lands between frames.
                        with self.upstream_send:
                            server.sendall(self._rst_stream(stream))
                        client.sendall(self._rst_stream(stream))
                        continue
                    client.sendall(frame)
        except OSError:
            pass
        self._close(server, client)

    def close(self):
        self.closed = True
        self.listener.close()


class Puller:
    """Pulls from an events iterator in a thread, one item per take, so a broken
    iterator fails the test by its deadline instead of hanging it. `ahead` items are
    asked for at once (the subscription opens now, not at the first take)."""

    def __init__(self, iterator, ahead=0):
        self.iterator = iterator
        self.wanted = queue.Queue()
        self.got = queue.Queue()
        self.asked = 0
        threading.Thread(target=self._run, daemon=True).start()
        for _ in range(ahead):
            self._ask()

    def _ask(self):
        self.asked += 1
        self.wanted.put(True)

    def _run(self):
        while self.wanted.get():
            try:
                self.got.put(("item", next(self.iterator)))
            except BaseException as error:  # handed to the test thread
                self.got.put(("error", error))
                return

    def take(self, count, timeout_s=60):
        items = []
        for _ in range(count):
            if self.asked == 0:
                self._ask()
            try:
                kind, value = self.got.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"no event within {timeout_s} s (got {len(items)} of {count})") from None
            self.asked -= 1
            if kind == "error":
                raise value
            items.append(value)
        return items


class Collector:
    """Reads an events iterator in a thread for as long as it runs, as a live consumer
    does, keeping every event (and the error that ended it, if one did)."""

    def __init__(self, iterator):
        self.events = []
        self.error = None
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, args=(iterator,), daemon=True)
        self.thread.start()

    def _run(self, iterator):
        try:
            for event in iterator:
                with self.lock:
                    self.events.append(event)
        except BaseException as error:  # reported by until()
            self.error = error

    def until(self, condition, what, deadline_s=60):
        """The events so far, once `condition(events)` holds."""

        def ready():
            with self.lock:
                if self.error is not None:
                    raise AssertionError(f"the events iterator failed: {self.error!r}")
                return list(self.events) if condition(self.events) else None

        return wait_until(ready, what, deadline_s)
