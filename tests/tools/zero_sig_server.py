#!/usr/bin/env python3
"""A stand-in NATS server for one NKey login (test_auth.sh).

Usage: zero_sig_server.py PORT SEED_FILE

cnats 3.4.1 leaves the nonce signature out of CONNECT when the Ed25519
signature's first byte is 0. This server finds, with openssl, a nonce whose
signature by the seed starts with 0 and offers it to the first connection;
that connection is refused as a real server would (no "sig": Authorization
Violation). The second connection gets a nonce whose signature does not
start with 0 and is accepted (PONG to the client's PING). Prints one line,
"first: sig|nosig, second: sig|nosig|none", and exits after the second
connection closes, or after 20 s.
"""
import base64
import os
import socket
import subprocess
import sys
import tempfile


def private_key_der(seed_file):
    """The PKCS#8 DER of the Ed25519 private key of an NKey user seed."""
    seed = next(line.strip() for line in open(seed_file)
                if line.startswith("SU"))
    raw = base64.b32decode(seed + "=" * (-len(seed) % 8))
    return bytes.fromhex("302e020100300506032b657004220420") + raw[2:34]


def first_sig_byte(key_file, nonce, tmp):
    msg = os.path.join(tmp, "msg")
    with open(msg, "w") as f:
        f.write(nonce)
    sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key_file,
                          "-keyform", "DER", "-rawin", "-in", msg],
                         stdout=subprocess.PIPE, check=True).stdout
    return sig[0]


def nonces(seed_file):
    """A nonce whose signature starts with 0, and one whose does not."""
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "key.der")
        with open(key, "wb") as f:
            f.write(private_key_der(seed_file))
        zero = other = None
        for _ in range(5000):
            n = base64.urlsafe_b64encode(os.urandom(11)).decode().rstrip("=")
            if first_sig_byte(key, n, tmp) == 0:
                zero = zero or n
            else:
                other = other or n
            if zero and other:
                return zero, other
    sys.exit("no nonce with a zero-byte signature found")


def serve(conn, nonce, accept):
    """Offers nonce, reads CONNECT; returns whether it carried a signature.
    Accepted connections are answered until the client closes."""
    conn.settimeout(10)
    conn.sendall(('INFO {"server_id":"ZERO","version":"2.9.10","proto":1,'
                  '"host":"127.0.0.1","port":0,"headers":true,'
                  '"max_payload":1048576,"auth_required":true,'
                  '"nonce":"%s"}\r\n' % nonce).encode())
    f = conn.makefile("rb")
    line = f.readline().decode(errors="replace")
    signed = line.startswith("CONNECT ") and '"sig":"' in line
    if not (accept and signed):
        conn.sendall(b"-ERR 'Authorization Violation'\r\n")
        conn.close()
        return signed
    for raw in f:
        if raw.startswith(b"PING"):
            conn.sendall(b"PONG\r\n")
    conn.close()
    return signed


def main():
    port, seed_file = int(sys.argv[1]), sys.argv[2]
    zero, other = nonces(seed_file)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(2)
    srv.settimeout(20)
    print("ready", flush=True)
    seen = []
    try:
        for nonce, accept in ((zero, False), (other, True)):
            conn, _ = srv.accept()
            seen.append("sig" if serve(conn, nonce, accept) else "nosig")
    except (socket.timeout, OSError):
        pass
    seen += ["none"] * (2 - len(seen))
    print("first: %s, second: %s" % tuple(seen), flush=True)


if __name__ == "__main__":
    main()
