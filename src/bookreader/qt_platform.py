"""Why Qt could not open a window here: checked before the window starts, because Qt
aborts the whole process (it does not raise) when no platform plugin can start.

No Qt is imported here (loading it is what may abort); ``bookreader gui`` and
``bookreader doctor`` use :func:`display_problem`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Optional


def display_problem(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why Qt could not open a window here, or None when it should be able to.

    Qt aborts the whole process (it does not raise) when no platform plugin can start, so
    the usual causes on Linux are checked first: no display at all (a server, an SSH
    session) and, for X11, the missing ``libxcb-cursor0`` that Qt 6.5+ needs.
    """
    env = os.environ if environ is None else environ
    if env.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return None  # a platform chosen on purpose (offscreen, wayland ...), or not Linux
    if env.get("WAYLAND_DISPLAY"):
        return None
    if not env.get("DISPLAY"):
        return (
            "There is no graphical display here (neither DISPLAY nor WAYLAND_DISPLAY is "
            "set), so the reader window cannot open. Run it on a desktop session, or use "
            "`xvfb-run bookreader gui` for a virtual screen."
        )
    import ctypes.util

    if ctypes.util.find_library("xcb-cursor") is None:
        missing = "libxcb-cursor.so.0"
    else:
        missing = _xcb_plugin_missing_library()
    if missing:
        return (
            f"The reader window needs X11 libraries that are not installed ({missing} is "
            f"missing). Install them (Debian/Ubuntu: sudo apt-get install {XCB_PACKAGES}) "
            f"and start BookReader again."
        )
    return None


#: Debian packages Qt's X11 plugin needs beyond a minimal system.
XCB_PACKAGES = (
    "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 "
    "libxkbcommon-x11-0"
)


def _xcb_plugin_missing_library() -> Optional[str]:
    """The shared library Qt's X11 platform plugin cannot find, or None.

    Loading the plugin the way Qt will names exactly what is missing; Qt itself only says
    "could not load the xcb plugin" and aborts.
    """
    import ctypes

    try:
        import PySide6
    except ImportError:
        return None
    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.is_file():
        return None
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        return str(exc).split(":", 1)[0].strip() or str(exc)
    return None
