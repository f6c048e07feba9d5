"""The package version (one place: the page footer, --version and the package face read it)."""

__version__ = "0.1.0"
