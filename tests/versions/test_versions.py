"""Version schemes: SemVer 2.0, +arch (SPEC A3), Kubernetes (H1), distributed cloud (G2, G4)."""

from __future__ import annotations

import contextlib
import itertools
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import VersionError
from kupgrade.versions import (
    GDC_RELEASE_LINE,
    GdcVersion,
    ReleaseLine,
    SemVer,
    blang,
    format_kube,
    go_quote,
    parse_kube,
    split_arch,
    version_sort_key,
    with_arch,
)
from kupgrade.versions.blang import parse_blang
from kupgrade.versions.semver import parse_semver
from tests.support.conformance import conformance_path

numbers = st.integers(min_value=0, max_value=10**6)
alnum_id = st.from_regex(r"[0-9]*[a-zA-Z-][0-9a-zA-Z-]*", fullmatch=True).filter(
    lambda s: len(s) < 12
)
numeric_id = numbers.map(str)
pre_ids = st.lists(st.one_of(alnum_id, numeric_id), max_size=3)
build_ids = st.lists(
    st.from_regex(r"[0-9a-zA-Z-]+", fullmatch=True).filter(lambda s: len(s) < 10), max_size=2
)


@st.composite
def semvers(draw: st.DrawFn) -> SemVer:
    return SemVer(
        draw(numbers), draw(numbers), draw(numbers), tuple(draw(pre_ids)), tuple(draw(build_ids))
    )


@given(semvers())
def test_semver_round_trips(version: SemVer) -> None:
    parsed = SemVer.parse(str(version))
    assert parsed.identical(version) and str(parsed) == str(version)


@given(semvers(), semvers())
def test_order_is_total_and_ignores_build(a: SemVer, b: SemVer) -> None:
    assert (a < b) + (a > b) + (a == b) == 1
    assert a.with_build("amd64") == a.without_build()
    assert hash(a.with_build("x")) == hash(a)
    # precedence agrees with an independent reading of SemVer §11
    assert (a < b) == (_reference_cmp(a, b) < 0)


def _reference_cmp(a: SemVer, b: SemVer) -> int:
    core = (a.major, a.minor, a.patch), (b.major, b.minor, b.patch)
    if core[0] != core[1]:
        return -1 if core[0] < core[1] else 1
    if not a.pre or not b.pre:
        return (not a.pre) - (not b.pre)
    for x, y in zip(a.pre, b.pre, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return (len(a.pre) > len(b.pre)) - (len(a.pre) < len(b.pre))


def test_spec_example_chain() -> None:
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    parsed = [SemVer.parse(v) for v in chain]
    assert parsed == sorted(parsed, key=lambda v: v.precedence)
    assert all(a < b for a, b in itertools.pairwise(parsed))


@pytest.mark.parametrize(
    "bad",
    ["", "4.7", "4.7.04", "v4.7.4", "4.7.4-", "4.7.4+", "4.7.4-01", " 4.7.4", "4.7.4.1", "٤.7.4"],
)
def test_invalid_semver_is_a_clear_error(bad: str) -> None:
    assert SemVer.try_parse(bad) is None
    with pytest.raises(VersionError, match="not a SemVer"):
        SemVer.parse(bad)


def test_arch_build_convention() -> None:
    assert split_arch("4.9.0+amd64") == ("4.9.0", "amd64")
    assert split_arch("4.9.0") == ("4.9.0", None)
    assert with_arch("4.12.0-rc.0+foo", "multi") == "4.12.0-rc.0+multi"
    assert SemVer.parse("4.7.4+amd64") == SemVer.parse("4.7.4+s390x")
    assert not SemVer.parse("4.7.4+amd64").identical(SemVer.parse("4.7.4+s390x"))


def test_canonical_sort_key() -> None:
    versions = [
        "4.9.7+s390x",
        "0.0.0",
        "4.0.0-0.okd-0+amd64",
        "4.0.0-0.11+amd64",
        "4.9.7+ppc64le",
        "not-semver",
        "4.10.0+amd64",
    ]
    assert sorted(versions, key=version_sort_key) == [
        "0.0.0",
        "4.0.0-0.11+amd64",
        "4.0.0-0.okd-0+amd64",
        "4.9.7+ppc64le",
        "4.9.7+s390x",
        "4.10.0+amd64",
        "not-semver",
    ]


def test_kubernetes_versions() -> None:
    assert parse_kube("v1.30.2") == SemVer(1, 30, 2)
    assert parse_kube("1.28.0-alpha.1") < parse_kube("v1.28.0")
    assert format_kube(parse_kube("v1.29.10")) == "v1.29.10"
    with pytest.raises(VersionError, match="Kubernetes"):
        parse_kube("v1.30")


def test_gdc_build_counter_is_not_a_prerelease() -> None:
    base, built, later = (
        GdcVersion.parse(v) for v in ("1.28.100", "1.28.100-gke.146", "1.28.100-gke.200")
    )
    assert base < built < later < GdcVersion.parse("1.28.200-gke.1")
    assert str(built) == "1.28.100-gke.146" and str(base) == "1.28.100"
    # whereas SemVer would read -gke.146 as a pre-release and sort it first
    assert SemVer.parse("1.28.100-gke.146") < SemVer.parse("1.28.100")
    with pytest.raises(VersionError):
        GdcVersion.parse("1.28.100-rc.1")


@given(st.lists(st.tuples(numbers, numbers, numbers, st.integers(-1, 500)), min_size=2, max_size=6))
def test_gdc_order_matches_tuple_order(items: list[tuple[int, int, int, int]]) -> None:
    versions = [GdcVersion.parse(str(GdcVersion(*t))) for t in items]
    assert sorted(versions) == [GdcVersion(*t) for t in sorted(items)]


def test_release_line_jumps() -> None:
    # SPEC G2: 1.16 is "one minor" before 1.28 and "two" before 1.29
    assert GDC_RELEASE_LINE.distance((1, 16), (1, 28)) == 1
    assert GDC_RELEASE_LINE.distance((1, 16), (1, 29)) == 2
    assert GDC_RELEASE_LINE.distance((1, 29), (1, 28)) == -1
    assert ReleaseLine().distance((1, 27), (1, 30)) == 3
    with pytest.raises(VersionError, match="not on the release line"):
        GDC_RELEASE_LINE.distance((1, 17), (1, 28))
    with pytest.raises(VersionError, match="twice"):
        ReleaseLine.of(["1.1", "1.1"])


def test_gdc_conformance_versions_and_release_line() -> None:
    """SPEC G2, G4: every version in skew/gdc.yaml parses, and its release line is ours."""

    doc = yaml.safe_load(conformance_path("skew", "gdc.yaml").read_text())
    assert ReleaseLine.of(doc["release_line"]) == GDC_RELEASE_LINE
    order = [GdcVersion.parse(v) for v in doc["release_order_synthetic"]]
    # "patches of one minor are released in patch order" (the sourced fact of the file)
    for minor in {(v.major, v.minor) for v in order}:
        same = [v for v in order if (v.major, v.minor) == minor]
        assert same == sorted(same)
    texts = re.findall(
        r"\b1\.\d+\.\d+(?:-gke\.\d+)?\b", conformance_path("skew", "gdc.yaml").read_text()
    )
    assert all(str(GdcVersion.parse(t)) == t for t in texts)


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("x\ny\t\a\b\f\r\v", '"x\\ny\\t\\a\\b\\f\\r\\v"'),
        ("\x00\x7f", '"\\x00\\x7f"'),
        ("é中 😀", '"é中 😀"'),
        ("\u00a0\u200b", '"\\u00a0\\u200b"'),
        ("\U000e0001", '"\\U000e0001"'),
        (b"ok\xff".decode("utf-8", "surrogateescape"), '"ok\\xff"'),
    ],
)
def test_go_quote_is_strconv_quote(text: str, quoted: str) -> None:
    """Go's %q as strconv.Quote writes it (rules from Go's strconv/quote.go appendQuotedWith)."""
    assert go_quote(text) == quoted


@settings(max_examples=400)
@given(text=st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F)) | st.text())
def test_go_quote_plain_ascii_as_is_is_the_rune_by_rune_quote(text: str) -> None:
    """The shortcut for printable ASCII (no quote, no backslash) gives what the rune-by-rune
    rules give: for every text, the two agree."""
    runes = blang._AS_IS
    try:
        blang._AS_IS = re.compile(r"(?!)")  # matches nothing: every text goes rune by rune
        slow = go_quote(text)
    finally:
        blang._AS_IS = runes
    assert go_quote(text) == slow


# --- numbers no reference parser holds ------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        f"4.{HUGE}.0",
        f"{HUGE}.1.0",
        f"4.14.{HUGE}",
        f"4.14.0-rc.{HUGE}",
        "18446744073709551616.0.0",
        "4.18446744073709551616.0",
    ],
)
def test_a_component_over_64_bits_is_refused_by_every_parser(text: str) -> None:
    # blang/semver and apimachinery's util/version read components with ParseUint(64):
    # larger is an error there, and must be one here, never a failed conversion.
    assert parse_semver(text) is None
    with pytest.raises(VersionError, match="over 18446744073709551615") as refused:
        SemVer.parse(text)
    assert len(str(refused.value)) < 200  # the number is not echoed whole
    with pytest.raises(VersionError):
        parse_kube("v" + text)
    with pytest.raises(VersionError, match="value out of range"):
        parse_blang(text)
    gdc = text.replace("-rc.", "-gke.")
    with pytest.raises(VersionError):
        GdcVersion.parse(gdc)


def test_the_largest_component_is_taken() -> None:
    top = "18446744073709551615"
    assert SemVer.parse(f"{top}.0.0-{top}").major == int(top)
    assert parse_blang(f"1.{top}.0").minor == int(top)
    assert GdcVersion.parse(f"1.28.{top}-gke.{top}").gke == int(top)


@given(st.text(alphabet="0123456789.-+gkerc", max_size=60))
def test_version_parsers_only_ever_refuse_with_a_version_error(text: str) -> None:
    for parse in (SemVer.parse, parse_kube, parse_blang, GdcVersion.parse):
        with contextlib.suppress(VersionError):
            parse(text)


def test_a_release_line_refuses_a_minor_over_64_bits() -> None:
    with pytest.raises(VersionError):
        ReleaseLine.of(["1.28", f"1.{HUGE}"])
