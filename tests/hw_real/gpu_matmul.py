#!/usr/bin/env python3
"""Keeps every GPU it can see busy with bf16 matrix products for a while, one worker process
per GPU (the shape of a data-parallel training job), for tests/hw_real/gpu_check.sh."""
import argparse
import multiprocessing as mp
import time


def work(device: int, seconds: float, size: int, hold_gib: float) -> None:
    import torch

    torch.cuda.set_device(device)
    held = torch.empty(int(hold_gib * (1 << 30)), dtype=torch.uint8, device="cuda")
    a = torch.randn(size, size, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(size, size, dtype=torch.bfloat16, device="cuda")
    end = time.monotonic() + seconds
    products = 0
    while time.monotonic() < end:
        for _ in range(20):
            a = (a @ b) / size
        torch.cuda.synchronize()
        products += 20
    print(f"gpu {device}: {products} products of {size}x{size}, {held.numel() >> 30} GiB held")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--hold-gib", type=float, default=20)
    args = parser.parse_args()
    import torch

    count = torch.cuda.device_count()
    if count == 0:
        raise SystemExit("gpu_matmul: no CUDA device visible")
    ctx = mp.get_context("spawn")
    workers = [ctx.Process(target=work, args=(d, args.seconds, args.size, args.hold_gib))
               for d in range(count)]
    for w in workers:
        w.start()
    failed = 0
    for w in workers:
        w.join()
        failed += w.exitcode != 0
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
