#!/usr/bin/env python3
"""Real-model benchmark: torchvision networks compiled by batchconv-compile, beside ONNX Runtime and PyTorch.

    real_models.py --build=<build dir> [--models=a,b,...] [--batches=1,8] [--rounds=3] [--reps=10]
                   [--threads=2] [--work=<dir>] [--out=<results.md>] [--compile-args='...']
                   [--dynamic] [--baseline-args='--part-nodes=0'] [--skip-peers]

Per model and batch: exports the network (export_model.py), compiles it with batchconv-compile
(time and peak memory of the compile), links the generated library into runner.cpp, then runs
batchconv, ONNX Runtime and PyTorch each in its own process, interleaved over --rounds rounds
of --reps timed calls after a warm-up call. --baseline-args compiles each model a second time with those
flags added (e.g. --part-nodes=0: one pipeline) and times that library in the same rounds. Reports medians over all timed calls, the ratios,
each side's error against PyTorch's float64 output, and each process's peak RSS. The machine's
limits (build/benchmarks/measure-peak) are measured in the same run.

Run it with a Python that has torch, torchvision and onnxruntime: scripts/bench-env.sh makes
one (Debian's torch and torchvision, onnxruntime pinned from PyPI).
"""
import argparse
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "resnext50_32x4d", "mobilenet_v2", "efficientnet_b0", "regnet_y_400mf",
          "shufflenet_v2_x1_0", "mnasnet1_0"]


def run_child(cmd, env=None, timeout=None):
    """Runs cmd; returns (exit status, stdout, stderr, seconds, peak RSS in MiB) of that one process."""
    out_path, err_path = "/tmp/real_models.out", "/tmp/real_models.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if deadline and time.perf_counter() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return (p.returncode, open(out_path).read(), open(err_path).read(), seconds, usage.ru_maxrss / 1024.0)


def parse(stdout):
    r = {}
    for line in stdout.splitlines():
        k, _, v = line.partition(" ")
        r[k] = v
    return r


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def geomean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default="/tmp/batchconv-real-models")
    ap.add_argument("--out", default="")
    ap.add_argument("--compile-args", default="")
    ap.add_argument("--compile-timeout", type=int, default=1200)
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--dynamic", action="store_true",
                    help="also compile each model once with --dynamic-batch (exported with a symbolic batch) "
                         "and run that one library at every batch, beside the static builds")
    ap.add_argument("--baseline-args", default="",
                    help="also compile each model with these flags added (e.g. --part-nodes=0) and run that "
                         "library in the same rounds: a same-run A/B of a compiler option")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    compiler = os.path.join(build, "tools", "batchconv-compile", "batchconv-compile")
    # HalideRuntime.h (Debian's libhalide14-0-dev puts it in /usr/include/halide14).
    halide_inc = [d for d in ("/usr/include/halide14", "/usr/include") if os.path.exists(os.path.join(d, "HalideRuntime.h"))]
    lines = []

    def emit(s=""):
        print(s, flush=True)
        lines.append(s)

    threads_env = dict(os.environ, HL_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    emit(f"# Real models: batchconv-compile beside ONNX Runtime and PyTorch ({time.strftime('%Y-%m-%d')})")
    emit()
    emit(f"- Machine: {cpu_name()}, {os.cpu_count()} cores; {a.threads} threads for every side.")
    peak = run_child([os.path.join(build, "benchmarks", "measure-peak"), f"--threads={a.threads}"])
    emit("- Limits (measure-peak, same run): " + "; ".join(l.strip() for l in peak[1].strip().splitlines()))
    emit(f"- Command: `{' '.join(shlex.quote(x) for x in sys.argv)}`")
    emit(f"- Each side in its own process, interleaved over {a.rounds} rounds of {a.reps} timed calls after a "
         "warm-up call; ms are medians over all timed calls; err is max |y - ref| / max |ref| against "
         "PyTorch's float64 output; peak is the process's peak RSS (MiB).")
    versions = {}
    rows = []
    dynamic = {}  # model -> (dir, name, compile s, compile MiB) or the refusal

    def dynamic_library(model):
        if model in dynamic:
            return dynamic[model]
        d = os.path.join(a.work, f"{model}_dyn")
        rc, out, err, _, _ = run_child([sys.executable, os.path.join(HERE, "export_model.py"), model, "1", d,
                                        "--dynamic-batch"])
        if rc:
            dynamic[model] = "export failed: " + " ".join(err.strip().splitlines()[-1:])
            return dynamic[model]
        name = f"{model}_dyn"
        cmd = [compiler, os.path.join(d, "model.onnx"), "-o", d, f"--name={name}", "--dynamic-batch"] + \
            shlex.split(a.compile_args)
        rc, out, err, secs, rss = run_child(cmd, env=threads_env, timeout=a.compile_timeout)
        dynamic[model] = (d, name, secs, rss) if rc == 0 else (err.strip().splitlines() or ["timed out"])[-1]
        if rc:
            emit(f"- {model} --dynamic-batch: batchconv-compile refused or failed ({secs:.0f} s): {dynamic[model]}")
        return dynamic[model]

    for model in a.models.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            d = os.path.join(a.work, f"{model}_b{batch}")
            rc, out, err, _, _ = run_child([sys.executable, os.path.join(HERE, "export_model.py"), model, str(batch), d])
            if rc:
                emit(f"- {model} batch {batch}: export failed: {err.strip().splitlines()[-1:]}")
                continue
            shp = {l.split()[0]: [int(v) for v in l.split()[1:]] for l in open(os.path.join(d, "shapes.txt"))}
            name = f"{model}_b{batch}"
            cmd = [compiler, os.path.join(d, "model.onnx"), "-o", d, f"--name={name}"] + shlex.split(a.compile_args)
            rc, out, err, secs, rss = run_child(cmd, env=threads_env, timeout=a.compile_timeout)
            row = {"model": model, "batch": batch, "compile_s": secs, "compile_mib": rss}
            if rc:
                row["refused"] = (err.strip().splitlines() or ["timed out"])[-1]
                rows.append(row)
                emit(f"- {model} batch {batch}: batchconv-compile refused or failed ({secs:.0f} s): {row['refused']}")
                continue
            runner = os.path.join(d, "runner")
            gxx = ["g++", "-O2", "-std=c++17", "-include", os.path.join(d, f"{name}.h"), f"-DMODEL_F32={name}_f32",
                   f"-DIN_COUNT={math.prod(shp['input'])}", f"-DOUT_COUNT={math.prod(shp['output'])}",
                   "-I", d] + [f"-I{i}" for i in halide_inc] + [os.path.join(HERE, "runner.cpp"),
                   os.path.join(d, f"lib{name}.a"), "-o", runner, "-lpthread", "-ldl"]
            rc, out, err, _, _ = run_child(gxx)
            if rc:
                row["refused"] = "runner did not link: " + err.strip()[-300:]
                rows.append(row)
                emit(f"- {model} batch {batch}: {row['refused']}")
                continue
            sides = {"batchconv": [runner, os.path.join(d, "input.f32"), os.path.join(d, "expected.f64"), str(a.reps)]}
            if a.baseline_args:
                bd = os.path.join(d, "baseline")
                os.makedirs(bd, exist_ok=True)
                bcmd = [compiler, os.path.join(d, "model.onnx"), "-o", bd, f"--name={name}"] + \
                    shlex.split(a.compile_args) + shlex.split(a.baseline_args)
                brc, _, berr, row["baseline_compile_s"], _ = run_child(bcmd, env=threads_env, timeout=a.compile_timeout)
                brunner = os.path.join(bd, "runner")
                bgxx = [x.replace(os.path.join(d, f"{name}.h"), os.path.join(bd, f"{name}.h"))
                         .replace(os.path.join(d, f"lib{name}.a"), os.path.join(bd, f"lib{name}.a")) for x in gxx]
                bgxx[bgxx.index("-o") + 1] = brunner
                bgxx[bgxx.index("-I") + 1] = bd
                if brc == 0 and run_child(bgxx)[0] == 0:
                    sides["baseline"] = [brunner, os.path.join(d, "input.f32"), os.path.join(d, "expected.f64"),
                                         str(a.reps)]
                else:
                    row["baseline_fail"] = (berr.strip().splitlines() or ["runner did not link"])[-1]
            if a.dynamic:
                lib = dynamic_library(model)
                if isinstance(lib, tuple):
                    dd, dname, row["dynamic_compile_s"], row["dynamic_compile_mib"] = lib
                    drunner = os.path.join(d, "runner_dyn")
                    dgxx = ["g++", "-O2", "-std=c++17", "-include", os.path.join(dd, f"{dname}.h"),
                            f"-DMODEL_F32={dname}_f32", f"-DMODEL_BATCH={batch}",
                            f"-DIN_COUNT={math.prod(shp['input'])}", f"-DOUT_COUNT={math.prod(shp['output'])}",
                            "-I", dd] + [f"-I{i}" for i in halide_inc] + [os.path.join(HERE, "runner.cpp"),
                            os.path.join(dd, f"lib{dname}.a"), "-o", drunner, "-lpthread", "-ldl"]
                    if run_child(dgxx)[0] == 0:
                        sides["dynamic"] = [drunner, os.path.join(d, "input.f32"), os.path.join(d, "expected.f64"),
                                            str(a.reps)]
                    else:
                        row["dynamic_fail"] = "runner did not link"
                else:
                    row["dynamic_fail"] = lib
            if not a.skip_peers:
                for peer in ("ort", "torch"):
                    sides[peer] = [sys.executable, os.path.join(HERE, "peer.py"), peer, d, str(a.reps), str(a.threads)]
            times = {k: [] for k in sides}
            for _ in range(a.rounds):
                for side, cmd in sides.items():
                    rc, out, err, _, rss = run_child(cmd, env=threads_env, timeout=600)
                    r = parse(out)
                    if rc or "times" not in r:
                        row[f"{side}_fail"] = (err.strip().splitlines() or [f"exit {rc}"])[-1]
                        continue
                    times[side] += [float(t) for t in r["times"].split()]
                    row[f"{side}_err"] = float(r["err"])
                    row[f"{side}_mib"] = max(row.get(f"{side}_mib", 0), rss)
                    if "version" in r:
                        versions[side] = r["version"]
            for side, t in times.items():
                if t:
                    row[f"{side}_ms"] = statistics.median(t)
            rows.append(row)
            print(row, flush=True)

    emit(f"- Versions: ONNX Runtime {versions.get('ort', '-')}, PyTorch {versions.get('torch', '-')}; "
         f"batchconv-compile flags: `{a.compile_args or '(defaults)'}`.")
    emit()
    emit("| model | batch | compile s | compile MiB | batchconv ms | ORT ms | PyTorch ms | vs ORT | vs PyTorch | "
         "err batchconv | err ORT | peak MiB batchconv / ORT / PyTorch |")
    emit("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    vs_ort = []
    for r in rows:
        if "refused" in r:
            emit(f"| {r['model']} | {r['batch']} | {r['compile_s']:.0f} | {r['compile_mib']:.0f} | refused: "
                 f"{r['refused'][:120]} | | | | | | | |")
            continue
        b, o, t = r.get("batchconv_ms"), r.get("ort_ms"), r.get("torch_ms")
        fmt = lambda v: f"{v:.2f}" if v else "-"  # noqa: E731
        ro = o / b if b and o else None
        rt = t / b if b and t else None
        if ro:
            vs_ort.append(ro)
        emit(f"| {r['model']} | {r['batch']} | {r['compile_s']:.1f} | {r['compile_mib']:.0f} | {fmt(b)} | {fmt(o)} | "
             f"{fmt(t)} | {ro and f'{ro:.2f}x' or '-'} | {rt and f'{rt:.2f}x' or '-'} | "
             f"{r.get('batchconv_err', float('nan')):.1e} | {r.get('ort_err', float('nan')):.1e} | "
             f"{r.get('batchconv_mib', 0):.0f} / {r.get('ort_mib', 0):.0f} / {r.get('torch_mib', 0):.0f} |")
    emit()
    emit(f"Geomean ORT ms / batchconv ms over {len(vs_ort)} runs: {geomean(vs_ort):.2f}x "
         "(above 1: batchconv faster).")
    if a.dynamic:
        emit()
        emit("One library per model compiled with `--dynamic-batch` (exported with a symbolic batch), run at "
             "each batch in the same rounds as the static builds:")
        emit()
        emit("| model | batch | dynamic compile s | dynamic ms | static ms | dynamic / static | ORT ms / dynamic ms | "
             "err dynamic |")
        emit("|---|---:|---:|---:|---:|---:|---:|---:|")
        ratios = []
        for r in rows:
            dm, sm, o = r.get("dynamic_ms"), r.get("batchconv_ms"), r.get("ort_ms")
            if not dm:
                emit(f"| {r['model']} | {r['batch']} | | {r.get('dynamic_fail', '-')[:120]} | | | | |")
                continue
            ratios.append(dm / sm if sm else float("nan"))
            emit(f"| {r['model']} | {r['batch']} | {r.get('dynamic_compile_s', 0):.1f} | {dm:.2f} | "
                 f"{sm and f'{sm:.2f}' or '-'} | {sm and f'{dm / sm:.2f}' or '-'} | {o and f'{o / dm:.2f}x' or '-'} | "
                 f"{r.get('dynamic_err', float('nan')):.1e} |")
        emit()
        emit(f"Geomean dynamic ms / static ms over {len(ratios)} runs: {geomean(ratios):.2f} (1.10 = 10% slower).")
    if a.baseline_args:
        emit()
        emit(f"The same models compiled with `{a.baseline_args}` added (baseline), in the same rounds:")
        emit()
        emit("| model | batch | compile s: default / baseline | ms: default / baseline | baseline ms / default ms | "
             "err baseline |")
        emit("|---|---:|---:|---:|---:|---:|")
        ratios = []
        for r in rows:
            bm, sm = r.get("baseline_ms"), r.get("batchconv_ms")
            if not bm or not sm:
                emit(f"| {r['model']} | {r['batch']} | | {r.get('baseline_fail', '-')[:120]} | | |")
                continue
            ratios.append(bm / sm)
            emit(f"| {r['model']} | {r['batch']} | {r['compile_s']:.1f} / {r.get('baseline_compile_s', 0):.1f} | "
                 f"{sm:.2f} / {bm:.2f} | {bm / sm:.2f} | {r.get('baseline_err', float('nan')):.1e} |")
        emit()
        emit(f"Geomean baseline ms / default ms over {len(ratios)} runs: {geomean(ratios):.2f} "
             "(above 1: the default is faster).")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
