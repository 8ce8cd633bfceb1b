"""A small NATS client over the text protocol, Python standard library only.

Used by the Python fault injector (injectors/py) and by the evaluation
driver to trace consumer state. It speaks what those need: INFO, CONNECT,
PING/PONG, SUB/UNSUB, PUB (with a reply subject), MSG and HMSG (headers,
which carry JetStream status replies such as 404, 408 and 409), and
request/reply over a private inbox. There is no TLS, no authentication and
no reconnection: the evaluation runs on 127.0.0.1 only.
"""

import json
import os
import queue
import socket
import threading
import time


class NatsError(Exception):
    """A protocol or connection error."""


class Msg:
    """One delivered message: subject, reply (or None), payload bytes, and
    headers (a dict; the status line of a JetStream reply is in "Status" and
    "Description")."""

    __slots__ = ("subject", "reply", "data", "headers")

    def __init__(self, subject, reply, data, headers):
        self.subject = subject
        self.reply = reply
        self.data = data
        self.headers = headers

    def status(self):
        """Returns the status code of a header-only status message, or None."""
        return self.headers.get("Status") if self.headers else None


def parse_url(url):
    """Returns (host, port) of a nats://host:port URL."""
    if url.startswith("nats://"):
        url = url[len("nats://"):]
    host, _, port = url.rpartition(":")
    return host or "127.0.0.1", int(port or 4222)


def parse_headers(raw):
    """Parses a "NATS/1.0 CODE DESC\\r\\nKey: value\\r\\n..." header block."""
    lines = raw.decode("utf-8", "replace").split("\r\n")
    headers = {}
    first = lines[0].split(" ", 2)
    if len(first) >= 2 and first[1]:
        headers["Status"] = first[1]
        if len(first) == 3:
            headers["Description"] = first[2]
    for line in lines[1:]:
        if ":" in line:
            key, _, value = line.partition(":")
            headers[key.strip()] = value.strip()
    return headers


class Connection:
    """One client connection with a reader thread. Subscriptions deliver
    into queues; publish and request may be called from any thread."""

    def __init__(self, url, name="nl-eval", timeout=5.0):
        host, port = parse_url(url)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb")
        self.wlock = threading.Lock()
        self.subs = {}
        self.next_sid = 1
        self.pongs = queue.Queue()
        self.closed = False
        self.error = None
        line = self.rfile.readline()
        if not line.startswith(b"INFO "):
            raise NatsError("expected INFO, got %r" % line[:80])
        self.server_info = json.loads(line[5:])
        opts = {"verbose": False, "pedantic": False, "headers": True,
                "no_responders": True, "protocol": 1, "lang": "python-stdlib",
                "version": "0.1", "name": name}
        self._send(b"CONNECT " + json.dumps(opts).encode() + b"\r\nPING\r\n")
        line = self.rfile.readline()
        if line.startswith(b"-ERR"):
            raise NatsError(line.decode().strip())
        if not line.startswith(b"PONG"):
            raise NatsError("expected PONG, got %r" % line[:80])
        self.sock.settimeout(None)
        self.inbox_prefix = "_INBOX.%s" % os.urandom(8).hex()
        self.resp_sub = None
        self.resp_waiters = {}
        self.resp_lock = threading.Lock()
        self.resp_seq = 0
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    def _send(self, data):
        with self.wlock:
            self.sock.sendall(data)

    def _read_loop(self):
        try:
            while True:
                line = self.rfile.readline()
                if not line:
                    raise NatsError("connection closed by the server")
                if line.startswith(b"MSG ") or line.startswith(b"HMSG "):
                    self._on_msg(line)
                elif line.startswith(b"PING"):
                    self._send(b"PONG\r\n")
                elif line.startswith(b"PONG"):
                    self.pongs.put(True)
                elif line.startswith(b"-ERR"):
                    self.error = line.decode().strip()
                # +OK and INFO updates need nothing.
        except (OSError, ValueError, NatsError) as e:
            if not self.closed:
                self.error = self.error or str(e)
            self.closed = True
            for q in list(self.subs.values()):
                q.put(None)
            self.pongs.put(False)

    def _on_msg(self, line):
        parts = line.split()
        hdr = parts[0] == b"HMSG"
        subject, sid = parts[1].decode(), int(parts[2])
        if hdr:
            reply = parts[3].decode() if len(parts) == 6 else None
            hlen, total = int(parts[-2]), int(parts[-1])
        else:
            reply = parts[3].decode() if len(parts) == 5 else None
            hlen, total = 0, int(parts[-1])
        body = self.rfile.read(total + 2)[:total]
        headers = parse_headers(body[:hlen]) if hdr else {}
        msg = Msg(subject, reply, body[hlen:], headers)
        q = self.subs.get(sid)
        if q is not None:
            q.put(msg)

    def subscribe(self, subject, queue_group=None):
        """Subscribes; returns (sid, queue) where the queue yields Msg, or
        None once the connection is gone."""
        with self.wlock:
            sid = self.next_sid
            self.next_sid += 1
        q = queue.Queue()
        self.subs[sid] = q
        group = (" " + queue_group) if queue_group else ""
        self._send(("SUB %s%s %d\r\n" % (subject, group, sid)).encode())
        return sid, q

    def unsubscribe(self, sid):
        self.subs.pop(sid, None)
        if not self.closed:
            self._send(("UNSUB %d\r\n" % sid).encode())

    def publish(self, subject, data=b"", reply=None):
        """Publishes data (bytes or str) to subject, with an optional reply
        subject."""
        if isinstance(data, str):
            data = data.encode()
        if self.closed:
            raise NatsError(self.error or "connection closed")
        head = "PUB %s %s%d\r\n" % (subject, (reply + " ") if reply else "",
                                    len(data))
        self._send(head.encode() + data + b"\r\n")

    def new_inbox(self):
        return "%s.%s" % (self.inbox_prefix, os.urandom(6).hex())

    def request(self, subject, data=b"", timeout=2.0):
        """Sends a request and returns the reply Msg; raises NatsError on a
        timeout or when nobody listens (503 no responders)."""
        with self.resp_lock:
            if self.resp_sub is None:
                self.resp_sub, rq = self.subscribe(self.inbox_prefix + ".r.*")
                threading.Thread(target=self._resp_loop, args=(rq,),
                                 daemon=True).start()
            self.resp_seq += 1
            token = str(self.resp_seq)
            waiter = queue.Queue(maxsize=1)
            self.resp_waiters[token] = waiter
        try:
            self.publish(subject, data, self.inbox_prefix + ".r." + token)
            try:
                msg = waiter.get(timeout=timeout)
            except queue.Empty:
                raise NatsError("timeout waiting for a reply on %s" % subject)
        finally:
            with self.resp_lock:
                self.resp_waiters.pop(token, None)
        if msg is None:
            raise NatsError(self.error or "connection closed")
        if msg.status() == "503":
            raise NatsError("no responders on %s" % subject)
        return msg

    def _resp_loop(self, rq):
        while True:
            msg = rq.get()
            if msg is None:
                with self.resp_lock:
                    waiters = list(self.resp_waiters.values())
                for w in waiters:
                    w.put(None)
                return
            token = msg.subject.rsplit(".", 1)[-1]
            with self.resp_lock:
                w = self.resp_waiters.get(token)
            if w is not None:
                w.put(msg)

    def flush(self, timeout=2.0):
        """Round-trips a PING so everything sent before has been read."""
        self._send(b"PING\r\n")
        try:
            if not self.pongs.get(timeout=timeout):
                raise NatsError(self.error or "connection closed")
        except queue.Empty:
            raise NatsError("flush timeout")

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def js_api(conn, subject, body=None, timeout=2.0):
    """Sends a JetStream API request ($JS.API.<subject>) and returns the
    decoded JSON reply; raises NatsError when the reply holds an error."""
    data = json.dumps(body).encode() if body is not None else b""
    msg = conn.request("$JS.API." + subject, data, timeout)
    reply = json.loads(msg.data or b"{}")
    if "error" in reply:
        raise NatsError("%s: %s" % (subject,
                                    reply["error"].get("description")))
    return reply


def now_ms():
    return time.monotonic() * 1000.0
