"""The package's version (one place: the package, the outputs' headers and the manifests read it)."""

__all__ = ["__version__"]

__version__ = "0.2.0"
