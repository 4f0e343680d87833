"""A release folder's checksums and its PEP 503 package index."""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

ARTIFACT_SUFFIXES = (".whl", ".tar.gz")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def artifacts(dist: Path) -> list[Path]:
    return sorted(p for p in dist.iterdir() if p.is_file() and p.name.endswith(ARTIFACT_SUFFIXES))


def write_sha256sums(dist: Path) -> Path:
    """dist/SHA256SUMS in the format `sha256sum -c` reads."""
    out = dist / "SHA256SUMS"
    out.write_text("".join(f"{_sha256(p)}  {p.name}\n" for p in artifacts(dist)))
    return out


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def write_simple_index(dist: Path, project: str, requires_python: str) -> Path:
    """dist/simple/ (PEP 503): the root page and the project's page, linking to ../../<file>#sha256=...

    Each link carries data-requires-python (PEP 503's extension) so pip skips
    what the interpreter cannot use before downloading it.
    """
    root = dist / "simple"
    page = root / _normalized(project)
    page.mkdir(parents=True, exist_ok=True)
    attribute = html.escape(requires_python)
    links = "".join(
        f'    <a href="../../{html.escape(p.name)}#sha256={_sha256(p)}" data-requires-python="{attribute}">'
        f"{html.escape(p.name)}</a><br>\n" for p in artifacts(dist))
    (page / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")
    name = _normalized(project)
    (root / "index.html").write_text(
        f'<!DOCTYPE html>\n<html><body>\n    <a href="{name}/">{name}</a><br>\n</body></html>\n')
    return root
