#!/usr/bin/env python3
"""Writes the synthetic PyTorch-profiler trace tests/data/profile-vgg16-cifar10.json
and the per-layer times it encodes, tests/data/profile-vgg16-cifar10.expected.

Maintainer tool (plain Python 3, no packages); the outputs are committed and the
tests only read them.  Run from anywhere:  python3 tests/data/gen_profile_fixture.py

The trace has the shape torch.profiler's export_chrome_trace writes for one
training step recorded by models/gen/profile_model.py, and exercises every rule
of sim/report/reportprof.h:
  - "fwd:LAYER" ranges on the main CPU thread, "bwd:LAYER" ranges on the
    autograd thread, one of each for every layer of models/vgg16-cifar10.yaml;
  - aten ops (cpu_op) and cudaLaunchKernel (cuda_runtime) inside the ranges;
    the kernels run later on GPU streams 7 and 8 (pid 0);
  - kernels tied to their launch by args.correlation, and for every third
    layer by the ac2g flow (ph s/f) only (no correlation in args);
  - in backward, a weight-gradient kernel on stream 8 that partly overlaps the
    data-gradient kernel on stream 7 (the layer's time is the union);
  - gpu_user_annotation mirrors of every range (to be ignored), a ProfilerStep#
    range, arsim:batch=32 and arsim:precision=fp32 ranges, a "fwd:loss" range
    the model lacks, and loss/optimizer kernels outside every layer range.
All times are integer nanoseconds here, written as microseconds with three
decimals; the expected times are exact sums (unions) of kernel durations.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PID, MAIN, AUTOGRAD = 4242, 4242, 4250
GPU_PID, S7, S8 = 0, 7, 8


def layers_of(model_file):
    names = []
    with open(model_file) as f:
        for line in f:
            m = re.match(r"\s*- \{name: ([^,]+), kind: (\w+),", line)
            if m:
                names.append((m.group(1), m.group(2)))
    return names


def us(ns):
    """Nanoseconds as a microsecond number with three decimals."""
    return round(ns / 1000.0, 3)


class Trace:
    def __init__(self):
        self.events = []
        self.corr = 100
        self.stream_free = {S7: 0, S8: 0}
        self.kernel_ns = {}  # (layer, phase) -> list of (start, dur) ns

    def x(self, name, cat, pid, tid, ts, dur, args=None):
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
              "ts": us(ts), "dur": us(dur)}
        if args:
            ev["args"] = args
        self.events.append(ev)

    def launch(self, tid, t, kname, dur, stream, owner, use_corr, start=None):
        """cudaLaunchKernel at CPU time t on tid; the kernel runs dur ns on
        stream (from `start` if given, else when the stream is free)."""
        c = self.corr
        self.corr += 1
        args = {"correlation": c, "External id": c} if use_corr else {"External id": c}
        self.x("cudaLaunchKernel", "cuda_runtime", PID, tid, t, 4000, args)
        k0 = start if start is not None else max(t + 6000, self.stream_free[stream])
        self.stream_free[stream] = max(self.stream_free[stream], k0 + dur)
        kargs = {"device": 0, "stream": stream, "External id": c}
        if use_corr:
            kargs["correlation"] = c
        self.x(kname, "kernel", GPU_PID, stream, k0, dur, kargs)
        self.events.append({"ph": "s", "id": c, "pid": PID, "tid": tid, "ts": us(t + 1000),
                            "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": c, "pid": GPU_PID, "tid": stream, "ts": us(k0),
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        if owner:
            self.kernel_ns.setdefault(owner, []).append((k0, dur))
        return k0, dur

    def layer_range(self, tid, name, t0, t1):
        self.x(name, "user_annotation", PID, tid, t0, t1 - t0)


def union_ns(iv):
    total, end = 0, None
    for s, d in sorted(iv):
        if end is None or s >= end:
            total += d
            end = s + d
        elif s + d > end:
            total += s + d - end
            end = s + d
    return total


def main():
    layers = layers_of(os.path.join(ROOT, "models", "vgg16-cifar10.yaml"))
    assert len(layers) == 21, layers
    tr = Trace()
    t = 1_000_000  # ns
    step0 = t
    tr.x("arsim:batch=32", "user_annotation", PID, MAIN, t, 1000)
    tr.x("arsim:precision=fp32", "user_annotation", PID, MAIN, t + 2000, 1000)
    t += 10_000
    mirrors = []
    # forward, input side first
    for i, (name, kind) in enumerate(layers):
        r0 = t
        t += 3000
        op = "aten::conv2d" if kind == "conv" else "aten::linear" if kind == "fc" else "aten::max_pool2d"
        o0 = t
        kernels = [("main", 20_000 + 1_537 * (i + 1))]
        if kind != "pool":
            kernels.append(("relu", 3_000 + 211 * i))
        for kn, dur in kernels:
            t += 2000
            k0, _ = tr.launch(MAIN, t, "void %s_%s_fwd_kernel<float>(...)" % (kind, kn), dur, S7,
                              (name, "fwd"), use_corr=(i % 3 != 2))
            mirrors.append(("fwd:" + name, k0))
            t += 5000
        tr.x(op, "cpu_op", PID, MAIN, o0, t - o0 + 1000, {"External id": i})
        t += 4000
        tr.layer_range(MAIN, "fwd:" + name, r0, t)
        t += 2000
    # the loss: a range the model lacks, and its kernel
    r0 = t
    tr.launch(MAIN, t + 2000, "void softmax_xent_fwd(...)", 9_000, S7, None, True)
    t += 10_000
    tr.layer_range(MAIN, "fwd:loss", r0, t)
    t += 5000
    # backward on the autograd thread, output side first
    t = max(t, tr.stream_free[S7]) + 20_000
    for i in reversed(range(len(layers))):
        name, kind = layers[i]
        r0 = t
        t += 3000
        if kind != "pool":
            t += 2000
            tr.launch(AUTOGRAD, t, "void relu_bwd(...)", 2_500 + 97 * i, S7, (name, "bwd"), use_corr=(i % 3 != 2))
            t += 5000
        t += 2000
        dg0, dgd = tr.launch(AUTOGRAD, t, "void %s_dgrad(...)" % kind, 30_000 + 2_113 * (i + 1), S7,
                             (name, "bwd"), use_corr=(i % 3 != 2))
        t += 5000
        if kind != "pool":
            # weight gradient on stream 8, starting halfway into the data gradient
            wg0 = dg0 + dgd // 2
            tr.launch(AUTOGRAD, t, "void %s_wgrad(...)" % kind, 25_000 + 1_009 * i, S8, (name, "bwd"),
                      use_corr=(i % 3 != 2), start=wg0)
            t += 5000
        t += 3000
        tr.layer_range(AUTOGRAD, "bwd:" + name, r0, t)
        mirrors.append(("bwd:" + name, dg0))
        t += 2000
        t = max(t, min(tr.stream_free.values()) - 40_000)
    # optimizer: outside every layer range
    t = max(t, max(tr.stream_free.values())) + 10_000
    tr.launch(MAIN, t, "void sgd_update(...)", 40_000, S7, None, True)
    t += 60_000
    tr.x("ProfilerStep#3", "user_annotation", PID, MAIN, step0 - 500, t - step0 + 1000)
    # GPU mirrors of the ranges (gpu_user_annotation): must be ignored
    for nm, k0 in mirrors:
        tr.x(nm, "gpu_user_annotation", GPU_PID, S7, k0, 1_000_000)

    meta = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}},
            {"ph": "M", "name": "thread_name", "pid": PID, "tid": MAIN, "args": {"name": "thread 4242 (python3)"}},
            {"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}}]
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048,
                              "computeMajor": 7, "computeMinor": 0}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": meta + sorted(tr.events, key=lambda e: (e["ts"], e["ph"])),
        "traceName": "profile-vgg16-cifar10.json",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
    }
    with open(os.path.join(HERE, "profile-vgg16-cifar10.json"), "w") as f:
        json.dump(trace, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "profile-vgg16-cifar10.expected"), "w") as f:
        f.write("# layer fwd_ms bwd_ms: what tests/data/profile-vgg16-cifar10.json encodes\n")
        f.write("# (sum of each layer's forward kernels; union of its backward kernels, ms).\n")
        f.write("# Written by tests/data/gen_profile_fixture.py.\n")
        for name, _ in layers:
            fwd = union_ns(tr.kernel_ns[(name, "fwd")])
            bwd = union_ns(tr.kernel_ns[(name, "bwd")])
            f.write("%s %.6f %.6f\n" % (name, fwd / 1e6, bwd / 1e6))


if __name__ == "__main__":
    main()
