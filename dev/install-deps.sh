#!/usr/bin/env bash
# Installs the Debian packages bootlet's tests, bench and `npm run up` need, only those missing.
# Used by .ci/run and dev/up.ts. Never starts a system containerd or etcd: the tests start private
# instances, and a system etcd would take 127.0.0.1:2379 from the example manifests.
set -euo pipefail

PACKAGES=(containerd runc busybox-static etcd-server gcc libc6-dev openssl iproute2 python3 systemd dbus python3-dbus python3-gi containernetworking-plugins iptables
  # The booted test node (npm run test:node): the guest image is built with mmdebstrap, booted by qemu (TCG: no
  # KVM here), on a qcow2 overlay made with qemu-img; mkfs.ext4 -d writes the image.
  qemu-system-x86 qemu-utils mmdebstrap e2fsprogs)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "Debian packages: all present (${PACKAGES[*]})"
  exit 0
fi

echo "Debian packages: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: must run as root to install ${missing[*]} (or install them by hand)" >&2
  exit 1
fi

# A policy-rc.d that says 101 keeps maintainer scripts from starting services.
policy=/usr/sbin/policy-rc.d
added_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  added_policy=1
fi
cleanup() { if [ "$added_policy" = 1 ]; then rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
echo "Debian packages: installed ${missing[*]}"
