"""Importing NNCF (OpenVINO's quantization library), the optional dependency of quantization and weight
compression: the pip command when it is missing, the release to install when it does not import."""

from __future__ import annotations

INSTALL_HINT = "pip install 'executorch-openvino[quantize]'"


# NNCF releases that import beside each OpenVINO release (measured with torch 2.13.0: nncf 3.4.0 fails
# on OpenVINO 2025.4.1 with "type object 'Type' has no attribute 'u2'").
NNCF_FOR_OPENVINO = {"2026.4": "3.4.0", "2025.4": "3.1.0"}


def import_nncf(feature: str):
    """The ``nncf`` module; ``ImportError`` naming `feature`, the pip command, or the NNCF release for this
    OpenVINO when it is missing or does not import."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        import nncf
    except ImportError as exc:
        raise ImportError(f"{feature} needs NNCF, which is not installed here ({exc}): "
                          f"{INSTALL_HINT}") from exc
    except AttributeError as exc:  # an NNCF that expects a newer OpenVINO
        try:
            found = f"nncf {version('nncf')} with openvino {version('openvino')}"
        except PackageNotFoundError:
            found = "this nncf with this openvino"
        pairs = ", ".join(f"nncf=={n} for openvino {o}.x" for o, n in NNCF_FOR_OPENVINO.items())
        raise ImportError(f"{found} does not import ({exc}): install the NNCF release made for this OpenVINO "
                          f"({pairs})") from exc
    return nncf
