#!/bin/sh
# Register the packaged BookReader with the desktop menu for the current user.
# Run it from the unpacked app folder: ./install-desktop-entry.sh  (remove with --uninstall)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor"
if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$apps/bookreader.desktop" "$icons/256x256/apps/bookreader.png" \
          "$icons/scalable/apps/bookreader.svg"
    echo "BookReader removed from the desktop menu (the app folder and your data are kept)."
    exit 0
fi
mkdir -p "$apps" "$icons/256x256/apps" "$icons/scalable/apps"
cp "$here/bookreader.png" "$icons/256x256/apps/bookreader.png"
cp "$here/bookreader.svg" "$icons/scalable/apps/bookreader.svg"
sed "s|^Exec=.*|Exec=\"$here/bookreader\" %f|" "$here/bookreader.desktop" > "$apps/bookreader.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" || true
echo "BookReader added to the desktop menu: $apps/bookreader.desktop"
