"""The window: PySide6 widgets over the library API (``bookreader.api``)."""
