"""PyTorch's cuDNN path on the seed workloads (same NCHW shapes as
tests/gpu/device_time.cpp), printed beside batchconv's CUDA times as one
table. cuDNN runs in float32 (TF32 off: batchconv computes in float32), and
with TF32 as PyTorch's default allows on Ampere and later, beside. The GPU's
fp32 peak (SMs x 128 FP32 lanes x 2 x its highest SM clock, from
nvidia-smi) and a device-to-device copy's bandwidth, measured in the same
run, give each batchconv figure as a share of its bound.
Run by scripts/device-check.sh: python3 torch_cudnn_times.py <device_time binary>."""
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


def torch_ms(x, w, groups, pad, one_d, tf32):
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = tf32
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


def fp32_peak_gflops():
    """SMs x 128 FP32 lanes x 2 (an FMA) x the highest SM clock (MHz)."""
    try:
        mhz = float(subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=20).stdout.split()[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None
    return torch.cuda.get_device_properties(0).multi_processor_count * 128 * 2 * mhz / 1e3


def copy_gbps():
    """A 1 GiB device-to-device copy: bytes read + written per second, median of 10."""
    a = torch.empty(1 << 28, device="cuda")
    b = torch.empty_like(a)
    times = []
    for i in range(13):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        b.copy_(a)
        e1.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(e0.elapsed_time(e1))
    return 2 * a.numel() * 4 / (sorted(times)[len(times) // 2] * 1e6)


def main():
    ours = {}
    out = subprocess.run([sys.argv[1]], capture_output=True, text=True, timeout=150).stdout
    for line in out.splitlines():
        if line.startswith("#"):
            print(line)
            continue
        parts = line.split()
        if len(parts) >= 4 and parts[1] != "error":
            ours[parts[0]] = (float(parts[1]), float(parts[2]), float(parts[3]))
        elif parts:
            print(line)
    peak, bw = fp32_peak_gflops(), copy_gbps()
    print(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    print(f"# fp32 peak {peak or 0:.0f} GFLOP/s (spec from SMs and clock), copy {bw:.0f} GB/s (measured)")
    print("# ms: medians of 10; 'vs cuDNN' = cuDNN float32 ms / batchconv ms (above 1: batchconv faster)")
    print(f"{'workload':14} {'batchconv ms':>12} {'GFLOP/s':>9} {'%fp32':>6} {'GB/s':>7} {'%copy':>6} "
          f"{'cuDNN ms':>9} {'vs cuDNN':>9} {'TF32 ms':>8}")
    for k, (x, w, g, p, one_d) in WORKS.items():
        t = torch_ms(x, w, g, p, one_d, False)
        t32 = torch_ms(x, w, g, p, one_d, True)
        if k in ours:
            ms, gf, gb = ours[k]
            pf = f"{100 * gf / peak:6.1f}" if peak else f"{'-':>6}"
            print(f"{k:14} {ms:12.3f} {gf:9.0f} {pf} {gb:7.0f} {100 * gb / bw:6.1f} {t:9.3f} {t / ms:9.2f} {t32:8.3f}")
        else:
            print(f"{k:14} {'-':>12} {'':9} {'':6} {'':7} {'':6} {t:9.3f} {'':9} {t32:8.3f}")


if __name__ == "__main__":
    main()
