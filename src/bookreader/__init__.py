"""BookReader: an offline textbook reader with grounded, cited question answering."""

__version__ = "0.1.0"
