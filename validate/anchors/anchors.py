#!/usr/bin/env python3
"""anchors.py - arsim against the published training anchors of the GPU
overlap model (docs/explanation/gpu-overlap.md, "Published anchors").

Usage: python3 validate/anchors/anchors.py [ARSIM] [--fit | --phases] [--set KEY=VALUE ...]

Runs each anchor's scenarios twice: "before" with comm.overlap false
(arsim before issue 35: overlap costs nothing) and "after" with the
shipped defaults (the overlap mechanism and DDP's own costs), and prints
one Markdown row per figure: the published value, arsim's before and after,
and their errors in points. Lee et al.'s figures are over their setups,
lee-fsdp.yaml once per model and node (LEE_MODELS, LEE_NODES). Standard
library only; extra --set arguments go to every run (a sensitivity check:
--set comm.channels=16).

python3 validate/anchors/anchors.py [ARSIM] --fit derives the DDP paper
scenarios' network from the paper's own figures (FIG6_RESNET, FIG8 below):
the rate at which arsim's non-overlapped ResNet-50 run spends Figure 6's
share of its time in communication, and the latency at which per-tensor
buckets cost what Figure 8 shows, for each backend (NCCL: the NIC of
nodes/ddp-paper-server.yaml; Gloo: the star's links); then prints what the
files carry beside Figure 8's absolute latencies.

python3 validate/anchors/anchors.py [ARSIM] --phases is a sensitivity
check, not the shipped rows: the DDP paper's four rows with arsim's
compute set per phase to Figure 6's non-overlapped bars (FIG6_PHASES):
forward with the optimizer step, and the backward, each in the ratio to
the run's own communication that the bar shows. The forward through a
copy of the V100 entry with every compute time scaled (as computescale
does; the reduction cost comm.gamma held at the V100's), the backward
through compute.backward_ratio; it prints the phases arsim then runs and
the rows before and after.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(arsim, scenario, sets):
    """The results of one run, keyed by policy name."""
    cmd = [arsim, "run", os.path.join(HERE, scenario), "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["policy"]: r for r in json.loads(out)["results"]}


def time_saved(r):
    """Overlap's gain as Li et al. Figure 6 gives it, %: 1 - t(overlap) / t(no overlap)
    (each bar normalized to its non-overlapped run)."""
    return 100 * (1 - r["overlap"]["iteration_s"] / r["no-overlap"]["iteration_s"])


def pair(scenario, extra, figure):
    """An anchor's figure from one scenario: figure(results), the runs given extra --set."""
    return lambda arsim, sets: figure(run(arsim, scenario, sets + extra))


# Lee et al.'s workloads as a reading note of the paper gives them (docs/
# explanation/gpu-overlap.md, "Lee et al."): GPT-3 XL to 13B under ZeRO-3
# (FSDP) on one node of 4 GPUs, H100 and A100; lee-fsdp.yaml runs one,
# --set picks the model and the node. The models are gen_lee_models.py's.
LEE_MODELS = ["gpt3-xl", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b"]
LEE_NODES = ["lee-h100x4", "lee-a100x4"]


def lee_runs(arsim, sets, nodes=None, models=None):
    """The single result of each of Lee's setups (node x model)."""
    out = []
    for node in nodes or LEE_NODES:
        for model in models or LEE_MODELS:
            extra = [f"model=validate/anchors/models/{model}.yaml", f"cluster.node=validate/anchors/nodes/{node}.yaml"]
            out.append(run(arsim, "lee-fsdp.yaml", sets + extra)["fsdp"])
    return out


def slowed(r):
    """Compute's slow-down while overlapped, %: the slowdown over the compute that ran beside a sync (the
    paper's ComputeSlowdown: compute kernels' time overlapped against alone)."""
    beside = r.get("overlapped_compute_s", 0)
    return 100 * r["slowdown_s"] / beside if beside > 0 else 0.0


def seq_slower(r):
    """Sequential against overlapped, % of the overlapped step, as the paper derives it:
    E2E_seq = E2E_overlap - compute slowdown + communication hidden under compute."""
    hidden = r["comm_s"] - r["exposed_comm_s"]
    return 100 * (hidden - r["slowdown_s"]) / r["iteration_s"]


def mean(xs):
    return sum(xs) / len(xs)


# (anchor, figure(arsim, sets), published %)
ANCHORS = [
    ("Li et al. 2020, NCCL, ResNet-50: time overlap saves", pair("ddp-paper-nccl.yaml", [], time_saved), 38.0),
    ("Li et al. 2020, NCCL, BERT: time overlap saves", pair("ddp-paper-nccl.yaml", ["model=bert-base"], time_saved),
     35.2),
    ("Li et al. 2020, Gloo, ResNet-50: time overlap saves", pair("ddp-paper-gloo.yaml", [], time_saved), 26.8),
    ("Li et al. 2020, Gloo, BERT: time overlap saves", pair("ddp-paper-gloo.yaml", ["model=bert-base"], time_saved),
     21.5),
    ("Lee et al. 2025: compute slowed by overlap (average)",
     lambda a, s: mean([slowed(r) for r in lee_runs(a, s)]), 18.9),
    ("Lee et al. 2025: compute slowed by overlap, H100, FSDP, 13B (the maximum)",
     lambda a, s: slowed(lee_runs(a, s, ["lee-h100x4"], ["gpt3-13b"])[0]), 40.0),
    ("Lee et al. 2025: sequential slower than overlapped (average)",
     lambda a, s: mean([seq_slower(r) for r in lee_runs(a, s)]), 10.2),
]


# Li et al. Figure 6, the non-overlapped ResNet-50 bars as read off the
# figure (+-0.01): communication's share of the iteration, and the rest
# (forward, backward, optimizer).
FIG6_RESNET = {"ddp-paper-nccl.yaml": (0.44, 0.56), "ddp-paper-gloo.yaml": (0.595, 0.405)}
# Li et al. Figure 8 (32 GPUs), ResNet-50's median per-iteration latency,
# seconds, as read off the figure: bucket size 0 (one all-reduce a
# tensor) and 25 MB (the default).
FIG8 = {"ddp-paper-nccl.yaml": (0.190, 0.121), "ddp-paper-gloo.yaml": (0.345, 0.190)}
PER_TENSOR = ["policies.0.bucket=1", "policies.0.first_bucket=1"]
# The NCCL scenario's network is its server's NIC (a node file), the Gloo
# one's the star's links.
NIC_NODE = os.path.join(HERE, "nodes", "ddp-paper-server.yaml")


def bisect(f, lo, hi, target, rising):
    """x in [lo, hi] (geometric) where the monotonic f(x) meets target."""
    for _ in range(40):
        mid = (lo * hi) ** 0.5
        if (f(mid) < target) == rising:
            lo = mid
        else:
            hi = mid
    return (lo * hi) ** 0.5


def nic_node(tmp, gbps, us):
    """ddp-paper-server.yaml with its NIC's data rate gbps Gbit/s and latency us, written to tmp; the --set
    that names it."""
    with open(NIC_NODE) as f:
        text = f.read()
    head, nics = text.split("\nnics:\n")
    nics = re.sub(r"data_rate: \S+", f"data_rate: {gbps / 8}GB/s", nics)
    nics = re.sub(r"latency: \S+", f"latency: {us}us", nics)
    with open(tmp, "w") as f:
        f.write(head + "\nnics:\n" + nics)
    return [f"cluster.node={tmp}"]


def network(scen, tmp, gbps, us):
    """The --set that gives scenario scen a network of gbps Gbit/s and us microseconds."""
    if scen == "ddp-paper-nccl.yaml":
        return nic_node(tmp, gbps, us)
    return [f"cluster.link.bandwidth={gbps}Gbps", f"cluster.link.latency={us}us"]


# Li et al. Figure 6, every non-overlapped bar as read off the figure
# (+-0.01): forward, backward, communication, optimizer; with the model,
# the scenario and the published time overlap saves, %.
FIG6_PHASES = [
    ("NCCL, ResNet-50", "resnet50", "ddp-paper-nccl.yaml", (0.15, 0.395, 0.44, 0.015), 38.0),
    ("NCCL, BERT", "bert-base", "ddp-paper-nccl.yaml", (0.09, 0.415, 0.48, 0.015), 35.2),
    ("Gloo, ResNet-50", "resnet50", "ddp-paper-gloo.yaml", (0.115, 0.275, 0.595, 0.015), 26.8),
    ("Gloo, BERT", "bert-base", "ddp-paper-gloo.yaml", (0.06, 0.245, 0.685, 0.01), 21.5),
]
GPUS_FILE = os.path.join(HERE, "..", "..", "models", "gpus.yaml")


def scaled_gpus(tmp, k):
    """models/gpus.yaml with the V100's compute times scaled by k (peak and memory rate over k, launch times
    k), written to tmp; the --set that names it and holds comm.gamma at the V100's 3 / memory rate."""
    with open(GPUS_FILE) as f:
        text = f.read()
    i = text.index("\n  v100:\n")
    j = text.index("efficiency:", i)
    v = text[i:j]
    v = re.sub(r"fp32_tflops: (\S+)", lambda m: f"fp32_tflops: {float(m.group(1)) / k:.6g}", v)
    v = re.sub(r"mem_GBps: (\S+)", lambda m: f"mem_GBps: {float(m.group(1)) / k:.6g}", v)
    v = re.sub(r"launch_us: (\S+)", lambda m: f"launch_us: {float(m.group(1)) * k:.6g}", v)
    with open(tmp, "w") as f:
        f.write(text[:i] + v + text[j:])
    return [f"gpus_file={tmp}", "comm.gamma=3.3333e-12"]


def phases(arsim, sets):
    """The DDP paper's rows with arsim's compute per phase as Figure 6's non-overlapped bars show it."""
    print("| anchor | published % | forward+opt, backward, comm (s) | arsim before % | error | "
          "arsim after % | error |")
    print("|---|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "gpus.yaml")
        for label, model, scen, (fwd, bwd, comm, opt), pub in FIG6_PHASES:
            base = sets + [f"model={model}"]

            def noov(extra):
                n = run(arsim, scen, base + extra + ["comm.overlap=false"])["no-overlap"]
                return n["compute_s"], n["iteration_s"] - n["compute_s"]
            flat, c = noov(scaled_gpus(tmp, 1.0) + ["compute.backward_ratio=0.001"])
            two, _ = noov(scaled_gpus(tmp, 1.0) + ["compute.backward_ratio=2"])
            per_ratio = (two - flat) / 1.999
            k = c * (fwd + opt) / comm / flat
            ratio = c * bwd / comm / (k * per_ratio)
            extra = scaled_gpus(tmp, k) + [f"compute.backward_ratio={ratio:.4f}"]
            got, gc = noov(extra)
            before = time_saved(run(arsim, scen, base + extra + ["comm.overlap=false"]))
            after = time_saved(run(arsim, scen, base + extra))
            print(f"| Li et al. 2020, {label}, phases as Figure 6 | {pub:.1f} | {k * flat:.4f}, {got - k * flat:.4f}, "
                  f"{gc:.4f} | {before:.1f} | {before - pub:+.1f} | {after:.1f} | {after - pub:+.1f} |")


def fit(arsim, sets):
    """The DDP paper scenarios' network rate and latency from Figures 6 and 8."""
    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "node.yaml")
        for scen, (comm, rest) in FIG6_RESNET.items():
            f8_tensor, f8_default = FIG8[scen]
            lat = 5.0
            for _ in range(3):
                def share(gbps):
                    n = run(arsim, scen, sets + network(scen, tmp, gbps, lat))["no-overlap"]
                    return (n["iteration_s"] - n["compute_s"]) / n["compute_s"]
                gbps = bisect(share, 1, 400, comm / rest, False)

                def per_tensor_cost(us):
                    base = sets + network(scen, tmp, gbps, us)
                    t = run(arsim, scen, base + PER_TENSOR)["overlap"]["iteration_s"]
                    return t - run(arsim, scen, base)["overlap"]["iteration_s"]
                lat = bisect(per_tensor_cost, 0.01, 1000, f8_tensor - f8_default, True)
            shown = round(gbps / 8, 2) * 8 if scen == "ddp-paper-nccl.yaml" else round(gbps, 1)
            base = sets + network(scen, tmp, shown, round(lat))
            t_def = run(arsim, scen, base)["overlap"]["iteration_s"]
            t_ten = run(arsim, scen, base + PER_TENSOR)["overlap"]["iteration_s"]
            if scen == "ddp-paper-nccl.yaml":
                where = (f"nodes/ddp-paper-server.yaml: nics: {{data_rate: {gbps / 8:.2f}GB/s, "
                         f"latency: {lat:.0f}us}}")
            else:
                where = f"{scen}: link: {{bandwidth: {gbps:.1f}Gbps, latency: {lat:.0f}us}}"
            print(f"{where} (fitted {gbps:.3f} Gbit/s, {lat:.2f} us); ResNet-50 at 32 GPUs: "
                  f"25 MB buckets {t_def:.3f} s (Figure 8: {f8_default:.3f}), per tensor {t_ten:.3f} s "
                  f"(Figure 8: {f8_tensor:.3f})")


def main(argv):
    arsim = "./arsim"
    sets = []
    fitting = False
    phasing = False
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "--set" and args:
            sets.append(args.pop(0))
        elif a == "--fit":
            fitting = True
        elif a == "--phases":
            phasing = True
        elif a.startswith("-"):
            sys.exit(f"anchors.py: unknown option {a}; expected [ARSIM] [--fit | --phases] [--set KEY=VALUE ...]")
        else:
            arsim = a
    if fitting:
        fit(arsim, sets)
        return
    if phasing:
        phases(arsim, sets)
        return
    print("| anchor | published % | arsim before % | error | arsim after % | error |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, figure, published in ANCHORS:
        before = figure(arsim, sets + ["comm.overlap=false"])
        after = figure(arsim, sets)
        print(f"| {name} | {published:.1f} | {before:.1f} | {before - published:+.1f} | {after:.1f} | "
              f"{after - published:+.1f} |")


if __name__ == "__main__":
    main(sys.argv)
