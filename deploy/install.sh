#!/usr/bin/env bash
# Install Croupier on Raspberry Pi OS (bookworm): a venv in /opt/croupier, the croupier user, state and config
# folders, the systemd unit and the udev rule. Run from a checkout: sudo deploy/install.sh [ID [table|cabinet|link]]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
table="${1:-}"
kind="${2:-table}"
[ "$(id -u)" -eq 0 ] || { echo "run as root (sudo $0)" >&2; exit 1; }

apt-get update
apt-get install -y python3-venv python3-dev libzmq5 sqlite3

id croupier >/dev/null 2>&1 || useradd --system --home /var/lib/croupier --shell /usr/sbin/nologin croupier
for group in dialout gpio video spi; do
    getent group "$group" >/dev/null && usermod -aG "$group" croupier
done
install -d -o croupier -g croupier -m 0750 /var/lib/croupier
install -d -o root -g croupier -m 0750 /etc/croupier /etc/croupier/keys

python3 -m venv /opt/croupier/venv
/opt/croupier/venv/bin/pip install --upgrade pip
/opt/croupier/venv/bin/pip install "$here"

install -m 0644 "$here/deploy/systemd/croupier@.service" "$here/deploy/systemd/croupier-screens@.service" \
    /etc/systemd/system/
install -m 0644 "$here/deploy/udev/99-croupier-shoe.rules" /etc/udev/rules.d/
udevadm control --reload-rules && udevadm trigger
systemctl daemon-reload

if [ ! -f /etc/croupier/keys/server.key_secret ]; then
    /opt/croupier/venv/bin/croupier keys server dealer attendant ops --dir /etc/croupier/keys
    chown -R root:croupier /etc/croupier/keys && chmod 0640 /etc/croupier/keys/*.key_secret
fi
if [ ! -f /etc/croupier/journal.key ]; then   # the journals' MAC key ([table] journal_key): the service alone reads it.
    # Never replace it: every journal made with it would refuse to start. Back it up with the journals.
    (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32))' > /etc/croupier/journal.key)
    chown croupier:croupier /etc/croupier/journal.key && chmod 0400 /etc/croupier/journal.key
fi
if [ ! -f /etc/croupier/dealer-screen.token ]; then   # the dealer screen's secret ([screens].dealer_token_file)
    python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > /etc/croupier/dealer-screen.token
    chown root:croupier /etc/croupier/dealer-screen.token && chmod 0640 /etc/croupier/dealer-screen.token
fi
if [ -n "$table" ]; then
    case "$kind" in
        cabinet) example="cabinet-light-speed.toml" ;;
        link) example="progressive-light-speed.toml" ;;
        *) example="table-blackjack.toml" ;;
    esac
    [ -f "/etc/croupier/$table.toml" ] || install -m 0640 -g croupier "$here/deploy/config/$example" \
        "/etc/croupier/$table.toml"
    echo "edit /etc/croupier/$table.toml, then: systemctl enable --now croupier@$table croupier-screens@$table"
fi
echo "installed; a demo without hardware: /opt/croupier/venv/bin/croupier demo"
