"""Timing and peak-memory helpers shared by the examples and the benchmark.

Peak memory: Linux's resident-set high-water mark (VmHWM), reset before each
formulation by writing 5 to /proc/self/clear_refs, minus the resident set at
the start: what the formulation itself allocated and touched (PyTorch's CPU
allocator returns large blocks to the OS, so formulations don't share them).
batchconv's output cache is emptied first, so the blocks it fills during the
warmup and timed calls count as batchconv's own.
"""
import gc
import statistics
import time

import torch

import batchconv


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def measure(fn, reps=5, warmup=2):
    """(median seconds, peak extra bytes, last result) of fn(), timed after `warmup` calls.

    The warmup calls are inside the memory window (so what they leave in
    batchconv's output cache counts), and there are two of them because a
    caller that keeps the last result (out = fn()) holds one output while
    the next is made: only the third call meets the steady state of a loop.
    """
    gc.collect()
    batchconv.cache.empty()  # blocks the cache keeps are memory of the formulation that uses them
    times = []
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        reset = True
    except OSError:
        reset = False
    base = _status("VmRSS:")
    out = None
    for _ in range(warmup):
        out = fn()
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    peak = _status("VmHWM:") - base if reset else float("nan")
    return statistics.median(times), peak, out


def mib(b):
    return f"{b / 2**20:.0f} MiB" if b == b else "n/a"


def header():
    import os
    import platform
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"machine: {cpu}, {os.cpu_count()} cores; threads {torch.get_num_threads()}; "
            f"python {platform.python_version()}, torch {torch.__version__}; batchconv target "
            f"{batchconv.selected_target()}")


def table(rows, cols=("formulation", "median ms", "peak extra", "vs batchconv")):
    """rows: (name, seconds, bytes); the first row is batchconv."""
    base = rows[0][1]
    print(f"  {cols[0]:<34} {cols[1]:>10} {cols[2]:>11} {cols[3]:>13}")
    for name, t, m in rows:
        print(f"  {name:<34} {t * 1e3:>10.1f} {mib(m):>11} {t / base:>12.2f}x")
