#!/bin/sh
# The test node's own plumbing, run by mmdebstrap once the packages are in (`--customize-hook`):
# $1 the root file system, $2 the guest agent (agent.py), $3... the .debs of other suites to install
# with dpkg -i (containerd 2.x of sid). Everything here is what makes a fresh Debian 12 boot reachable
# from the test without a network; the node's configuration (containerd, bootlet) is the test's job.
set -eu
root=$1
agent=$2
shift 2

for deb in "$@"; do
  cp "$deb" "$root/tmp/"
  chroot "$root" dpkg -i "/tmp/$(basename "$deb")"
  rm -f "$root/tmp/$(basename "$deb")"
done

echo node1 >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tnode1\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# The root file system is the virtio disk; the host's share (the .deb, the image tarballs, fixtures) is 9p.
mkdir -p "$root/mnt/host"
cat >"$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 rw,errors=remount-ro 0 1
bootlet-share /mnt/host 9p trans=virtio,version=9p2000.L,ro,msize=262144,nofail 0 0
FSTAB
# A persistent journal: the power-off test reads the previous boot's log after the reboot.
mkdir -p "$root/var/log/journal"
passwd --root "$root" -d root

install -D -m 0755 "$agent" "$root/usr/local/lib/bootlet-guest/agent.py"
cat >"$root/etc/systemd/system/bootlet-guest-agent.service" <<'UNIT'
[Unit]
Description=bootlet test node: runs the host's commands from a virtio-serial port
# Up early and down last: the host watches the power-off through it until the end.
DefaultDependencies=no
After=systemd-udevd.service local-fs.target
Before=shutdown.target

[Service]
ExecStart=/usr/bin/python3 -u /usr/local/lib/bootlet-guest/agent.py
Restart=always
RestartSec=1

[Install]
WantedBy=sysinit.target
UNIT
chroot "$root" systemctl enable bootlet-guest-agent.service
# A small initrd: only what mounts the root file system (the kernel has virtio and ext4 as modules).
# Under TCG the generic one (MODULES=most) took a quarter of the boot to unpack and probe.
printf 'MODULES=list\nCOMPRESS=zstd\n' >"$root/etc/initramfs-tools/conf.d/bootlet-guest.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all
# What a virtual node without a display, fuse, loop devices or device mapper never needs at boot.
chroot "$root" systemctl mask modprobe@drm.service modprobe@fuse.service modprobe@loop.service \
  modprobe@dm_mod.service modprobe@efi_pstore.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
  sys-kernel-debug.mount sys-kernel-tracing.mount systemd-pstore.service e2scrub_reap.service getty@tty1.service \
  >/dev/null 2>&1
# Timers that would take a TCG core for minutes in the middle of a test.
chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer man-db.timer dpkg-db-backup.timer \
  e2scrub_all.timer fstrim.timer systemd-tmpfiles-clean.timer >/dev/null 2>&1 || true
# The package cache and lists are of no use in a guest without a network.
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
