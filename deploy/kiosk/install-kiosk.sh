#!/usr/bin/env bash
# Make this Raspberry Pi (Raspberry Pi OS with desktop, bookworm) a Croupier screen: run as the desktop user
# (not root), with the page to show:   deploy/kiosk/install-kiosk.sh http://table-pi:8080/table/bj-1
# Installs croupier-kiosk in ~/.local/bin, writes ~/.config/croupier-kiosk.conf and starts it with the desktop
# session (labwc, wayfire or LXDE/X11). Running it again changes the URL; nothing is added twice.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
url="${1:-}"
[ -n "$url" ] || { echo "usage: $0 URL   (e.g. http://table-pi:8080/table/bj-1)" >&2; exit 2; }
[ "$(id -u)" -ne 0 ] || { echo "run as the desktop user, not root" >&2; exit 2; }
case "$url" in http://*|https://*) ;; *) echo "$url: not an http(s) URL" >&2; exit 2 ;; esac

config="${XDG_CONFIG_HOME:-$HOME/.config}"
bin="$HOME/.local/bin/croupier-kiosk"
install -D -m 0755 "$here/croupier-kiosk" "$bin"
mkdir -p "$config"
printf 'URL=%q\nWAIT=120\n' "$url" > "$config/croupier-kiosk.conf"
chmod 0600 "$config/croupier-kiosk.conf"   # a dealer URL carries its token

add_line() {  # add_line FILE LINE: once
    mkdir -p "$(dirname "$1")"
    touch "$1"
    grep -qxF "$2" "$1" || echo "$2" >> "$1"
}
# labwc (Raspberry Pi OS since late 2024)
add_line "$config/labwc/autostart" "$bin &"
# wayfire (Raspberry Pi OS bookworm, 2023-2024)
if ! grep -q '^croupier_kiosk' "$config/wayfire.ini" 2>/dev/null; then
    mkdir -p "$config"
    touch "$config/wayfire.ini"
    if grep -q '^\[autostart\]' "$config/wayfire.ini"; then
        sed -i "/^\[autostart\]/a croupier_kiosk = $bin" "$config/wayfire.ini"
    else
        printf '\n[autostart]\ncroupier_kiosk = %s\n' "$bin" >> "$config/wayfire.ini"
    fi
fi
# LXDE on X11 (Raspberry Pi OS with the X11 session chosen in raspi-config)
add_line "$config/lxsession/LXDE-pi/autostart" "@$bin"

command -v chromium-browser >/dev/null || command -v chromium >/dev/null || \
    echo "note: no Chromium yet: sudo apt install chromium-browser" >&2
command -v curl >/dev/null || echo "note: croupier-kiosk needs curl: sudo apt install curl" >&2
echo "screen set to $url; it starts with the desktop (log out and in, or reboot). Run $bin to start it now."
