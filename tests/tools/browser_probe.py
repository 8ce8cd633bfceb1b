#!/usr/bin/env python3
"""browser_probe.py URL WIDTH HEIGHT READY PROBE [SCREENSHOT.png]

Loads URL in headless Chromium at WIDTH x HEIGHT, waits (at most 150 tries,
0.2 s apart) until the JavaScript expression READY is true, then prints the
JSON value of the expression PROBE (a promise is awaited; the page may
use the clipboard), and saves a screenshot if asked. It
talks to Chromium over the DevTools protocol with the standard library
only (a minimal WebSocket client). Exits 1 when the page never got ready.

With NL_BROWSER_AUTH="user:password" in the environment, every request of
the page carries that user's basic authentication (an Authorization
header). Chromium trusts the authorities of the NSS database under $HOME
(.pki/nssdb), where a test may add its own CA.
"""
import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time


class WebSocket:
    """A WebSocket client for one local DevTools connection: text frames."""

    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n"
                           % (path, hostport, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("handshake closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError("handshake refused: %r" % head[:80])

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise OSError("connection closed")
            buf += chunk
        return buf

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    """One DevTools page target: call(method, params) returns its result."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0

    def call(self, method, params=None):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method,
                                 "params": params or {}}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply["result"]

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression,
                                           "returnByValue": True,
                                           "awaitPromise": True,
                                           "userGesture": True})
        return r["result"].get("value")


def main():
    url, width, height, ready, probe = sys.argv[1:6]
    shot = sys.argv[6] if len(sys.argv) > 6 else None
    profile = tempfile.mkdtemp(prefix="nats-lens-browser.")
    chromium = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-port=0", "--user-data-dir=" + profile,
         "--window-size=%s,%s" % (width, height), "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(150):
            if os.path.exists(port_file) and open(port_file).read().count("\n"):
                break
            time.sleep(0.2)
        port = open(port_file).read().split("\n")[0]
        targets = json.loads(subprocess.run(
            ["curl", "-s", "http://127.0.0.1:%s/json" % port],
            capture_output=True, text=True).stdout)
        ws_url = [t for t in targets if t["type"] == "page"][0][
            "webSocketDebuggerUrl"]
        page = Page(WebSocket(ws_url))
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": int(width), "height": int(height),
                   "deviceScaleFactor": 1, "mobile": int(width) < 600})
        origin = "/".join(url.split("/")[:3])
        page.call("Browser.grantPermissions",
                  {"origin": origin, "permissions": ["clipboardReadWrite",
                                                     "clipboardSanitizedWrite"]})
        page.call("Emulation.setFocusEmulationEnabled", {"enabled": True})
        page.call("Page.enable")
        auth = os.environ.get("NL_BROWSER_AUTH")
        if auth:
            page.call("Network.enable")
            page.call("Network.setExtraHTTPHeaders", {"headers": {
                "Authorization": "Basic " +
                base64.b64encode(auth.encode()).decode()}})
        page.call("Page.navigate", {"url": url})
        for _ in range(150):
            if page.evaluate("Boolean(%s)" % ready):
                break
            time.sleep(0.2)
        else:
            print(json.dumps({"error": "not ready: " + ready}))
            return 1
        print(json.dumps(page.evaluate(
            "Promise.resolve(%s).then(function (v) {"
            " return JSON.parse(JSON.stringify(v)); })" % probe)))
        if shot:
            data = page.call("Page.captureScreenshot",
                             {"format": "png", "captureBeyondViewport": True})
            with open(shot, "wb") as f:
                f.write(base64.b64decode(data["data"]))
        return 0
    finally:
        stop(chromium)
        # Chromium's helper processes may still write into the profile a
        # moment after the browser exits: their group was stopped, and the
        # removal is tried again rather than reporting on standard error.
        for _ in range(10):
            shutil.rmtree(profile, ignore_errors=True)
            if not os.path.exists(profile):
                break
            time.sleep(0.2)


def stop(chromium):
    """Ends the browser and every process of its session (its renderer and
    helper processes): politely first, then whatever is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(chromium.pid, sig)
        except ProcessLookupError:
            pass
        try:
            chromium.wait(10)
        except subprocess.TimeoutExpired:
            pass


if __name__ == "__main__":
    sys.exit(main())
