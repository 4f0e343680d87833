"""Debian packages the sessions need from the system (mingw-w64, wine, clang)."""

from __future__ import annotations

import os
import shutil

import nox


def debian_tools(session: nox.Session, packages: list[str], find):
    """What `find()` returns (a tuple of paths, None where missing); installs Debian's `packages` first
    when something is missing and this runs as root, else stops with the command to run."""
    found = find()
    if not all(found) and os.geteuid() == 0 and shutil.which("apt-get"):
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages,
                    external=True, env={"DEBIAN_FRONTEND": "noninteractive"})
        found = find()
    if not all(found):
        session.error(f"Debian's {', '.join(packages)} are needed: sudo apt-get install {' '.join(packages)}")
    return found
