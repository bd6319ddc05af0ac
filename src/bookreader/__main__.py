"""``python -m bookreader``: the command line (``bookreader gui`` opens the window)."""

from bookreader.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
