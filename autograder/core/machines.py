"""The machines a program's time is projected on (``core/roofline.py``), each figure with its
published source. Peak figures, as the vendors publish them: a model's ceiling, never a
measurement (docs/benchmarks.md holds what a real GPU measured against them).

A chip's matmul peak depends on its operands' type and, for f32, on XLA's operand precision,
which picks the unit the dot runs on. A network is described as it is built: GPUs meet through
NVSwitch inside a host and through one NIC each across hosts; TPU chips sit on a grid of ICI
links to their neighbours. ``core/network.py`` times collectives on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

GB = 1e9
TERA = 1e12
PRECISIONS = ("default", "high", "highest")  # XLA's operand_precision, as jax.lax.Precision names it
_MLIR_NAMES = {"i8": "s8"}  # StableHLO spells s8 so (and f8E4M3FN, which lower() mends)


@dataclass(frozen=True)
class Link:
    name: str
    bytes_per_s: float  # one way, from one chip
    source: str


@dataclass(frozen=True)
class Rate:
    """A chip's dense matmul rate for one kind of dot, FLOP/s, and why."""

    flops_per_s: float
    source: str


@dataclass(frozen=True)
class Switched:
    """GPUs on NVSwitch inside each host, every pair at ``nvlink``'s whole rate at once; the hosts
    joined by one NIC per GPU (``nic``), none where there is one host."""

    nvlink: Link
    nic: Link | None = None


@dataclass(frozen=True)
class Grid:
    """TPU chips on a grid of ``shape`` (rows, columns), numbered row-major, each joined to the
    chips beside it by one ICI ``link`` each way and with no wraparound; mesh device ``i`` is
    chip ``placement[i]``."""

    shape: tuple[int, int]
    link: Link
    placement: tuple[int, ...]
    source: str  # of the placement and of the missing wraparound


@dataclass(frozen=True)
class Machine:
    name: str
    chip: str
    chips: int
    hosts: int  # the chips split evenly over them, in device order (a mesh's leading axis crosses them)
    # per chip, by the dot's operand type (HLO names) and f32's precision: "f32", "f32:high", "f32:highest"
    matmul: Mapping[str, Rate] = field(hash=False)
    hbm_bytes_per_s: float  # per chip
    hbm_bytes: float  # per chip: what the program's peak must fit in
    network: Switched | Grid
    source: str  # where the chip's figures are published

    @property
    def per_host(self) -> int:
        return self.chips // self.hosts

    def rate(self, dtype: str, precision: str = "default") -> Rate:
        """The matmul rate of a dot whose operands are ``dtype`` (HLO's name, or StableHLO's) at
        ``precision``, which only an f32 dot heeds. A type the chip lists no rate for runs at its
        f32 rate at highest precision: no faster unit is known to take it."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
        name = _MLIR_NAMES.get(dtype.lower(), dtype.lower())
        if name == "f32" and precision != "default":
            name = f"f32:{precision}"
        return self.matmul.get(name, self.matmul["f32:highest"])

    def peak_flops(self, dtype: str, precision: str = "default") -> float:
        return self.rate(dtype, precision).flops_per_s


_HOPPER = "NVIDIA H100 architecture whitepaper (H100 SXM5) and H100/H200 SXM datasheets, dense (half the with-sparsity figure)"
HOPPER_MATMUL = {
    "bf16": Rate(989.4 * TERA, f"{_HOPPER}: BF16 Tensor Core 989.4 TFLOPS"),
    "f16": Rate(989.4 * TERA, f"{_HOPPER}: FP16 Tensor Core 989.4 TFLOPS"),
    "f8e4m3fn": Rate(1978.9 * TERA, f"{_HOPPER}: FP8 (E4M3) Tensor Core 1,978.9 TFLOPS"),
    "f8e5m2": Rate(1978.9 * TERA, f"{_HOPPER}: FP8 (E5M2) Tensor Core 1,978.9 TFLOPS"),
    "s8": Rate(1978.9 * TERA, f"{_HOPPER}: INT8 Tensor Core 1,978.9 TOPS"),
    "f64": Rate(66.9 * TERA, f"{_HOPPER}: FP64 Tensor Core 66.9 TFLOPS"),
    "f32": Rate(
        494.7 * TERA,
        f"{_HOPPER}: TF32 Tensor Core 494.7 TFLOPS. XLA runs a default-precision f32 dot on TF32 "
        "(jax.lax.Precision); on an H200 (JAX 0.11.2) an 8192^3 f32 matmul took 2.53 ms, 434 TFLOP/s, "
        "above the fp32 peak (benchmarks/results/chip_table_h200_2026-11-28.json)",
    ),
    "f32:high": Rate(
        494.7 * TERA,
        f"{_HOPPER}: TF32 Tensor Core 494.7 TFLOPS, as jax.lax.Precision says HIGH runs on GPU; "
        "XLA:GPU may run it as bf16_3x (three bf16 passes, 330 TFLOPS) instead: TF32 kept (assumed)",
    ),
    "f32:highest": Rate(
        66.9 * TERA,
        f"{_HOPPER}: FP32 66.9 TFLOPS, no tensor cores; on an H200 an 8192^3 f32 matmul at "
        "precision=HIGHEST took 21.4 ms, 51 TFLOP/s",
    ),
}
_V5E = "Google Cloud TPU v5e documentation"
V5E_MATMUL = {
    "bf16": Rate(197 * TERA, f"{_V5E}: 197 TFLOPS bf16 per chip"),
    "s8": Rate(394 * TERA, f"{_V5E}: 394 TOPS int8 per chip (How to Scale Your Model's TPU table: 3.94e14)"),
    "f8e4m3fn": Rate(197 * TERA, f"{_V5E} lists bf16 and int8 only: an fp8 dot assumed run at the bf16 rate"),
    "f8e5m2": Rate(197 * TERA, f"{_V5E} lists bf16 and int8 only: an fp8 dot assumed run at the bf16 rate"),
    "f32": Rate(197 * TERA, "jax.lax.Precision: DEFAULT runs an f32 dot on TPU in bfloat16, one pass at 197 TFLOPS"),
    "f32:high": Rate(
        197 / 3 * TERA, "jax.lax.Precision: HIGH runs an f32 dot on TPU in 3 bf16 passes (assumed each at 197 TFLOPS)"
    ),
    "f32:highest": Rate(
        197 / 6 * TERA,
        "jax.lax.Precision: HIGHEST runs an f32 dot on TPU in 6 bf16 passes (assumed each at 197 TFLOPS)",
    ),
}

H100_SOURCE = "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): 80 GB HBM3 at 3.35 TB/s, NVLink 900 GB/s"
H200_SOURCE = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s"
NVLINK = Link(
    "NVLink 4 through NVSwitch",
    450 * GB,
    "H100/H200 SXM datasheets: NVLink 900 GB/s per GPU, both ways together: 450 GB/s each way; "
    "NVSwitch gives every pair of GPUs in a host that rate at once",
)
CONNECTX7 = Link(
    "InfiniBand NDR, one ConnectX-7 400 Gb/s NIC per GPU",
    50 * GB,
    "400 Gb/s per GPU each way (a DGX H100 has eight ConnectX-7 400 Gb/s ports, one per GPU)",
)
V5E_ICI = Link(
    "ICI",
    4.5e10,
    "How to Scale Your Model, TPU chapter: v5e ICI 4.5e10 B/s one way per link (9e10 both ways); "
    "Google's v5e docs give 1,600 Gbps of interchip interconnect per chip",
)
V5E_8_GRID = Grid(
    (2, 4),
    V5E_ICI,
    (0, 1, 2, 3, 7, 6, 5, 4),
    "jax.make_mesh gives 8 v5e chips, in x-minor order, the mesh's devices in _V5E_TRAY_RING_ORDER "
    "(jax/_src/mesh_utils.py, JAX 0.10.2): a ring round the host's 4 x 2 chips (How to Scale Your Model), "
    "drawn here as 2 rows of 4; a v5e slice has wraparound links only along an axis of 16 (the same book)",
)

MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine("8 x H100 SXM", "H100 SXM", 8, 1, HOPPER_MATMUL, 3.35 * TERA, 80 * GB, Switched(NVLINK), H100_SOURCE),
        Machine("8 x H200", "H200 SXM", 8, 1, HOPPER_MATMUL, 4.8 * TERA, 141 * GB, Switched(NVLINK), H200_SOURCE),
        Machine(
            "TPU v5e-8",
            "TPU v5e",
            8,
            1,
            V5E_MATMUL,
            819 * GB,
            16 * 2**30,
            V5E_8_GRID,
            "Google Cloud TPU v5e documentation: 16 GiB HBM2 at 819 GB/s, a 2x4 slice of 8 chips on one host",
        ),
        Machine(
            "2 hosts x 4 H100 over 400 Gb/s",
            "H100 SXM",
            8,
            2,
            HOPPER_MATMUL,
            3.35 * TERA,
            80 * GB,
            Switched(NVLINK, CONNECTX7),
            H100_SOURCE,
        ),
    )
}
