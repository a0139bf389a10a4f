"""Swept conv cases: every op gets >= 100, mixing 1-D and 2-D, groups (1, some, depthwise),
stride, dilation, asymmetric padding, B = 1, odd sizes, bias or not, a fused ReLU (every third
case) and input layouts
(contiguous, channels_last, non-contiguous views: step slices, permuted B/N, seed 2's view)."""
import random

import torch

LAYOUTS = ["contiguous", "channels_last", "step", "permuted", "seed2_view"]


def make_cases(op, count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        dims = 1 if i % 4 == 3 else 2
        g = rng.choice([1, 1, 2, 3, "dw"])
        cin_g = 1 if g == "dw" else rng.choice([1, 2, 3, 5])
        groups = rng.choice([2, 3, 4]) if g == "dw" else g
        cout_g = rng.choice([1, 2, 4, 7, 8]) if i % 5 else rng.choice([13, 16])
        k = [rng.choice([1, 2, 3, 3, 5]) for _ in range(dims)]
        stride = [rng.choice([1, 1, 1, 2, 3]) for _ in range(dims)]
        dilation = [rng.choice([1, 1, 2]) for _ in range(dims)]
        begin = [rng.choice([0, 0, 1, 2]) for _ in range(dims)]
        end = [b if rng.random() < 0.6 else rng.choice([0, 1, 3]) for b in begin]
        size = []
        for d in range(dims):
            span = dilation[d] * (k[d] - 1) + 1
            lo = max(1, span - begin[d] - end[d])
            size.append(rng.randint(lo, lo + rng.choice([0, 3, 9, 20, 40])))
        B = rng.choice([1, 1, 2, 3, 5])
        N = rng.choice([1, 2, 3])
        cases.append(dict(dims=dims, groups=groups, cin=cin_g * groups, cout=cout_g * groups, k=k,
                          stride=stride, dilation=dilation, begin=begin, end=end, size=size, B=B, N=N,
                          bias=rng.random() < 0.6, layout=LAYOUTS[i % len(LAYOUTS)],
                          sym=(begin == end and rng.random() < 0.5), concat=rng.random() < 0.5,
                          relu=i % 3 == 1))
    return cases


def case_id(c):
    return (f"{c['dims']}d-B{c['B']}N{c['N']}-c{c['cin']}to{c['cout']}g{c['groups']}-k{c['k']}s{c['stride']}"
            f"d{c['dilation']}p{c['begin']}{c['end']}-{c['size']}-{c['layout']}{'-bias' if c['bias'] else ''}"
            f"{'-relu' if c.get('relu') else ''}")


def arrange(t, layout, lead):
    """A float32 tensor equal to t, laid out as `layout` (lead = number of leading batch dims)."""
    t = t.float()
    if layout == "channels_last" and t.dim() - lead == 4:
        if lead == 0:
            return t.contiguous(memory_format=torch.channels_last)
        flat = t.reshape(-1, *t.shape[lead + 1:]).contiguous(memory_format=torch.channels_last)
        return flat.view(t.shape)
    if layout == "channels_last":  # 1-D: channels innermost via a transposed copy
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "step":  # every other element of a wider tensor (last stride 2)
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
        big[..., ::2] = t
        return big[..., ::2]
    if layout == "permuted" and t.dim() >= 3:  # first two dims swapped in memory
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    if layout == "seed2_view" and lead == 1:  # (B*N, C, ...) viewed as (B, N, C, ...)
        return t.reshape(-1, *t.shape[2:]).clone().view(t.shape)
    return t.contiguous()
