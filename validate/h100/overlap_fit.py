"""overlap_fit.py - fits arsim's overlap mechanism (sim/train/interfere.h) and
DDP's own costs (sim/train/ddpcost.h) to the runs of overlap_cost.py; used by
`overlap_table.py --fit` (prints) and models/gen/gen_gpus.py (writes the
parameters into models/gpus.yaml). Needs PyYAML.

The mechanism, as interfere.c computes it (docs/explanation/gpu-overlap.md):

  a task's time splits into a compute-bound share a_c and a memory-bound
  share a_m (arsim's roofline of each layer on the GPU; a measured layer
  keeps its measured time and takes the roofline's verdict on which bound);
  k channels of a sync in flight hold k of the S SMs and move the wire rate
  R, beta HBM bytes per wire byte;
  channels' capacity alone   cap(k) = k c / (1 + k c / C)
  a sync's rate beside a task R' = min(R, cap(k) r),
      r = a_c / (1 + sc q) + a_m / (1 + sm q) + (1 - a_c - a_m),
      sc q = sigma_c / (1 + lambda k / S), likewise sigma_m
  comm slow-down             s = min(R, cap(k)) / R' - 1
  compute slow-down          f = a_c (phi + k / (S - k)) + a_m rho / (1 - rho),
      rho = beta R' / HBM.

Fitted here: c and C (a linear least-squares fit of 1/cap = (1/c)(1/k) +
1/C to the kernel's rate alone), sigma_c, sigma_m, lambda (least squares of
log R' against the kernel's rate beside each workload, with its measured
rate alone), phi (least squares of f, in closed form, with the SM share's
gain fixed at 1 and the byte share's at 1: the two mechanisms; the free fit
of both gains is printed as a check). The measured kernel reads two bytes
and writes one per byte it outputs: beta = 3.
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BETA = 3.0
PREC_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
# each interference workload: the measured arsim model of the same step, or a fixed split
WORKLOADS = {"vgg16-tf32-b32": "vgg16-h100", "resnet50-tf32-b128": "resnet50-h100",
             "gemm-bf16-8192": (1.0, 0.0), "copy-1GiB": (0.0, 1.0)}


def gpu_entry(key):
    import yaml
    with open(os.path.join(ROOT, "models", "gpus.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["gpus"][key]


def task_shares(gpu, model):
    """(a_c, a_m) of one training step of a measured model: each layer pass's
    measured time goes to the bound its roofline names (FLOP time >= memory
    time: compute; a layer with neither counts as compute), as interfere.c's
    interfere_layer_task does for a measured layer."""
    import yaml
    with open(os.path.join(ROOT, "models", model + ".yaml"), encoding="utf-8") as fh:
        m = yaml.safe_load(fh)
    prec = m["measured"]["precision"]
    peak = (gpu["tf32_tflops"] if prec == "tf32" else gpu["fp16_tflops"]) * 1e12
    eff = gpu["tensor_efficiency"]
    comp = mem = 0.0
    for layer in m["layers"]:
        tf = layer["flops"] / (peak * eff[layer["kind"]])
        tm = layer["mem_bytes"] * PREC_BYTES[prec] / 4.0 / (gpu["mem_GBps"] * 1e9)
        t = layer["fwd_ms"] + layer["bwd_ms"]   # backward scales both terms alike: same verdict
        if tf >= tm:
            comp += t
        else:
            mem += t
    return comp / (comp + mem), mem / (comp + mem)


def lstsq(rows, y):
    """Least squares by the normal equations (a handful of unknowns)."""
    n = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * v for r, v in zip(rows, y))]
         for i in range(n)]
    for i in range(n):
        piv = m[i][i]
        m[i] = [v / piv for v in m[i]]
        for r in range(n):
            if r != i:
                f = m[r][i]
                m[r] = [a - f * b for a, b in zip(m[r], m[i])]
    return [m[i][n] for i in range(n)]


def argmin(f, lo, hi, iters=80):
    """Ternary search of a unimodal f over [lo, hi]."""
    for _ in range(iters):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(a) < f(b):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def rate_factor(p, ac, am, k, sms):
    q = 1 + p["lambda"] * k / sms
    return ac / (1 + p["sigma_c"] / q) + am / (1 + p["sigma_m"] / q) + (1 - ac - am)


def capacity(p, k):
    return k * p["c"] / (1 + k * p["c"] / p["C"])


def predict(p, ac, am, k, wire, sms, hbm):
    """(f, s, R') of the mechanism, rates in GB/s."""
    cap = capacity(p, k)
    beside = min(wire, cap * rate_factor(p, ac, am, k, sms))
    s = min(wire, cap) / beside - 1
    rho = BETA * beside / hbm
    return ac * (p["phi"] + k / (sms - k)) + am * rho / (1 - rho), s, beside


def points(runs, load):
    pts, alone = [], []
    for run in runs:
        for r in load(run, "interference"):
            if r["workload"] == "none":
                if r["rate_limit_GBps"] == 0:
                    alone.append((r["k"], r["comm_out_GBps_alone"]))
            elif r["k"] > 0:
                pts.append((run, r))
    return pts, alone


def fit_interference(runs, load, gpu=None):
    """The parameters (dict) and, per point, (run, record, a_c, a_m, f, s, R').
    gpu: the H100's entry as models/gpus.yaml has it (None: read the file)."""
    env = load(runs[0], "env")[0]
    sms = env["sms"]
    gpu = gpu or gpu_entry("h100")
    hbm = gpu["mem_GBps"]
    shares = {w: (v if isinstance(v, tuple) else task_shares(gpu, v)) for w, v in WORKLOADS.items()}
    pts, alone = points(runs, load)
    inv_c, inv_C = lstsq([[1.0 / k, 1.0] for k, _ in alone], [1.0 / r for _, r in alone])
    p = {"sms": sms, "hbm_GBps": hbm, "c": 1 / inv_c, "C": 1 / inv_C, "shares": shares}

    def comm_err(q):
        e = 0.0
        for _, r in pts:
            ac, am = shares[r["workload"]]
            wire = r["rate_limit_GBps"] or r["comm_out_GBps_alone"]
            pred = min(wire, r["comm_out_GBps_alone"] * rate_factor(q, ac, am, r["k"], sms))
            e += math.log(pred / r["comm_out_GBps_beside"]) ** 2
        return e
    q = {"sigma_c": 0.3, "sigma_m": 3.0, "lambda": 1.0}
    for _ in range(12):
        for key, lo, hi in (("sigma_c", 0.0, 2.0), ("sigma_m", 0.0, 20.0), ("lambda", 0.0, 10.0)):
            q[key] = argmin(lambda v: comm_err(dict(q, **{key: v})), lo, hi)
    p.update(q)
    # phi: f - SM share - byte share = a_c phi, with the measured rate beside
    num = den = 0.0
    free = []
    for _, r in pts:
        ac, am = shares[r["workload"]]
        k = r["k"]
        rho = BETA * r["comm_out_GBps_beside"] / hbm
        x, b = k / (sms - k), rho / (1 - rho)
        num += ac * (r["slowdown"] - ac * x - am * b)
        den += ac * ac
        free.append(([ac, ac * x, am * b], r["slowdown"]))
    p["phi"] = num / den
    p["free"] = lstsq([a for a, _ in free], [v for _, v in free])
    rows = []
    for run, r in pts:
        ac, am = shares[r["workload"]]
        wire = r["rate_limit_GBps"] or capacity(p, r["k"])
        f, s, beside = predict(p, ac, am, r["k"], wire, sms, hbm)
        rows.append((run, r, ac, am, f, s, beside))
    return p, rows


def rounded(p):
    """The parameters as models/gpus.yaml carries them (GB/s and fractions)."""
    return {"floor": round(p["phi"], 3), "comm_compute": round(p["sigma_c"], 3),
            "comm_memory": round(p["sigma_m"], 2), "comm_relief": round(p["lambda"], 2),
            "channel_GBps": round(p["c"], 1), "channels_GBps": round(p["C"], -1)}


def ddp_terms(runs, load, hbm_GBps):
    """DDP's own terms at world size 1, least squares through the origin over
    both models and every run: per gradient tensor the hook (no_sync - plain),
    the all-reduce path (grad_view - no_sync), each bucket copy's kernel
    (ddp - grad_view - the copies' bytes at the memory bandwidth, two copies a
    tensor); per bucket (1 MB buckets - default, per extra bucket); the
    second iteration's excess over the steady step (the rebuilt buckets'
    first use) less the plain model's. Times in s."""
    import yaml
    obs = {"hook": [], "sync": [], "copy": [], "bucket": [], "rebuild": []}
    for run in runs:
        by = {}
        for r in load(run, "ddp"):
            by[(r["model"], r["variant"])] = r
        for model in sorted({m for m, _ in by}):
            with open(os.path.join(ROOT, "models", model + ".yaml"), encoding="utf-8") as fh:
                n = sum(len(x.get("tensors", [])) for x in yaml.safe_load(fh)["layers"])
            med = {v: by[(model, v)]["median_ms"] * 1e-3 for (m, v) in by if m == model}
            nbytes = by[(model, "plain")]["params"] * 4
            copy_bytes_s = 2 * 2.0 * nbytes / (hbm_GBps * 1e9)   # in and out, each read + write
            obs["hook"].append((n, med["ddp-no_sync"] - med["plain"], model))
            obs["sync"].append((n, med["ddp-grad_view"] - med["ddp-no_sync"], model))
            obs["copy"].append((2 * n, med["ddp"] - med["ddp-grad_view"] - copy_bytes_s, model))
            extra = by[(model, "ddp-bucket1MB")]["num_buckets_reduced"] - by[(model, "ddp")]["num_buckets_reduced"]
            obs["bucket"].append((extra, med["ddp-bucket1MB"] - med["ddp"], model))
            plain_x = by[(model, "plain")]["second_ms"] * 1e-3 - med["plain"]
            for v in ("ddp", "ddp-bucket1MB", "ddp-grad_view"):
                obs["rebuild"].append((1, by[(model, v)]["second_ms"] * 1e-3 - med[v] - plain_x, model))
    fitted = {}
    for key, o in obs.items():
        fitted[key] = sum(x * y for x, y, _ in o) / sum(x * x for x, _, _ in o)
    return fitted, obs


def ddp_predicted(runs, load, fitted, hbm_GBps):
    """Each DDP variant's overhead over the plain step, measured (run 1, run 2)
    and as ddpcost.h sums its terms with the copies' bytes (trainplan)."""
    import yaml
    print("| model | variant | buckets | measured ms (run 1, run 2) | arsim's terms ms | error ms |")
    print("|---|---|---:|---:|---:|---:|")
    data = [{(r["model"], r["variant"]): r for r in load(run, "ddp")} for run in runs]
    for (model, variant), r in data[0].items():
        if variant == "plain":
            continue
        with open(os.path.join(ROOT, "models", model + ".yaml"), encoding="utf-8") as fh:
            n = sum(len(x.get("tensors", [])) for x in yaml.safe_load(fh)["layers"])
        sync, view = variant != "ddp-no_sync", variant == "ddp-grad_view"
        pred = n * fitted["hook"]
        if sync:
            nb = r["num_buckets_reduced"]
            pred += n * fitted["sync"] + nb * fitted["bucket"]
            if not view:
                pred += 2 * n * fitted["copy"] + 2 * 2.0 * r["params"] * 4 / (hbm_GBps * 1e9)
        meas = [d[(model, variant)]["median_ms"] - d[(model, "plain")]["median_ms"] for d in data]
        print("| %s b%d | %s | %s | %s | %.2f | %+.2f |" % (
            model, r["batch"], variant, r.get("num_buckets_reduced", "-"), ", ".join("%.2f" % m for m in meas),
            1e3 * pred, 1e3 * pred - sum(meas) / len(meas)))
    print()


def anchors():
    """What the shipped parameters (models/gpus.yaml) predict for the published
    anchors that need no engine: the forum's GEMM beside a 24-block all-gather
    on an H100, and one Llama-3 8B training step's compute slow-down beside k
    channels at the channels' capacity (its shares from arsim's roofline of
    models/llama3-8b.yaml at bf16, batch 1), on the H100 and the A100."""
    import yaml
    for key in ("h100", "a100"):
        g = gpu_entry(key)
        o = g["overlap"]
        p = {"phi": o["floor"], "sigma_c": o["comm_compute"], "sigma_m": o["comm_memory"],
             "lambda": o["comm_relief"], "c": o["channel_GBps"], "C": o["channels_GBps"]}
        sms, hbm = g["sms"], g["mem_GBps"]
        if key == "h100":
            f, _, _ = predict(p, 1.0, 0.0, 24, capacity(p, 24), sms, hbm)
            print("- forum GEMM on the H100 beside 24 channels: f = %.3f, MFU 80 %% -> %.1f %% "
                  "(reported about 47 %%, f about %.2f)" % (f, 80 / (1 + f), 80 / 47 - 1))
        with open(os.path.join(ROOT, "models", "llama3-8b.yaml"), encoding="utf-8") as fh:
            layers = yaml.safe_load(fh)["layers"]
        peak = g["fp16_tflops"] * 1e12
        comp = mem = launch = 0.0
        for layer in layers:
            for mult in (1.0, 2.0):
                tf = mult * layer["flops"] / (peak * g["tensor_efficiency"][layer["kind"]])
                tm = mult * layer["mem_bytes"] * 0.5 / (hbm * 1e9)
                launch += g["launch_us"] * 1e-6
                if tf >= tm:
                    comp += tf
                else:
                    mem += tm
        tot = comp + mem + launch
        ac, am = comp / tot, mem / tot
        cells = []
        for k in (8, 16, 24, 32):
            f, s, _ = predict(p, ac, am, k, capacity(p, k), sms, hbm)
            cells.append("k=%d f %.1f %% s %.0f %%" % (k, 100 * f, 100 * s))
        print("- Llama-3 8B step on the %s (a_c %.3f, a_m %.3f): %s" % (key, ac, am, "; ".join(cells)))
    print()


def report(runs, load):
    p, rows = fit_interference(runs, load)
    sms, hbm = p["sms"], p["hbm_GBps"]
    print("### Fitted overlap parameters (H100, %d SMs, %g GB/s)\n" % (sms, hbm))
    for w, (ac, am) in p["shares"].items():
        print("- %s: compute-bound share %.3f, memory-bound %.3f" % (w, ac, am))
    print("- channel capacity alone: c = %.2f GB/s a channel, C = %.0f GB/s all channels" % (p["c"], p["C"]))
    print("- comm slow-down: sigma_c = %.3f, sigma_m = %.3f, lambda = %.3f" % (p["sigma_c"], p["sigma_m"],
                                                                          p["lambda"]))
    print("- compute floor phi = %.4f (SM share and byte share at gain 1)" % p["phi"])
    print("- check, all three gains free: phi %.4f, SM-share gain %.3f, byte-share gain %.3f" % tuple(p["free"]))
    print("- as models/gpus.yaml carries them: %s\n" % ", ".join("%s %s" % kv for kv in rounded(p).items()))
    print("| workload | run | k | cap | f measured | f predicted | error | s measured | s predicted | error |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    per = {}
    for run, r, ac, am, f, s, beside in rows:
        s_meas = r["comm_out_GBps_alone"] / r["comm_out_GBps_beside"] - 1
        ef, es = 100 * (f - r["slowdown"]), 100 * (s - s_meas)
        per.setdefault(r["workload"], []).append((ef, es))
        print("| %s | %s | %d | %s | %.1f %% | %.1f %% | %+.1f | %.0f %% | %.0f %% | %+.0f |" % (
            r["workload"], os.path.basename(run), r["k"], "%g" % r["rate_limit_GBps"] if r["rate_limit_GBps"] else "-",
            100 * r["slowdown"], 100 * f, ef, 100 * s_meas, 100 * s, es))
    print("\n| workload | points | f error rms | f error max | f error mean | s error rms | s error max |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for w, e in per.items():
        n = len(e)
        print("| %s | %d | %.1f | %.1f | %+.1f | %.0f | %.0f |" % (
            w, n, math.sqrt(sum(a * a for a, _ in e) / n), max(abs(a) for a, _ in e), sum(a for a, _ in e) / n,
            math.sqrt(sum(b * b for _, b in e) / n), max(abs(b) for _, b in e)))
    print("\n(errors in points: predicted minus measured; s from the kernel's rate alone over beside)\n")
    fitted, obs = ddp_terms(runs, load, hbm)
    print("### DDP's own terms at world size 1 (fitted through the origin)\n")
    print("| term | fitted | each observation: model, regressor, measured, predicted |")
    print("|---|---:|---|")
    for key, o in obs.items():
        cells = "; ".join("%s %d: %.3f / %.3f ms" % (m, x, 1e3 * y, 1e3 * fitted[key] * x) for x, y, m in o)
        print("| %s | %.2f us | %s |" % (key, 1e6 * fitted[key], cells))
    print()
    ddp_predicted(runs, load, fitted, hbm)
    print("### What the shipped parameters predict for published anchors\n")
    anchors()
