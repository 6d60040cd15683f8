#!/usr/bin/env bash
# Runs a command as root inside a root made by scripts/debian13-root.sh, with /proc, /sys, /dev, an empty /tmp
# (tmpfs) and this machine's DNS. Every mount lives in a private mount namespace: it ends with the command however
# the command ends (killed included), and no mount is ever seen outside.
#
#   bash scripts/in-root.sh ROOT [--bind DIR]... COMMAND [ARG...]
#
# --bind DIR: this machine's directory DIR at the same path inside the root (created there when missing).
# The command gets a plain environment (PATH, HOME=/root, LANG=C.UTF-8, TERM) plus CI, the proxies and where pip looks
# (PIP_CERT's file copied in).
set -euo pipefail
say() { echo "in-root: $*" >&2; }
[ $# -ge 2 ] || { say "usage: $0 ROOT [--bind DIR]... COMMAND [ARG...]"; exit 2; }
root=$(realpath -m "$1")
shift
[ -f "$root/.ptsbench-root" ] || { say "$root is not a root made by scripts/debian13-root.sh"; exit 1; }
[ "$(id -u)" = 0 ] || { say "needs root (chroot)"; exit 1; }
binds=()
while [ "${1:-}" = --bind ]; do
  binds+=("$(realpath -e "$2")")
  shift 2
done
env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "TERM=${TERM:-dumb}")
while IFS= read -r assignment; do env+=("$assignment"); done < <(env | grep -E '^(CI|PIP_(CERT|INDEX_URL|EXTRA_INDEX_URL|TRUSTED_HOST|DEFAULT_TIMEOUT)|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY)=' || true)
cert=""  # pip trusts what this machine trusts (a proxy's certificate authority too): its PIP_CERT file goes along
if [ -f "${PIP_CERT:-}" ]; then
  cert=$PIP_CERT
  env+=(PIP_CERT=/tmp/pip-cert.pem)
fi

exec unshare --mount --propagation private bash -euc '
  root=$1 cert=$2 nbinds=$3; shift 3
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
  for ((i = 0; i < nbinds; i++)); do
    mkdir -p "$root$1"
    mount --bind "$1" "$root$1"
    shift
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  [ -z "$cert" ] || cp "$cert" "$root/tmp/pip-cert.pem"
  exec chroot "$root" /usr/bin/env -i "$@"
' in-root "$root" "$cert" "${#binds[@]}" "${binds[@]}" "${env[@]}" "$@"
