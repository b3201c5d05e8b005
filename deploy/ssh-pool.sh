#!/usr/bin/env bash
# Installs and starts actors on a list of hosts over SSH (deploy/README.md; not run here).
# Usage: deploy/ssh-pool.sh ACTORS_PER_HOST HOST...
set -euo pipefail
per_host=$1; shift
root="$(cd "$(dirname "$0")/.." && pwd)"
for host in "$@"; do
  scp "$root/target/release/brandubh" "$host:/tmp/brandubh"
  scp "$root/deploy/systemd/brandubh-actor@.service" "$host:/tmp/"
  scp "$root/deploy/systemd/brandubh.env" "$host:/tmp/"
  ssh "$host" "sudo install -m 755 /tmp/brandubh /usr/local/bin/brandubh &&
    sudo install -D -m 600 /tmp/brandubh.env /etc/brandubh/brandubh.env &&
    sudo install -m 644 '/tmp/brandubh-actor@.service' /etc/systemd/system/ &&
    (id brandubh >/dev/null 2>&1 || sudo useradd --system brandubh) &&
    sudo install -d -o brandubh /var/cache/brandubh &&
    sudo systemctl daemon-reload &&
    for i in \$(seq 1 $per_host); do sudo systemctl enable --now brandubh-actor@\$i; done"
done
