"""Copied work found in the cells' text (copydetect): a copy with other names and comments is
found and its passages marked; work written independently, the release's own text, and a passage
much of the class shares are not."""

from __future__ import annotations

from autograder.grading.reports.source_similarity import MINIMUM, THRESHOLD, alike_cells, marked

from ..helpers.course import ASSIGNMENT, reference_sources
from ..helpers.rings import ANOTHER_WAY

REFERENCE = reference_sources(ASSIGNMENT)["ring_all_gather"]
RENAMED = """def ring_all_gather(x, axis_name):
    # how many of us, and who am I
    count = jax.lax.axis_size(axis_name)
    mine = jax.lax.axis_index(axis_name)
    hops = [(k, (k + 1) % count) for k in range(count)]
    out = jnp.zeros((count,) + x.shape, x.dtype).at[mine].set(x)
    held = x
    for s in range(1, count):
        held = jax.lax.ppermute(held, axis_name, hops)  # pass it on
        out = out.at[(mine - s) % count].set(held)
    return out.reshape((count * x.shape[0],) + x.shape[1:])
"""
GIVEN = '''def ring_all_gather(x, axis_name):
    """Gather every device's block along axis_name with neighbour hops only."""
    # YOUR CODE HERE
    raise NotImplementedError()


def check_ring(x, gathered, axis_name):
    """Given: the gathered blocks, checked against an all_gather."""
    expected = jax.lax.all_gather(x, axis_name, tiled=True)
    return jnp.allclose(gathered, expected)
'''


def _class(**cells: str) -> dict[str, dict[str, str]]:
    return {student: {"ring_all_gather": text} for student, text in cells.items()}


def test_a_copy_with_other_names_and_comments_is_found_and_its_passages_marked():
    found = alike_cells(_class(ana=REFERENCE, ben=RENAMED, cat=ANOTHER_WAY), release=GIVEN)
    assert list(found) == [("ana", "ben")]
    (alike,) = found[("ana", "ben")]
    assert alike.function == "ring_all_gather" and min(alike.shares) > 0.9, alike.shares
    covered = sum(end - start for start, end in alike.spans[1])
    assert covered > 0.8 * len(RENAMED), (covered, len(RENAMED))  # ben's whole function, in ana's
    assert "held = jax.lax.ppermute(held, axis_name, hops)" in marked(RENAMED, alike.spans[1]).split("<mark>")[1]


def test_work_written_independently_is_not_found():
    found = alike_cells(_class(dan=REFERENCE, cat=ANOTHER_WAY), release=GIVEN, threshold=0.0)
    shares = found[("cat", "dan")][0].shares if found else (0.0, 0.0)
    assert max(shares) < THRESHOLD, shares  # ranges and modulo arithmetic any ring writes


def test_the_releases_own_text_is_set_aside():
    cells = _class(fay=GIVEN, gus=GIVEN, cat=ANOTHER_WAY, dan=REFERENCE)
    assert alike_cells(cells, release=GIVEN) == {}
    assert list(alike_cells(cells, release="")) == [("fay", "gus")]  # the same stub, unless it is the release's


def test_a_passage_much_of_the_class_shares_is_no_ones_in_particular():
    common = {f"s{i}": REFERENCE for i in range(4)}
    found = alike_cells(_class(**common, x=ANOTHER_WAY, y=ANOTHER_WAY), release=GIVEN)
    assert list(found) == [("x", "y")]
    assert found[("x", "y")][0].shares == (1.0, 1.0)


def test_a_match_of_a_line_or_so_is_no_evidence():
    answer = "def ring_all_gather(x, axis_name):\n    return jax.lax.all_gather(x, axis_name, tiled=True)\n"
    cells = _class(ana=answer, ben=answer, cat=REFERENCE, dan=ANOTHER_WAY)
    assert alike_cells(cells, release="") == {}
    assert set(alike_cells(cells, release="", minimum=MINIMUM // 4)) == {("ana", "ben")}


def test_marked_text_is_escaped_inside_and_outside_the_marks():
    assert marked("a<b>c&d", [(1, 4)]) == "a<mark>&lt;b&gt;</mark>c&amp;d"
    assert marked("abcdef", [(0, 2), (1, 3)]) == "<mark>ab</mark><mark>c</mark>def"
