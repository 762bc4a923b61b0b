"""A user flooding accel-agentd's public control socket (run by attack_socket_flood.sh as the
test user): holds up to HELD connections that never send anything, opening a new one for each
the agent answers or closes, and churns others (connect, close) between rounds, until STOP_FILE
exists or SECONDS have passed. Then prints its counts as one JSON line.

    python3 socket_flood.py SOCKET HELD SECONDS STOP_FILE
"""
import errno
import json
import os
import resource
import select
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def main():
    path, held_n, seconds, stop_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = held_n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    counts = {"connections": 0, "connect_refused": 0, "answered": 0, "closed_by_agent": 0,
              "churned": 0, "most_held": 0}
    held = {}
    poller = select.poll()
    end = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < end:
        rounds += 1
        if rounds % 20 == 0 and os.path.exists(stop_file):
            break
        while len(held) < held_n:
            try:
                s = connect(path)
            except OSError as e:
                counts["connect_refused"] += 1
                if e.errno not in (errno.EAGAIN, errno.ECONNREFUSED, errno.EMFILE):
                    raise
                break
            counts["connections"] += 1
            held[s.fileno()] = s
            poller.register(s, select.POLLIN)
        counts["most_held"] = max(counts["most_held"], len(held))
        for fd, _ in poller.poll(1):
            s = held.pop(fd)
            poller.unregister(fd)
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            counts["answered" if data else "closed_by_agent"] += 1
            s.close()
        for _ in range(50):
            try:
                connect(path).close()
                counts["connections"] += 1
                counts["churned"] += 1
            except OSError:
                counts["connect_refused"] += 1
    for s in held.values():
        s.close()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
