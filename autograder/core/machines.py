"""The machines a program's time is projected on (``core/roofline.py``), each figure with its
published source. Peak figures, as the vendors publish them: a model's ceiling, never a
measurement (docs/benchmarks.md holds what a real GPU measured against them).

A link's rate is what one chip sends per second, one way, to its peers along one mesh axis:
NVLink's switch gives every pair its whole rate; a TPU slice's torus gives each axis its share of
the chip's links (the assumption is written beside the figure).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
TERA = 1e12


@dataclass(frozen=True)
class Link:
    name: str
    bytes_per_s: float  # one way, per chip, along one mesh axis
    source: str


@dataclass(frozen=True)
class Machine:
    name: str
    chip: str
    chips: int
    hosts: int  # the chips split evenly over them, in device order (a mesh's leading axis crosses them)
    flops_per_s: float  # per chip: dense bfloat16 matmuls
    hbm_bytes_per_s: float  # per chip
    hbm_bytes: float  # per chip: what the program's peak must fit in
    within_host: Link
    across_hosts: Link | None
    source: str  # where the chip's figures are published

    @property
    def per_host(self) -> int:
        return self.chips // self.hosts


H100_SOURCE = (
    "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): 989 TFLOPS bfloat16 dense (1,979 with "
    "sparsity), 80 GB HBM3 at 3.35 TB/s, NVLink 900 GB/s"
)
H200_SOURCE = (
    "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): 989 TFLOPS bfloat16 dense (1,979 with "
    "sparsity), 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s"
)
NVLINK = Link("NVLink 4 (NVSwitch)", 450 * GB, "900 GB/s per GPU, both ways together: 450 GB/s each way")

MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine("8 x H100 SXM", "H100 SXM", 8, 1, 989 * TERA, 3.35 * TERA, 80 * GB, NVLINK, None, H100_SOURCE),
        Machine("8 x H200", "H200 SXM", 8, 1, 989 * TERA, 4.8 * TERA, 141 * GB, NVLINK, None, H200_SOURCE),
        Machine(
            "TPU v5e-8",
            "TPU v5e",
            8,
            1,
            197 * TERA,
            819 * GB,
            16 * 2**30,
            Link(
                "ICI (2 x 4 slice)",
                100 * GB,
                "1,600 Gb/s of interchip links per chip (200 GB/s), half of them along each of the "
                "slice's two axes and half of those each way: 100 GB/s one way along one axis (assumed)",
            ),
            None,
            "Google Cloud TPU v5e documentation: 197 TFLOPS bfloat16, 16 GiB HBM2 at 819 GB/s, "
            "1,600 Gbps interchip interconnect per chip",
        ),
        Machine(
            "2 hosts x 4 H100 over 400 Gb/s",
            "H100 SXM",
            8,
            2,
            989 * TERA,
            3.35 * TERA,
            80 * GB,
            NVLINK,
            Link(
                "InfiniBand NDR, one 400 Gb/s NIC per GPU",
                50 * GB,
                "400 Gb/s per GPU each way (a DGX H100 has eight ConnectX-7 400 Gb/s ports, one per GPU)",
            ),
            H100_SOURCE,
        ),
    )
}
