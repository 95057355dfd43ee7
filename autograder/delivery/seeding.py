"""Filling a student's work directory with the course: lectures and released assignments are
copied in on first start, and later starts or image upgrades never overwrite a file the student
changed (``jaxcourse lab`` locally, and the image's entrypoint)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = Path(".jaxcourse") / "seeded.json"


@dataclass
class SeedReport:
    copied: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.copied)} copied"] if self.copied else []
        if self.updated:
            parts.append(f"{len(self.updated)} updated")
        if self.kept:
            parts.append(
                f"{len(self.kept)} kept as you changed them ({', '.join(self.kept[:5])}"
                + (", ..." if len(self.kept) > 5 else "")
                + ")"
            )
        return "jaxcourse: course files: " + ("; ".join(parts) if parts else "up to date")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def seed(work: Path, sources: Mapping[str, Path]) -> SeedReport:
    """Copy every file of ``sources`` (destination prefix -> directory) into ``work``.

    A file is written when it is missing (first start, a new file, or one the student deleted to get
    a fresh copy) or when it is still exactly what an earlier seed wrote (an upgrade). A file the
    student changed is never touched. ``work/.jaxcourse/seeded.json`` remembers what was written.
    """
    manifest_path = work / MANIFEST
    try:
        seeded: dict[str, str] = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        seeded = {}  # unknown history: any differing file counts as the student's
    report = SeedReport()
    for prefix, root in sources.items():
        if not root.is_dir():
            continue
        for src in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = (Path(prefix) / src.relative_to(root)).as_posix()
            dest, new = work / rel, _sha256(src)
            if not dest.exists():
                report.copied.append(rel)
            elif (have := _sha256(dest)) == new:
                seeded[rel] = new
                continue
            elif seeded.get(rel) == have:
                report.updated.append(rel)
            else:
                report.kept.append(rel)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.jaxcourse-tmp")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
            seeded[rel] = new
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(seeded, indent=1, sort_keys=True))
    os.replace(tmp, manifest_path)
    return report
