"""ctxd's TLS from Python: grpcio clients against `ctxd serve --tls-cert/--tls-key`
(and `--tls-client-ca` for mutual TLS), real handshakes on loopback.

Run by tests/python/run (CTXD_BIN: the server binary; CTXD_STUBS: the generated stubs;
DATABASE_URL inherited when set). The certificates are made here with the
`cryptography` package: a CA, a server certificate for 127.0.0.1 and localhost, client
certificates, and a second server certificate for the reload. Each test class starts its
own server.

Plain unittest; prints one line per test and a closing "N passed, N failed" line.
"""

import datetime
import hashlib
import ipaddress
import os
import queue
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid

sys.path.insert(0, os.environ["CTXD_STUBS"])

import grpc  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from ctxd.v1 import ctxd_pb2 as pb  # noqa: E402
from ctxd.v1 import ctxd_pb2_grpc as pb_grpc  # noqa: E402

SERVICE = "ctxd.v1.ContextService"
START_DEADLINE_S = 60
STOP_DEADLINE_S = 30
RPC_TIMEOUT_S = 15
# How long a reload (SIGHUP) or an event may take to show; polled, never slept.
SHOW_DEADLINE_S = 15


# --- certificates ----------------------------------------------------------------------


class Issuer:
    """A CA: its key and self-signed certificate; issues leaf certificates."""

    def __init__(self, name):
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )

    def pem(self):
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, name, client=False):
        """A leaf certificate and its key, both PEM: for a server on 127.0.0.1 and
        localhost, or (client=True) for a client."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
        )
        if client:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
            )
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cert.public_bytes(serialization.Encoding.PEM), key_pem


def fingerprint(pem):
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    return hashlib.sha256(der).hexdigest()


def write(path, data):
    """Replaces the file at once (as an operator's deploy tool should)."""
    temporary = f"{path}.tmp"
    with open(temporary, "wb") as file:
        file.write(data)
    os.replace(temporary, path)


# --- the server ------------------------------------------------------------------------


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`ctxd serve` with TLS in a temporary directory holding its files and log."""

    def __init__(self, extra_args=()):
        self.tmp = tempfile.TemporaryDirectory(prefix="ctxd-py-tls-")
        self.dir = self.tmp.name
        self.ca = Issuer("ctxd test CA")
        self.path = lambda name: os.path.join(self.dir, name)
        write(self.path("ca.pem"), self.ca.pem())
        cert, key = self.ca.issue("ctxd server")
        write(self.path("cert.pem"), cert)
        write(self.path("key.pem"), key)
        self.log_path = self.path("ctxd.log")
        self.addr = f"127.0.0.1:{free_port()}"
        self.extra_args = list(extra_args)
        self.client_identity = None

    def start(self):
        env = {name: value for name, value in os.environ.items() if not name.startswith("CTXD_")}
        # On the suite's database (DATABASE_URL) ctxd refuses calls without a key unless told.
        env["CTXD_ANONYMOUS_ACCESS"] = "allow"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    os.environ["CTXD_BIN"],
                    "serve",
                    "--listen",
                    self.addr,
                    "--data-dir",
                    self.path("data"),
                    "--tls-cert",
                    self.path("cert.pem"),
                    "--tls-key",
                    self.path("key.pem"),
                    *self.extra_args,
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self.wait_serving()
        except BaseException:
            self.stop()
            raise

    def credentials(self, identity=None, ca=None):
        """Channel credentials trusting `ca` (the server's CA by default), presenting
        `identity` (cert PEM, key PEM) when given."""
        cert, key = identity if identity else (None, None)
        return grpc.ssl_channel_credentials(
            root_certificates=ca or self.ca.pem(), private_key=key, certificate_chain=cert
        )

    def channel(self, identity=None, ca=None):
        return grpc.secure_channel(self.addr, self.credentials(identity, ca))

    def wait_serving(self):
        deadline = time.monotonic() + START_DEADLINE_S
        last = "no answer yet"
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"ctxd exited with {self.process.returncode}; log:\n{self.log_tail()}")
            with self.channel(self.client_identity) as channel:
                try:
                    response = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=SERVICE), timeout=2
                    )
                    if response.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                    last = str(response.status)
                except grpc.RpcError as error:
                    last = f"{error.code().name}: {error.details()}"
            if time.monotonic() > deadline:
                raise RuntimeError(f"ctxd not SERVING over TLS (last: {last}); log:\n{self.log_tail()}")
            time.sleep(0.1)

    def served_fingerprint(self):
        """The SHA-256 of the certificate a new TLS connection is served (verified
        against the server's CA, for the name 127.0.0.1)."""
        context = ssl.create_default_context(cadata=self.ca.pem().decode())
        context.set_alpn_protocols(["h2"])
        if self.client_identity:
            cert_path, key_path = self.path("client-id.pem"), self.path("client-id.key")
            write(cert_path, self.client_identity[0])
            write(key_path, self.client_identity[1])
            context.load_cert_chain(cert_path, key_path)
        host, port = self.addr.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            with context.wrap_socket(sock, server_hostname=host) as tls:
                return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()

    def log_text(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            return log.read()

    def log_tail(self, lines=40):
        try:
            return "".join(self.log_text().splitlines(keepends=True)[-lines:])
        except OSError:
            return "(no server log)"

    def stop(self):
        process = getattr(self, "process", None)
        code = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_DEADLINE_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
        self.tmp.cleanup()
        return code

    def healthcheck(self, *args):
        env = {name: value for name, value in os.environ.items() if not name.startswith("CTXD_")}
        return subprocess.run(
            [os.environ["CTXD_BIN"], "healthcheck", "--addr", self.addr, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )


def create_session(channel, name):
    session_id = f"py-tls-{name}-{uuid.uuid4().hex[:12]}"
    response = pb_grpc.ContextServiceStub(channel).CreateSession(
        pb.CreateSessionRequest(session_id=session_id), timeout=RPC_TIMEOUT_S
    )
    return response.session


def poll(what, condition, deadline_s=SHOW_DEADLINE_S):
    """Polls `condition` until it returns a true value or the deadline passes."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {deadline_s} s")
        time.sleep(0.05)


# --- the tests -------------------------------------------------------------------------


class ServerTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A long handshake timeout: a plaintext client must be closed by the TLS
        # handshake's failure, not by the timeout.
        cls.server = Server(["--conn-handshake-timeout-secs", "60"])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_a_client_trusting_the_ca_completes_calls(self):
        with self.server.channel() as channel:
            session = create_session(channel, "trusting")
            got = pb_grpc.ContextServiceStub(channel).GetSession(
                pb.GetSessionRequest(session_id=session.session_id), timeout=RPC_TIMEOUT_S
            )
            self.assertEqual(got.session.session_id, session.session_id)
        # And the name localhost, the certificate's other name.
        port = self.server.addr.rsplit(":", 1)[1]
        with grpc.secure_channel(f"localhost:{port}", self.server.credentials()) as channel:
            create_session(channel, "localhost")

    def test_a_client_trusting_another_ca_is_refused(self):
        other = Issuer("another CA")
        with self.server.channel(ca=other.pem()) as channel:
            with self.assertRaises(grpc.RpcError) as raised:
                create_session(channel, "untrusted")
            self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_a_plaintext_client_fails_and_is_closed_at_once(self):
        with grpc.insecure_channel(self.server.addr) as channel:
            with self.assertRaises(grpc.RpcError) as raised:
                pb_grpc.ContextServiceStub(channel).GetSession(pb.GetSessionRequest(session_id="x"), timeout=5)
            self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)
        # The raw bytes of an HTTP/2 client: the server closes the socket on them (well
        # before the 60 s handshake timeout), having answered at most a TLS alert.
        host, port = self.server.addr.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00" * 64)
            received = b""
            started = time.monotonic()
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                received += chunk
            self.assertLess(time.monotonic() - started, 10)
            self.assertNotIn(b"HTTP/2", received)
            if received:
                self.assertEqual(received[0], 0x15, f"a TLS alert record, not {received[:16]!r}")
        # The server still serves TLS clients.
        with self.server.channel() as channel:
            create_session(channel, "after-plaintext")

    def test_healthcheck_uses_tls_with_tls_ca(self):
        done = self.server.healthcheck("--tls-ca", self.server.path("ca.pem"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "SERVING")
        plaintext = self.server.healthcheck()
        self.assertNotEqual(plaintext.returncode, 0, plaintext.stdout)


class MutualTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client_ca = Issuer("ctxd client CA")
        cls.server = Server()
        write(cls.server.path("client-ca.pem"), cls.client_ca.pem())
        cls.server.extra_args = ["--tls-client-ca", cls.server.path("client-ca.pem")]
        cls.identity = cls.client_ca.issue("backend-1", client=True)
        cls.server.client_identity = cls.identity
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_a_client_without_a_certificate_is_refused(self):
        with self.server.channel() as channel:
            with self.assertRaises(grpc.RpcError) as raised:
                create_session(channel, "anonymous")
            self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_a_client_with_a_certificate_of_another_ca_is_refused(self):
        stranger = Issuer("not the client CA").issue("intruder", client=True)
        with self.server.channel(identity=stranger) as channel:
            with self.assertRaises(grpc.RpcError) as raised:
                create_session(channel, "stranger")
            self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_a_client_with_a_certificate_of_the_client_ca_is_served(self):
        with self.server.channel(identity=self.identity) as channel:
            session = create_session(channel, "mutual")
            self.assertTrue(session.session_id.startswith("py-tls-mutual-"))

    def test_healthcheck_presents_its_client_certificate(self):
        cert, key = self.server.path("hc.pem"), self.server.path("hc.key")
        write(cert, self.identity[0])
        write(key, self.identity[1])
        ca = self.server.path("ca.pem")
        done = self.server.healthcheck("--tls-ca", ca, "--tls-client-cert", cert, "--tls-client-key", key)
        self.assertEqual(done.returncode, 0, done.stderr)
        refused = self.server.healthcheck("--tls-ca", ca)
        self.assertNotEqual(refused.returncode, 0, refused.stdout)


class Subscription:
    """A tenant's SubscribeEvents stream read by a thread into a queue."""

    def __init__(self, channel):
        self.items = queue.Queue()
        self.call = pb_grpc.ContextServiceStub(channel).SubscribeEvents(
            pb.SubscribeEventsRequest(from_now=True, heartbeat_interval_ms=200), timeout=120
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for item in self.call:
                self.items.put(item)
        except grpc.RpcError as error:
            self.items.put(error)

    def wait(self, what, matches):
        deadline = time.monotonic() + SHOW_DEADLINE_S
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{what}: not within {SHOW_DEADLINE_S} s")
            try:
                item = self.items.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(item, grpc.RpcError):
                raise AssertionError(f"{what}: the stream ended: {item.code().name} {item.details()}")
            if matches(item):
                return item

    def deleted(self, session_id):
        return self.wait(
            f"SESSION_DELETED of {session_id}",
            lambda item: item.WhichOneof("item") == "event"
            and item.event.kind == pb.EVENT_KIND_SESSION_DELETED
            and item.event.session_id == session_id,
        )


class Reload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def delete(self, channel, session_id):
        pb_grpc.ContextServiceStub(channel).DeleteSession(
            pb.DeleteSessionRequest(session_id=session_id), timeout=RPC_TIMEOUT_S
        )

    def test_sighup_serves_new_certificates_to_new_connections_and_keeps_open_streams(self):
        server = self.server
        first = fingerprint(open(server.path("cert.pem"), "rb").read())
        self.assertEqual(server.served_fingerprint(), first)
        # A backend's connection with a live event stream, opened before the reload.
        channel = server.channel()
        self.addCleanup(channel.close)
        stream = Subscription(channel)
        self.addCleanup(stream.call.cancel)
        stream.wait("the first heartbeat (the stream is live)", lambda item: item.WhichOneof("item") == "heartbeat")
        before = create_session(channel, "before")
        self.delete(channel, before.session_id)
        stream.deleted(before.session_id)

        # New certificate and key (same CA, new serial), then SIGHUP.
        cert, key = server.ca.issue("ctxd server, renewed")
        write(server.path("key.pem"), key)
        write(server.path("cert.pem"), cert)
        second = fingerprint(cert)
        self.assertNotEqual(first, second)
        server.process.send_signal(signal.SIGHUP)
        poll("the new certificate served to a new connection", lambda: server.served_fingerprint() == second)
        self.assertIsNone(server.process.poll(), "the server is still running")

        # The stream opened before the reload still delivers events after it.
        after = create_session(channel, "after")
        with server.channel() as fresh:
            self.delete(fresh, after.session_id)
        stream.deleted(after.session_id)

        # A reload that fails keeps what is in force: a certificate file that holds no
        # certificate, then a key that does not match the certificate.
        for broken, data in [
            ("cert.pem", b"not a certificate\n"),
            ("key.pem", server.ca.issue("other")[1]),
        ]:
            saved = open(server.path(broken), "rb").read()
            write(server.path(broken), data)
            failures = server.log_text().count("reloading TLS failed")
            server.process.send_signal(signal.SIGHUP)
            poll(
                f"the failed reload ({broken}) logged",
                lambda: server.log_text().count("reloading TLS failed") > failures,
            )
            self.assertIsNone(server.process.poll(), "a failed reload does not stop the server")
            self.assertEqual(server.served_fingerprint(), second)
            with server.channel() as fresh:
                create_session(fresh, "after-failed-reload")
            write(server.path(broken), saved)
        last = create_session(channel, "last")
        self.delete(channel, last.session_id)
        stream.deleted(last.session_id)


def main():
    started = time.monotonic()
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    test_errors = [test for test, _ in result.errors if isinstance(test, unittest.TestCase)]
    passed = result.testsRun - len(result.failures) - len(test_errors) - len(result.skipped)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"\nctxd python TLS clients ({time.monotonic() - started:.1f} s)")
    print(f"python-tls: {passed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
