#!/usr/bin/env python3
"""overlap_cost.py - what overlapping communication with compute costs on one
GPU, and what DDP adds of its own: the measurements behind the GPU defaults of
`comm.interference`, `comm.slowdown` and DDP's overhead terms
(docs/explanation/gpu-overlap.md).

Maintainer tool: needs a CUDA GPU, PyTorch, torchvision and CuPy; not needed
to build or test arsim. Every section writes one JSON line per measurement,
flushed as it goes, so a run cut short keeps what it measured.

    python3 validate/h100/overlap_cost.py OUTDIR [--only interference,ddp,llama] [--quick]

Sections:
  interference  a reduce-copy kernel (c = a + b over 256 MiB buffers, float4,
                640 threads a block as an NCCL channel's CTA) on k blocks of
                its own stream, free-running or throttled to an output rate,
                beside four workloads on the default stream: a VGG-16 and a
                ResNet-50 training step (torchvision, TF32), a bf16 GEMM
                (compute-bound) and a 1 GiB device copy (memory-bound). Each
                line: the workload's median time alone and beside the kernel,
                and the kernel's byte rate alone and beside the workload.
  ddp           DistributedDataParallel at world size 1 with the NCCL backend
                against the plain step (same model, same batch): steady-state
                step, the first and second iterations (bucket rebuild),
                no_sync (hooks without all-reduce) and 1 MB buckets.
  llama         one Llama-3 block (RMSNorm, GQA attention with RoPE and
                PyTorch SDPA, SwiGLU) in bf16 at sequence 8192, 8B and 70B
                widths, batch 1 and 2: forward and forward+backward times and
                saved-activation bytes; the output head with its loss.
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models", "gen"))

KERNEL = r"""
extern "C" __global__ void reduce_copy(const float4* __restrict__ a, const float4* __restrict__ b,
                                       float4* __restrict__ c, long long n4, double bytes_per_ns_block,
                                       const volatile int* stop, unsigned long long* out_bytes,
                                       unsigned long long* out_ns, unsigned long long max_ns)
{
    extern __shared__ float4 pad[];          /* footprint only, as a channel's buffers */
    __shared__ int quit;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long per = (n4 + gridDim.x - 1) / gridDim.x;
    long long lo = (long long)blockIdx.x * per;
    long long hi = lo + per < n4 ? lo + per : n4;
    long long step = (long long)blockDim.x * 4;
    unsigned long long done = 0;
    if (threadIdx.x == 0) pad[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (;;) {
        for (long long base = lo; base < hi; base += step) {
#pragma unroll
            for (int u = 0; u < 4; u++) {
                long long i = base + (long long)u * blockDim.x + threadIdx.x;
                if (i < hi) {
                    float4 x = a[i], y = b[i];
                    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
                }
            }
            long long cnt = hi - base < step ? hi - base : step;
            done += (unsigned long long)cnt * 16ULL;
            if (threadIdx.x == 0) {
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
                quit = *stop || t - t0 > max_ns;
                if (!quit && bytes_per_ns_block > 0.0) {
                    double target = (double)t0 + (double)done / bytes_per_ns_block;
                    do {
                        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
                    } while ((double)t < target && !*stop && t - t0 <= max_ns);
                }
            }
            __syncthreads();
            int q = quit;
            __syncthreads();
            if (q) goto end;
        }
    }
end:
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        out_bytes[blockIdx.x] = done;
        out_ns[blockIdx.x] = t - t0;
    }
}
"""

THREADS = 640           # NCCL_MAX_NTHREADS: one CTA per channel
SMEM = 64 * 1024        # dynamic shared memory a block holds (bytes)
BUF_BYTES = 256 << 20   # each of a, b, c: well beyond the 50 MB L2
MAX_NS = 20 * 10**9     # the kernel stops itself after 20 s: no hang if a stop flag never comes


class Out:
    """One JSONL file per section under the output folder; every line flushed."""

    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.files = {}

    def put(self, section, rec):
        f = self.files.get(section)
        if f is None:
            f = self.files[section] = open(os.path.join(self.folder, section + ".jsonl"), "a")
        f.write(json.dumps(rec, sort_keys=True) + "\n")
        f.flush()
        print(section, json.dumps(rec, sort_keys=True), flush=True)


def median_ms(torch, fn, reps, warmup):
    """Median of `reps` calls of fn, each timed by CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for e0, e1 in evs:
        e0.record()
        fn()
        e1.record()
    evs[-1][1].synchronize()   # this stream only: a kernel on another stream may still run
    ms = [e0.elapsed_time(e1) for e0, e1 in evs]
    return statistics.median(ms), min(ms), max(ms)


def workloads(torch, quick):
    """(name, step function, reps, warmup) for the interference section."""
    import profile_model
    out = []
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    for name, batch in (("vgg16", 32), ("resnet50", 128)):
        model, _, make_batch = profile_model.build(name, batch, "cuda")
        model.to("cuda").train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step(model=model, make_batch=make_batch, opt=opt):
            inputs, loss_fn = make_batch()
            opt.zero_grad(set_to_none=True)
            loss_fn(model(*inputs)).backward()
            opt.step()
        out.append(("%s-tf32-b%d" % (name, batch), step, 5 if quick else 12, 3))
    n = 8192
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out.append(("gemm-bf16-8192", lambda: torch.matmul(x, y), 10 if quick else 40, 5))
    src = torch.empty(1 << 28, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    out.append(("copy-1GiB", lambda: dst.copy_(src), 10 if quick else 40, 5))
    return out


def section_interference(torch, out, quick):
    import cupy as cp
    mod = cp.RawModule(code=KERNEL, options=("-std=c++17",))
    kern = mod.get_function("reduce_copy")
    kern.max_dynamic_shared_size_bytes = SMEM
    n4 = BUF_BYTES // 16
    a = torch.randn(BUF_BYTES // 4, device="cuda")
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    stop = torch.zeros(1, device="cuda", dtype=torch.int32)
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    sm = torch.cuda.get_device_properties(0).multi_processor_count

    def run_beside(k, rate_gbs, fn):
        """Start the kernel on k blocks, run fn on the main stream, stop it;
        returns (fn's result, kernel bytes, kernel ns)."""
        ob = torch.zeros(k, device="cuda", dtype=torch.int64)
        ons = torch.zeros(k, device="cuda", dtype=torch.int64)
        with torch.cuda.stream(side):
            stop.zero_()
            ready = torch.cuda.Event()
            ready.record(side)
            with cp.cuda.ExternalStream(side.cuda_stream):
                kern((k,), (THREADS,), (cp.asarray(a), cp.asarray(b), cp.asarray(c), cp.int64(n4),
                                        cp.float64(rate_gbs / k if rate_gbs else 0.0), cp.asarray(stop),
                                        cp.asarray(ob), cp.asarray(ons), cp.uint64(MAX_NS)), shared_mem=SMEM)
        main.wait_event(ready)
        res = fn()
        stop.fill_(1)
        torch.cuda.synchronize()
        return res, int(ob.sum().item()), int(ons.max().item())

    def alone_rate(k, rate_gbs):
        _, nb, ns = run_beside(k, rate_gbs, lambda: time.sleep(0.25 if not quick else 0.1))
        return nb / ns if ns else 0.0

    ks = [1, 2, 4, 8, 16, 24, 32] if not quick else [4, 16]
    throttled = [(k, 370.0) for k in (8, 16, 24, 32)] if not quick else [(16, 370.0)]
    settings = [(k, 0.0) for k in ks] + throttled
    comm_alone = {}
    for k, r in settings:
        comm_alone[(k, r)] = alone_rate(k, r)
        out.put("interference", {"workload": "none", "k": k, "rate_limit_GBps": r,
                                 "comm_out_GBps_alone": round(comm_alone[(k, r)], 3),
                                 "threads": THREADS, "smem_bytes": SMEM, "sms": sm})
    for name, fn, reps, warm in workloads(torch, quick):
        base = median_ms(torch, fn, reps, warm)
        out.put("interference", {"workload": name, "k": 0, "rate_limit_GBps": 0.0,
                                 "median_ms": round(base[0], 4), "min_ms": round(base[1], 4),
                                 "max_ms": round(base[2], 4), "reps": reps})
        for k, r in settings:
            (med, lo, hi), nb, ns = run_beside(k, r, lambda: median_ms(torch, fn, reps, warm))
            rate = nb / ns if ns else 0.0
            out.put("interference", {"self_stopped": ns >= MAX_NS,"workload": name, "k": k, "rate_limit_GBps": r,
                                     "median_ms": round(med, 4), "min_ms": round(lo, 4), "max_ms": round(hi, 4),
                                     "reps": reps, "slowdown": round(med / base[0] - 1.0, 5),
                                     "comm_out_GBps_beside": round(rate, 3),
                                     "comm_out_GBps_alone": round(comm_alone[(k, r)], 3)})
    del a, b, c
    torch.cuda.empty_cache()


def wall_steps(torch, step, n):
    """Wall-clock ms of n synchronized steps (median, min, max)."""
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms), min(ms), max(ms)


def section_ddp(torch, out, quick):
    import torch.distributed as dist
    import profile_model
    from torch.nn.parallel import DistributedDataParallel as DDP
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    n = 8 if quick else 25
    for name, batch in (("vgg16", 32), ("resnet50", 128)):
        for variant in ("plain", "ddp", "ddp-no_sync", "ddp-bucket1MB", "ddp-grad_view"):
            torch.manual_seed(0)
            model, _, make_batch = profile_model.build(name, batch, "cuda")
            model.to("cuda").train()
            if variant != "plain":
                kw = {"device_ids": [0]}
                if variant == "ddp-bucket1MB":
                    kw["bucket_cap_mb"] = 1
                if variant == "ddp-grad_view":
                    kw["gradient_as_bucket_view"] = True
                model = DDP(model, **kw)
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

            def step(model=model, make_batch=make_batch, opt=opt, variant=variant):
                inputs, loss_fn = make_batch()
                opt.zero_grad(set_to_none=True)
                if variant == "ddp-no_sync":
                    with model.no_sync():
                        loss_fn(model(*inputs)).backward()
                else:
                    loss_fn(model(*inputs)).backward()
                opt.step()
            first = wall_steps(torch, step, 1)[0]
            second = wall_steps(torch, step, 1)[0]
            wall_steps(torch, step, 3)
            med, lo, hi = wall_steps(torch, step, n)
            rec = {"model": name, "batch": batch, "precision": "tf32", "variant": variant,
                   "first_ms": round(first, 3), "second_ms": round(second, 3),
                   "median_ms": round(med, 3), "min_ms": round(lo, 3), "max_ms": round(hi, 3), "steps": n,
                   "params": sum(p.numel() for p in model.parameters())}
            if variant != "plain":
                try:
                    log = model._get_ddp_logging_data()
                    for key in ("bucket_sizes", "num_buckets_reduced", "rebuilt_bucket_sizes",
                                "has_rebuilt_buckets", "avg_forward_compute_time",
                                "avg_backward_compute_time", "avg_backward_comm_time",
                                "avg_backward_compute_comm_overlap_time"):
                        if key in log:
                            rec[key] = log[key] if isinstance(log[key], (int, float)) else str(log[key])
                except Exception as e:  # logging data is best effort
                    rec["logging_error"] = str(e)[:200]
            out.put("ddp", rec)
            del model, opt
            torch.cuda.empty_cache()
    dist.destroy_process_group()


def section_llama(torch, out, quick):
    import torch.nn as nn
    import torch.nn.functional as F

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * self.w

    def rope(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Block(nn.Module):
        def __init__(self, d, heads, kv, ffn):
            super().__init__()
            self.h, self.kv, self.hd = heads, kv, d // heads
            self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
            self.wq = nn.Linear(d, d, bias=False)
            self.wk = nn.Linear(d, kv * self.hd, bias=False)
            self.wv = nn.Linear(d, kv * self.hd, bias=False)
            self.wo = nn.Linear(d, d, bias=False)
            self.w1 = nn.Linear(d, ffn, bias=False)
            self.w3 = nn.Linear(d, ffn, bias=False)
            self.w2 = nn.Linear(ffn, d, bias=False)

        def forward(self, x, cos, sin):
            bsz, s, d = x.shape
            h = self.n1(x)
            q = self.wq(h).view(bsz, s, self.h, self.hd).transpose(1, 2)
            k = self.wk(h).view(bsz, s, self.kv, self.hd).transpose(1, 2)
            v = self.wv(h).view(bsz, s, self.kv, self.hd).transpose(1, 2)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.wo(a.transpose(1, 2).reshape(bsz, s, d))
            h = self.n2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    seq = 8192
    shapes = (("llama3-8b", 4096, 32, 8, 14336), ("llama3-70b", 8192, 64, 8, 28672))
    for tag, d, heads, kv, ffn in shapes:
        for bsz in ((1,) if quick else (1, 2)):
            torch.manual_seed(0)
            blk = Block(d, heads, kv, ffn).to("cuda", torch.bfloat16)
            hd = d // heads
            inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))
            ang = torch.outer(torch.arange(seq, device="cuda").float(), inv)
            cos = torch.cat((ang.cos(), ang.cos()), -1).to(torch.bfloat16)
            sin = torch.cat((ang.sin(), ang.sin()), -1).to(torch.bfloat16)
            x = torch.randn(bsz, seq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            g = torch.randn(bsz, seq, d, device="cuda", dtype=torch.bfloat16)

            def fwd():
                with torch.no_grad():
                    blk(x, cos, sin)

            def fwdbwd():
                y = blk(x, cos, sin)
                y.backward(g)
            reps = 5 if quick else 15
            f = median_ms(torch, fwd, reps, 3)
            fb = median_ms(torch, fwdbwd, reps, 3)
            torch.cuda.synchronize()
            m0 = torch.cuda.memory_allocated()
            y = blk(x, cos, sin)
            torch.cuda.synchronize()
            saved = torch.cuda.memory_allocated() - m0
            del y
            params = sum(p.numel() for p in blk.parameters())
            out.put("llama", {"model": tag, "part": "block", "batch": bsz, "seq": seq, "dtype": "bf16",
                              "params": params, "fwd_ms": round(f[0], 4), "fwdbwd_ms": round(fb[0], 4),
                              "bwd_ms": round(fb[0] - f[0], 4), "fwd_min_ms": round(f[1], 4),
                              "fwdbwd_min_ms": round(fb[1], 4), "saved_bytes": int(saved)})
            del blk, x, g
            torch.cuda.empty_cache()
        # the output projection and its loss over bsz*seq tokens (vocab 128256)
        for bsz in ((1,) if quick else (1, 2)):
            head = nn.Linear(d, 128256, bias=False).to("cuda", torch.bfloat16)
            h = torch.randn(bsz * seq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            tgt = torch.randint(0, 128256, (bsz * seq,), device="cuda")

            def hfwd():
                with torch.no_grad():
                    F.cross_entropy(head(h).float(), tgt)

            def hfb():
                F.cross_entropy(head(h).float(), tgt).backward()
            f = median_ms(torch, hfwd, 5 if quick else 10, 2)
            fb = median_ms(torch, hfb, 5 if quick else 10, 2)
            out.put("llama", {"model": tag, "part": "head+loss", "batch": bsz, "seq": seq, "dtype": "bf16",
                              "params": d * 128256, "fwd_ms": round(f[0], 4), "fwdbwd_ms": round(fb[0], 4),
                              "bwd_ms": round(fb[0] - f[0], 4)})
            del head, h
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="folder for the JSONL files (created)")
    ap.add_argument("--only", default="interference,ddp,llama",
                    help="comma-separated sections, in the order to run (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer settings and repetitions (a smoke run)")
    a = ap.parse_args()
    sections = {"interference": section_interference, "ddp": section_ddp, "llama": section_llama}
    names = [s for s in a.only.split(",") if s]
    for s in names:
        if s not in sections:
            ap.error("--only: unknown section '%s'; expected interference, ddp or llama" % s)
    import torch
    out = Out(a.out)
    p = torch.cuda.get_device_properties(0)
    out.put("env", {"gpu": torch.cuda.get_device_name(), "sms": p.multi_processor_count,
                    "memory_bytes": p.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
                    "cudnn": torch.backends.cudnn.version(),
                    "nccl": str(torch.cuda.nccl.version()), "quick": a.quick})
    rc = 0
    for s in names:
        t0 = time.time()
        try:
            sections[s](torch, out, a.quick)
        except Exception:
            traceback.print_exc()
            print("!! section %s failed" % s, flush=True)
            rc = 1
        print("== section %s: %.1f s" % (s, time.time() - t0), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
