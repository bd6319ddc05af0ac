"""Entry point of the packaged app.

With no arguments it opens the reader window; with arguments it is the ``bookreader``
command line (``--self-test``, ``doctor``, ``ingest`` ...), so one binary serves both.
"""

import multiprocessing
import sys

from bookreader.cli import main

if __name__ == "__main__":
    # The reader runs its library in a child process; a frozen app must let that child
    # start (it re-enters this file with multiprocessing's arguments).
    multiprocessing.freeze_support()
    args = sys.argv[1:]
    if not args or (len(args) == 1 and args[0].lower().endswith(".pdf")):
        args = ["gui", *args]
    sys.exit(main(args))
