"""Execute every lecture as CI does and print each one's wall time and the total.

    .venv/bin/python benchmarks/lecture_times.py

Target (issue 5): all lectures under 5 minutes on the 2-core development machine.
"""

from __future__ import annotations

from pathlib import Path

from autograder.delivery.lectures import execute

COURSE = Path(__file__).resolve().parent.parent / "course"
BUDGET_S = 300.0


def main() -> None:
    total = 0.0
    for path in sorted(COURSE.glob("*.ipynb")):
        _, seconds = execute(path)
        total += seconds
        print(f"{path.stem:40s} {seconds:6.1f} s")
    print(f"{'total':40s} {total:6.1f} s   (budget {BUDGET_S:.0f} s: {total / BUDGET_S:.0%} of it)")


if __name__ == "__main__":
    main()
