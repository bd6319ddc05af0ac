"""``bookreader serve``: the library behind HTTP for a web textbook and a class.

A thin layer over :class:`bookreader.library.Library`, like ``cli.py``: FastAPI routes
(:mod:`.routes`), bearer-token auth and per-key rate limits (:mod:`.app`, :mod:`.keys`,
:mod:`.limits`), a bounded answer pool with time budgets and streaming
(:mod:`.answers`), and a browser client (``static/bookreader.js``, ``GET /demo``).
"""

from bookreader.server.app import create_app
from bookreader.server.state import ServeConfig

__all__ = ["create_app", "ServeConfig"]
