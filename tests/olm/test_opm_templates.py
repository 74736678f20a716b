"""`kupgrade olm render-template basic|semver` (operator-registry alpha/template/basic and
alpha/template/semver): channels generated and linked as opm links them, bundles taken
from local bundle directories or rendered blobs, bad templates refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.olm.declcfg_write import DeclConfig, RenderedBundle
from kupgrade.olm.templates import BundleSource, parse_semver, render_semver
from kupgrade.versions import SemVer, parse_blang
from tests.support.bundlekit import write_bundle
from tests.support.cli import kupgrade
from tests.support.olmkit import write_blobs


def _bundle(version: str, package: str = "a") -> RenderedBundle:
    return RenderedBundle(
        {
            "schema": "olm.bundle",
            "name": f"{package}.v{version}",
            "package": package,
            "image": f"quay.io/x/{package}:{version}",
            "properties": [
                {"type": "olm.package", "value": {"packageName": package, "version": version}}
            ],
        }
    )


def _source(versions: list[str], package: str = "a") -> BundleSource:
    source = BundleSource()
    source.add_rendered(DeclConfig(bundles=[_bundle(v, package) for v in versions]))
    return source


def _channels(cfg: DeclConfig) -> dict[str, list[dict[str, Any]]]:
    return {c["name"]: c["entries"] for c in cfg.channels}


def test_minor_channels_link_across_minor_versions() -> None:
    versions = ["0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1-beta", "1.3.1", "2.1.0"]
    doc = {
        "schema": "olm.semver",
        "stable": {"bundles": [{"image": f"quay.io/x/a:{v}"} for v in versions]},
    }
    cfg = render_semver(parse_semver(doc), _source(versions).render)
    assert _channels(cfg) == {
        "stable-v0.1": [{"name": "a.v0.1.0"}, {"name": "a.v0.1.1", "skips": ["a.v0.1.0"]}],
        "stable-v1.1": [{"name": "a.v1.1.0"}],
        "stable-v1.2": [{"name": "a.v1.2.1", "replaces": "a.v1.1.0"}],
        "stable-v1.3": [
            {"name": "a.v1.3.1-beta"},
            {"name": "a.v1.3.1", "replaces": "a.v1.2.1", "skips": ["a.v1.1.0", "a.v1.3.1-beta"]},
        ],
        "stable-v2.1": [{"name": "a.v2.1.0"}],
    }
    assert cfg.packages == [{"schema": "olm.package", "name": "a", "defaultChannel": "stable-v2.1"}]


def test_default_channel_prefers_stability_then_version_then_the_preference() -> None:
    doc = {
        "schema": "olm.semver",
        "generateMajorChannels": True,
        "generateMinorChannels": True,
        "defaultChannelTypePreference": "major",
        "candidate": {"bundles": [{"image": "quay.io/x/a:3.0.0"}]},
        "fast": {"bundles": [{"image": "quay.io/x/a:2.0.0"}]},
        "stable": {"bundles": [{"image": "quay.io/x/a:1.0.0"}]},
    }
    cfg = render_semver(parse_semver(doc), _source(["1.0.0", "2.0.0", "3.0.0"]).render)
    assert cfg.packages[0]["defaultChannel"] == "stable-v1"
    assert sorted(_channels(cfg)) == [
        "candidate-v3",
        "candidate-v3.0",
        "fast-v2",
        "fast-v2.0",
        "stable-v1",
        "stable-v1.0",
    ]


archetype_versions = st.dictionaries(
    st.tuples(
        st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.sampled_from(["", "-rc.1"])
    ),
    st.sets(st.sampled_from(["candidate", "fast", "stable"]), min_size=1),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(archetype_versions, st.booleans(), st.booleans())
def test_semver_channels_hold_their_stability_and_replace_upwards(
    listed: dict[tuple[int, int, int, str], set[str]], major: bool, minor: bool
) -> None:
    versions = {f"{x}.{y}.{z}{pre}": where for (x, y, z, pre), where in listed.items()}
    doc: dict[str, Any] = {
        "schema": "olm.semver",
        "generateMajorChannels": major,
        "generateMinorChannels": minor,
    }
    for arch in ("candidate", "fast", "stable"):
        doc[arch] = {
            "bundles": [{"image": f"quay.io/x/a:{v}"} for v, w in versions.items() if arch in w]
        }
    cfg = render_semver(parse_semver(doc), _source(list(versions)).render)
    version_of = {f"a.v{v}": parse_blang(v) for v in versions}
    expected: dict[str, list[str]] = {}
    for text, where in versions.items():
        v = parse_blang(text)
        for arch in where:
            names = ([f"{arch}-v{v.major}"] if major else []) + (
                [f"{arch}-v{v.major}.{v.minor}"] if minor or not major else []
            )
            for name in names:
                expected.setdefault(name, []).append(f"a.v{text}")
    channels = _channels(cfg)
    # each channel holds exactly the bundles of its stability and version, in version order
    assert {n: [e["name"] for e in es] for n, es in channels.items()} == {
        n: sorted(members, key=lambda m: version_of[m].precedence)
        for n, members in expected.items()
    }
    for name, entries in channels.items():
        members = [e["name"] for e in entries]
        for entry in entries:
            here: SemVer = version_of[entry["name"]]
            # replaces and skips only ever point down, within the same major version
            for older in [entry.get("replaces", ""), *entry.get("skips", [])]:
                if older:
                    assert version_of[older] < here
                    assert version_of[older].major == here.major
        # the head (the newest entry) reaches every older member by skips or replaces
        if len(members) > 1:
            head = entries[-1]
            reached = {head.get("replaces"), *head.get("skips", [])}
            assert set(members[:-1]) <= reached, (name, entries)
    default = cfg.packages[0]["defaultChannel"]
    most_stable = max(
        (a for w in versions.values() for a in w), key=("candidate", "fast", "stable").index
    )
    if default == "":
        # opm's high-water mark starts at candidate 0.0.0: candidate bundles below it
        # (0.0.0-rc.1) never raise it, and the package gets no default channel
        assert most_stable == "candidate"
        assert all(v < SemVer(0, 0, 0) for v in version_of.values())
    else:
        assert default.startswith(most_stable + "-v")
        assert default in channels


# --- the command ------------------------------------------------------------------------


def _write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def test_semver_command_renders_from_bundle_dirs_and_rendered_blobs(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b2", version="0.9.4", description="Newest etcd.")
    pool = write_blobs(tmp_path / "pool", [_bundle("0.9.2", "etcd").blob])
    template = _write(
        tmp_path / "semver.yaml",
        {
            "schema": "olm.semver",
            "stable": {"bundles": [{"image": "quay.io/x/etcd:0.9.2"}, {"image": str(bundle)}]},
        },
    )
    done = kupgrade("olm", "render-template", "semver", str(template), "--bundles", str(pool))
    assert done.returncode == 0, done.stderr
    decoder, text, blobs, at = json.JSONDecoder(), done.stdout, [], 0
    while at < len(text):
        blob, at = decoder.raw_decode(text, at)
        blobs.append(blob)
        at += 1
    package, channel, *bundles = blobs
    # the package takes the description and first icon of the default channel head's CSV
    assert package == {
        "schema": "olm.package",
        "name": "etcd",
        "defaultChannel": "stable-v0.9",
        "icon": {"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"},
        "description": "Newest etcd.",
    }
    assert channel["entries"] == [
        {"name": "etcd.v0.9.2"},
        {"name": "etcdoperator.v0.9.4", "skips": ["etcd.v0.9.2"]},
    ]
    assert [b["name"] for b in bundles] == ["etcd.v0.9.2", "etcdoperator.v0.9.4"]
    yaml_done = kupgrade(
        "olm", "render-template", "semver", str(template), "--bundles", str(pool), "-o", "yaml"
    )
    assert list(yaml.safe_load_all(yaml_done.stdout)) == blobs


def test_basic_command_keeps_entries_and_renders_bundles(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b", package="etcd", version="0.9.4")
    template = _write(
        tmp_path / "basic.yaml",
        {
            "schema": "olm.template.basic",
            "entries": [
                {"schema": "olm.package", "name": "etcd", "defaultChannel": "stable"},
                {
                    "schema": "olm.channel",
                    "package": "etcd",
                    "name": "stable",
                    "entries": [{"name": "etcdoperator.v0.9.4"}],
                },
                {"schema": "olm.bundle", "image": str(bundle)},
            ],
        },
    )
    ref = "quay.io/example/{{.Package}}-bundle:v{{ .Version }}"
    done = kupgrade(
        "olm", "render-template", "basic", str(template), "--image-ref-template", ref, "-o", "yaml"
    )
    assert done.returncode == 0, done.stderr
    docs = list(yaml.safe_load_all(done.stdout))
    assert [d["schema"] for d in docs] == ["olm.package", "olm.channel", "olm.bundle"]
    assert docs[2]["name"] == "etcdoperator.v0.9.4"
    # a bundle directory has no image: opm's --alpha-image-ref-template gives it one
    assert docs[2]["image"] == "quay.io/example/etcd-bundle:v0.9.4"
    assert {"name": "", "image": docs[2]["image"]} in docs[2]["relatedImages"]
    valid = tmp_path / "out"
    valid.mkdir()
    (valid / "catalog.yaml").write_text(done.stdout)
    assert kupgrade("olm", "validate", str(valid)).returncode == 0


def test_bad_templates_fail_in_one_line(tmp_path: Path) -> None:
    cases = [
        ("basic", {"schema": "olm.semver"}, 'template has unknown schema ("olm.semver")'),
        (
            "basic",
            {
                "schema": "olm.template.basic",
                "entries": [{"schema": "olm.bundle", "image": "x", "package": "p"}],
            },
            "unexpected fields present in basic template bundle",
        ),
        (
            "basic",
            {
                "schema": "olm.template.basic",
                "entries": [{"schema": "olm.bundle", "image": "quay.io/x/gone:1"}],
            },
            "bundle image 'quay.io/x/gone:1' cannot be reached",
        ),
        (
            "basic",
            {"schema": "olm.template.basic", "entries": [{"schema": "olm.package", "name": 5}]},
            'template entries (blob 1): expected value for key "name"',
        ),
        ("semver", {"schema": "olm.template.basic"}, "input file has unknown schema"),
        ("semver", {"schema": "olm.semver", "beta": {}}, 'json: unknown field "beta"'),
        (
            "semver",
            {
                "schema": "olm.semver",
                "generateMajorChannels": True,
                "defaultChannelTypePreference": "minor",
            },
            "schema attribute mismatch",
        ),
        (
            "semver",
            {"schema": "olm.semver", "defaultChannelTypePreference": "patch"},
            "unknown DefaultChannelTypePreference",
        ),
        ("semver", {"schema": "olm.semver"}, "no bundles specified"),
    ]
    for index, (kind, doc, words) in enumerate(cases):
        template = _write(tmp_path / f"t{index}.yaml", doc)
        done = kupgrade("olm", "render-template", kind, str(template))
        assert done.returncode == 1, (doc, done.stderr)
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert words in done.stderr, done.stderr
    missing = kupgrade("olm", "render-template", "semver", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 1
    assert len(missing.stderr.splitlines()) == 1
    unknown_type = kupgrade("olm", "render-template", "substitutes", str(tmp_path / "t0.yaml"))
    assert unknown_type.returncode == 2
    bad_ref = kupgrade(
        "olm",
        "render-template",
        "basic",
        str(tmp_path / "t0.yaml"),
        "--image-ref-template",
        "{{.Bad}}",
    )
    assert bad_ref.returncode == 1
    assert bad_ref.stderr.count("\n") == 1
    assert "invalid image reference template '{{.Bad}}'" in bad_ref.stderr
