"""The documentation's links resolve, the README's are absolute, and the README shows the test command CI runs.

Reads README.md, docs/**/*.md and pyproject.toml only (no import of the package):
every relative link must name an existing file or folder of the repository, and a
``#fragment`` must name a heading of the target file (GitHub's anchors). The README
is also the wheel's long description (pyproject.toml: ``readme``), which the package
index shows with no repository to resolve a relative link against, so its links are
absolute: into the repository (``project.urls.Source``), where they are resolved
against this checkout in the same way. The README's test command must be the nox
command that .ci/run runs.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from exov_testing import REPOSITORY

ROOT = REPOSITORY
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# What the README's links into the repository start with: its files and folders on the default branch.
REPOSITORY_URL = PROJECT["urls"]["Source"]
BRANCH_URLS = tuple(f"{REPOSITORY_URL}/{kind}/main/" for kind in ("blob", "tree"))

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
NOX_COMMAND = re.compile(r"python3 -m nox -s ci\b[^\n]*")


def _prose(text: str) -> str:
    """The Markdown without code blocks and inline code, where link syntax is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text())):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _in_checkout(document: Path, target: str) -> tuple[Path, str] | None:
    """The file or folder of this checkout a link names, and its fragment; None for a page elsewhere."""
    if target.startswith(f"{REPOSITORY_URL}#"):  # the repository's front page: the README
        return ROOT / "README.md", target.partition("#")[2]
    for prefix in BRANCH_URLS:
        if target.startswith(prefix):
            path_part, _, fragment = target.removeprefix(prefix).partition("#")
            return ROOT / path_part, fragment
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
        return None
    path_part, _, fragment = target.partition("#")
    return ((document.parent / path_part).resolve() if path_part else document), fragment


def _broken_links(document: Path) -> list[str]:
    broken = []
    for target in LINK.findall(_prose(document.read_text())):
        found = _in_checkout(document, target)
        if found is None:
            continue
        resolved, fragment = found
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors(resolved):
            broken.append(f"{target}: no heading with the anchor #{fragment}")
    return broken


def test_links_into_the_repository_resolve():
    assert len(DOCUMENTS) > 1, "docs/ holds no Markdown files"
    broken = {str(d.relative_to(ROOT)): b for d in DOCUMENTS if (b := _broken_links(d))}
    assert not broken, f"broken links: {broken}"


def test_the_readme_links_are_absolute():
    """PyPI renders the long description without a base address: a relative link there leads nowhere."""
    assert PROJECT["readme"] == "README.md"
    relative = [t for t in LINK.findall(_prose((ROOT / "README.md").read_text()))
                if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]
    assert not relative, f"README.md links relatively to {relative}: link to {BRANCH_URLS[0]}<path> instead"


def test_the_checkout_resolves_links_into_the_repository():
    readme = ROOT / "README.md"
    assert _in_checkout(readme, f"{REPOSITORY_URL}/blob/main/docs/design.md#x") == (ROOT / "docs" / "design.md", "x")
    assert _in_checkout(readme, f"{REPOSITORY_URL}#install") == (readme, "install")
    assert _in_checkout(readme, "https://pytorch.org/executorch") is None


def test_readme_shows_the_test_command_ci_runs():
    ci = NOX_COMMAND.findall((ROOT / ".ci" / "run").read_text())
    readme = NOX_COMMAND.findall((ROOT / "README.md").read_text())
    assert len(ci) == 1, f".ci/run should run one nox tests command, found {ci}"
    assert ci[0] in readme, f"the README does not show .ci/run's command {ci[0]!r}; it shows {readme}"
    nox = re.search(r"pip install -q '(nox[^']*)'", (ROOT / ".ci" / "run").read_text()).group(1)
    line = f"python3 -m pip install '{nox}' && {ci[0]}"
    assert line in (ROOT / "README.md").read_text().splitlines(), f"the README lacks the line {line!r}"
