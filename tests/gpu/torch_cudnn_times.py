"""PyTorch's cuDNN path on the seed workloads (same NCHW shapes as
tests/gpu/device_time.cpp), printed beside batchconv's CUDA times as one
table. Run by scripts/device-check.sh: python3 torch_cudnn_times.py <device_time binary>."""
import subprocess
import sys

import torch
import torch.nn.functional as F

# id: (x shape as PyTorch runs it, w, groups, pad, 1-D)
WORKS = {
    "W1": ((1, 16, 1000000), (64, 16, 1), 1, 0, True),          # repeat + grouped conv = 4 banks
    "W2_G=1": ((128, 3, 28, 28), (64, 3, 7, 7), 1, 0, False),
    "W2_G=16": ((8, 48, 28, 28), (1024, 3, 7, 7), 16, 0, False),  # transpose + grouped-conv trick
    "W2_G=128": ((1, 384, 28, 28), (8192, 3, 7, 7), 128, 0, False),
    "W3_seed3": ((50, 300, 32, 32), (6400, 3, 3, 3), 100, 0, False),
    "W3_MAML": ((80, 2048, 42, 42), (2048, 64, 3, 3), 32, 1, False),
    "W3_B=1": ((128, 64, 56, 56), (64, 64, 3, 3), 1, 1, False),
    "W4_ResNeXt": ((8, 128, 56, 56), (128, 4, 3, 3), 32, 1, False),
    "W4_depthwise": ((8, 256, 56, 56), (256, 1, 3, 3), 256, 1, False),
}


def torch_ms(x, w, groups, pad, one_d):
    torch.backends.cudnn.benchmark = True
    xs = torch.randn(*x, device="cuda")
    ws = torch.randn(*w, device="cuda")
    conv = F.conv1d if one_d else F.conv2d
    for _ in range(3):
        conv(xs, ws, padding=pad, groups=groups)
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        conv(xs, ws, padding=pad, groups=groups)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def main():
    ours = {}
    out = subprocess.run([sys.argv[1]], capture_output=True, text=True, timeout=100).stdout
    for line in out.splitlines():
        if line.startswith("#"):
            print(line)
            continue
        parts = line.split()
        if len(parts) >= 4 and parts[1] != "error":
            ours[parts[0]] = (float(parts[1]), float(parts[2]), float(parts[3]))
        elif parts:
            print(line)
    print(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    print(f"{'workload':14} {'batchconv ms':>12} {'GFLOP/s':>9} {'GB/s':>7} {'cuDNN ms':>9} {'vs cuDNN':>9}")
    for k, (x, w, g, p, one_d) in WORKS.items():
        t = torch_ms(x, w, g, p, one_d)
        if k in ours:
            ms, gf, gb = ours[k]
            print(f"{k:14} {ms:12.3f} {gf:9.0f} {gb:7.0f} {t:9.3f} {t / ms:9.2f}")
        else:
            print(f"{k:14} {'-':>12} {'':9} {'':7} {t:9.3f}")


if __name__ == "__main__":
    main()
