#!/bin/bash
# apt-get update, then install PACKAGE... (as root, no recommends), one at a time: ptsbench's scripts run beside each
# other (the device labs start together, the tests build fio beside them) and apt-get fails at once when another
# apt-get holds its locks. This waits for ptsbench's own (a lock file) and for any other's (apt's DPkg::Lock::Timeout),
# up to 15 minutes each. apt-get's output goes to stderr; the exit status is apt-get's.
#   bash scripts/apt-install.sh PACKAGE...
set -euo pipefail
[ "$#" -gt 0 ] || { echo "apt-install: name the packages to install" >&2; exit 2; }
WAIT_S=900
exec 9>/var/lock/ptsbench-apt.lock
flock -w "$WAIT_S" 9 || { echo "apt-install: another of ptsbench's scripts held the apt lock for $WAIT_S s" >&2; exit 1; }
wait=(-o "DPkg::Lock::Timeout=$WAIT_S")
apt-get "${wait[@]}" update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends "$@" >&2
