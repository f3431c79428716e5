"""plan.py - what the PyTorch trainer synchronizes, and with which algorithm,
under one policy of an arsim scenario: the sync units of sim/train/policy.c
and the algorithm choice of sim/train/trainsel.c, in pure Python.

Units (policy.c):
  * none, layer, priority: one unit per layer with parameters, in readiness
    order (the last layer first); `fusion: SIZE` (layer, priority) fuses
    adjacent layers until a unit holds >= SIZE bytes;
  * priority: every unit is cut into pieces of at most `partition` bytes
    (default 4 MiB), named NAME#k; the communicator serves the ready unit
    whose first layer is lowest (then the lower order);
  * ddp: the trainer runs PyTorch's DistributedDataParallel itself, so its
    buckets are PyTorch's and not planned here.
Algorithms (trainsel.c): `overrides` per layer name first, then a fixed
algorithm, or `hybrid` (units of at most `threshold` bytes -> butterfly, else
by the kind with most parameters in the unit: conv and norm -> butterfly,
everything else -> ring, unless the policy's map says otherwise). `auto`
needs the simulator and is refused.

The flat gradient buffer holds the layers last-first (readiness order), each
layer's tensors in parameters() order, so every unit - a layer, a fused run
of layers or a piece of a layer - is one contiguous range [off, off + elems).

No PyTorch here; the scenario is read with PyYAML (Debian's python3-yaml, a
dependency of python3-torch), the model file with a line pattern (its
layers are one flow mapping per line, as models/gen/gen_models.py and
`arsim import-profile` write them).
"""
import os
import re

KINDS = ("conv", "fc", "norm", "embedding", "attention", "pool", "act")
HYBRID_DEFAULT = {"conv": "butterfly", "norm": "butterfly"}
REAL_ALGOS = ("ring", "butterfly", "rabenseifner")
ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


class PlanError(Exception):
    """Bad input: the message is one line, `what is wrong; what is expected`."""


def parse_bytes(v, what):
    """A size as arsim reads it: a bare number is bytes, KB/MB/GB powers of
    10, KiB/MiB/GiB powers of 2."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)?\s*", str(v))
    if not m:
        raise PlanError("%s: '%s' is not a size; expected bytes such as 4MiB or 1000000" % (what, v))
    return int(round(float(m.group(1)) * _UNITS[m.group(2) or ""]))


class Layer:
    """One layer of an arsim model file."""

    def __init__(self, index, name, kind, tensors):
        self.index = index          # forward order, from 0
        self.name = name
        self.kind = kind            # one of KINDS
        self.tensors = tensors      # elements per parameter tensor, parameters() order
        self.params = sum(tensors)  # elements
        self.off = 0                # first element in the flat gradient buffer


_LAYER_RE = re.compile(r'^\s*- \{name: "?([^",]+)"?, kind: ([a-z]+), params: ([0-9]+), tensors: \[([0-9, ]*)\]')


def load_model(path):
    """Layers of an arsim model file in forward order, with flat offsets
    (last layer first). PlanError if the file has none or a layer's
    tensors do not sum to its params."""
    layers = []
    try:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                m = _LAYER_RE.match(line)
                if not m:
                    continue
                tensors = [int(x) for x in m.group(4).replace(" ", "").split(",") if x]
                if sum(tensors) != int(m.group(3)) or m.group(2) not in KINDS:
                    raise PlanError("%s:%d:1: layer '%s': tensors do not sum to params or unknown kind; "
                                    "expected an arsim model file" % (path, lineno, m.group(1)))
                layers.append(Layer(len(layers), m.group(1), m.group(2), tensors))
    except OSError as e:
        raise PlanError("%s:1:1: cannot read: %s; expected an arsim model file" % (path, e.strerror))
    if not layers:
        raise PlanError("%s:1:1: no layers; expected an arsim model file (models/*.yaml)" % path)
    off = 0
    for l in reversed(layers):
        l.off = off
        off += l.params
    return layers


class Policy:
    """The keys of an arsim scenario policy that the trainer implements."""

    def __init__(self, d, layer_names):
        self.name = d["name"]
        self.overlap = d.get("overlap", "layer")
        algo = d.get("algorithm", "ring")
        self.hybrid = algo == "hybrid"
        self.algo = None if self.hybrid else algo
        if self.overlap not in ("none", "ddp", "layer", "priority"):
            raise PlanError("policy '%s': unknown overlap '%s'; expected none, ddp, layer or priority"
                            % (self.name, self.overlap))
        if algo == "auto" or (not self.hybrid and algo not in REAL_ALGOS):
            raise PlanError("policy '%s': algorithm '%s' has no real implementation here; expected ring, "
                            "butterfly, rabenseifner or hybrid" % (self.name, algo))
        if self.overlap == "ddp" and algo != "ring":
            raise PlanError("policy '%s': ddp runs PyTorch's DistributedDataParallel (gloo's ring); expected "
                            "algorithm: ring" % self.name)
        hy = d.get("hybrid") or {}
        self.kind_algo = {k: hy.get(k, HYBRID_DEFAULT.get(k, "ring")) for k in KINDS}
        self.threshold = parse_bytes(hy.get("threshold", 0), "policy '%s': hybrid.threshold" % self.name)
        self.partition = parse_bytes(d.get("partition", "4MiB"), "policy '%s': partition" % self.name)
        self.fusion = parse_bytes(d.get("fusion", 0), "policy '%s': fusion" % self.name)
        self.overrides = dict(d.get("overrides") or {})
        for lname in self.overrides:
            if lname not in layer_names:
                raise PlanError("policy '%s': overrides names no layer '%s'; expected a layer of the model"
                                % (self.name, lname))
        for a in list(self.kind_algo.values()) + list(self.overrides.values()):
            if a not in REAL_ALGOS:
                raise PlanError("policy '%s': algorithm '%s' has no real implementation here; expected ring, "
                                "butterfly or rabenseifner" % (self.name, a))


class Unit:
    """One all-reduce of the iteration (a SyncUnit of policy.h)."""

    def __init__(self, name, first, last, off, elems, kind, order):
        self.name = name
        self.first_layer = first    # lowest layer index carried
        self.last_layer = last      # highest layer index carried
        self.need_layer = first     # its forward waits for the unit; also ready when its backward ends
        self.off = off              # first element in the flat buffer
        self.elems = elems
        self.kind = kind            # kind with most parameters in the unit
        self.order = order          # launch order
        self.algo = None            # ring, butterfly or rabenseifner

    def as_dict(self, elem_bytes):
        return {"name": self.name, "bytes": self.elems * elem_bytes, "algorithm": self.algo}


def _close(group, units):
    if not group:
        return
    per_kind = {}
    for l in group:
        per_kind[l.kind] = per_kind.get(l.kind, 0) + l.params
    kind = min(KINDS, key=lambda k: (-per_kind.get(k, 0), KINDS.index(k)))
    lo, hi = group[-1], group[0]
    name = lo.name if lo is hi else "%s..%s" % (lo.name, hi.name)
    units.append(Unit(name, lo.index, hi.index, hi.off, sum(l.params for l in group), kind, len(units)))


def units_for(policy, layers, elem_bytes):
    """The policy's units in launch order (FIFO), algorithms chosen."""
    if policy.overlap == "ddp":
        return []
    units, group, size = [], [], 0
    fuse = policy.overlap != "none" and policy.fusion > 0
    for l in reversed(layers):
        if l.params == 0:
            continue
        group.append(l)
        size += l.params * elem_bytes
        if not fuse or size >= policy.fusion:
            _close(group, units)
            group, size = [], 0
    _close(group, units)
    if policy.overlap == "priority" and policy.partition // elem_bytes > 0:
        per = policy.partition // elem_bytes
        cut = []
        for u in units:
            pieces = -(-u.elems // per)
            if pieces <= 1:
                cut.append(u)
                continue
            for k in range(pieces):
                n = per if k + 1 < pieces else u.elems - per * (pieces - 1)
                piece = Unit("%s#%d" % (u.name, k), u.first_layer, u.last_layer, u.off + k * per, n, u.kind, 0)
                cut.append(piece)
        units = cut
    for i, u in enumerate(units):
        u.order = i
        single = layers[u.first_layer].name if u.first_layer == u.last_layer else None
        if single in policy.overrides:
            u.algo = policy.overrides[single]
        elif not policy.hybrid:
            u.algo = policy.algo
        elif policy.threshold > 0 and u.elems * elem_bytes <= policy.threshold:
            u.algo = "butterfly"
        else:
            u.algo = policy.kind_algo[u.kind]
    return units


def priority_key(u):
    """Lower serves first: the layer the forward needs soonest, then order."""
    return (u.need_layer, u.order)


class Scenario:
    """What the trainer takes from an arsim scenario file."""

    def __init__(self, path):
        import yaml
        try:
            with open(path) as f:
                d = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            raise PlanError("%s:1:1: cannot read: %s; expected an arsim scenario" % (path, e))
        if not isinstance(d, dict) or "model" not in d or "policies" not in d:
            raise PlanError("%s:1:1: no model or policies; expected an arsim scenario" % path)
        self.path = path
        here = os.path.dirname(os.path.abspath(path))
        model = str(d["model"])
        cand = [os.path.join(here, model)] if model.endswith(".yaml") else []
        cand.append(os.path.join(here, "..", "..", "models", model + ".yaml"))
        self.model_path = next((c for c in cand if os.path.isfile(c)), cand[0])
        self.layers = load_model(self.model_path)
        self.model_name = re.search(r"^name: *\"?([^\"\n]+)", open(self.model_path).read(), re.M).group(1)
        self.precision = d.get("precision", "fp32")
        if self.precision != "fp32":
            raise PlanError("%s: precision %s; expected fp32 (the CPU trainer runs fp32)" % (path, self.precision))
        self.elem_bytes = ELEM_BYTES[self.precision]
        b = d.get("batch", 32)
        self.batch = b[0] if isinstance(b, list) else b
        it = d.get("iterations") or {}
        self.warmup = int(it.get("warmup", 2))
        self.measured = int(it.get("measured", 3))
        comm = d.get("comm") or {}
        if int(comm.get("streams", 1)) != 1:
            raise PlanError("%s: comm.streams %s; expected 1 (the trainer runs one collective at a time)"
                            % (path, comm.get("streams")))
        names = {l.name for l in self.layers}
        self.policies = {}
        for pd in d["policies"]:
            p = Policy(pd, names)
            self.policies[p.name] = p

    def policy(self, name):
        if name not in self.policies:
            raise PlanError("--policies: no policy '%s' in %s; expected one of %s"
                            % (name, self.path, ", ".join(self.policies)))
        return self.policies[name]

    def total_elems(self):
        return sum(l.params for l in self.layers)
