#!/usr/bin/env bash
# The device lab: boots a QEMU guest (software emulation) with emulated NVMe, SCSI, SATA and rotational disks and
# runs ptsbench's device checks in it, on the real Linux drivers and tools, with this checkout's own venv (the host's
# root is shared read-only into the guest). Prints one line `device lab: N passed, M failed`.
#
#   bash scripts/device-lab.sh [--debian13|--ftl] [--results FILE] [--checks NAME,NAME...] [--keep]
#
# --debian13: the Debian 13 variant (tests/device_lab/device_lab_debian13.py): the same guest kernel, but QEMU 10 runs inside
# the root scripts/debian13-root.sh makes (PTSBENCH_DEBIAN13_ROOT, else /var/cache/ptsbench/debian13) and that root,
# not the host's, is shared into the guest (fio 3.39, Python 3.13, nvme-cli 2.13; ptsbench installed from this
# checkout into a venv there); its disks: an NVMe controller with the OCP extended SMART log and an FDP subsystem.
# --ftl: the flash translation layer variant (tests/device_lab/device_lab_ftl.py): no QEMU disks; NVMeVirt (third_party/nvmevirt
# with third_party/nvmevirt-ptsbench.patch, built for the guest kernel once and kept in PTSBENCH_NVMEVIRT_CACHE, else
# /var/cache/ptsbench/nvmevirt) makes an emulated SSD with an FTL and garbage collection in memory the guest kernel
# reserves (memmap=); a third vCPU for its polling threads; the nvme driver's timeouts at 600 s (a GC stall can
# outlast the default 30 s, which NVMeVirt cannot abort).
# --results: where the results go (JSON lines, one per check); --checks: run only these checks (names as in
# tests/device_lab/device_lab_guest.py, tests/device_lab/device_lab_debian13.py or tests/device_lab/device_lab_ftl.py); --keep: keep the work
# directory (disk images, samples).
# Exit status: 0 all passed, 1 a check failed, 77 the lab cannot run on this machine (the reason on stderr).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
results="" checks="" keep=0 variant=debian12
while [ $# -gt 0 ]; do
  case "$1" in
    --debian13) variant=debian13; shift ;;
    --ftl) variant=ftl; shift ;;
    --results) results=$2; shift 2 ;;
    --checks) checks=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "device-lab: unknown option $1" >&2; exit 2 ;;
  esac
done
cannot() { echo "device lab: cannot run: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || cannot "needs root (QEMU's share of / must read every file; apt-get installs the packages)"
[ -x "$repo/.venv/bin/python" ] || cannot "no venv in $repo: run bash scripts/install.sh --test first"

# what the lab needs, installed only when missing: the guest's kernel and tools run from the host's root (in the
# Debian 13 variant only its kernel and the initramfs: QEMU and the tools come from the Debian 13 root)
tools="qemu-system-x86_64:qemu-system-x86 busybox:busybox-static nvme:nvme-cli sg_format:sg3-utils hdparm:hdparm
       smartctl:smartmontools sdparm:sdparm cpio:cpio"
[ "$variant" = debian13 ] && tools="busybox:busybox-static cpio:cpio"
[ "$variant" = ftl ] && tools="qemu-system-x86_64:qemu-system-x86 busybox:busybox-static nvme:nvme-cli cpio:cpio
                              insmod:kmod make:make gcc-12:gcc-12 patch:patch"
packages=()
for pair in $tools; do
  command -v "${pair%%:*}" >/dev/null || packages+=("${pair#*:}")
done
busybox_bin=$(command -v busybox || true)
[ -n "$busybox_bin" ] && ! ldd "$busybox_bin" >/dev/null 2>&1 || packages+=(busybox-static)  # needs a static one
ls /boot/vmlinuz-*-amd64 >/dev/null 2>&1 || packages+=(linux-image-amd64)
if [ "${#packages[@]}" -gt 0 ]; then
  echo "device lab: installing ${packages[*]} with apt-get" >&2
  bash "$repo/scripts/apt-install.sh" "${packages[@]}" || cannot "apt-get could not install ${packages[*]}"
fi

# the newest Debian kernel whose modules are installed: the guest loads them from the shared root
kernel=""
for candidate in $(ls -v /boot/vmlinuz-*-amd64 2>/dev/null); do
  version=${candidate#/boot/vmlinuz-}
  [ -f "/lib/modules/$version/modules.dep" ] && kernel=$candidate
done
[ -n "$kernel" ] || cannot "no /boot/vmlinuz-*-amd64 with its modules (apt-get install linux-image-amd64)"
version=${kernel#/boot/vmlinuz-}
moddir=/lib/modules/$version

if [ "$variant" = ftl ]; then
  # NVMeVirt built for the guest kernel: its headers, installed when missing; the module kept by the hash of the
  # vendored source, the patch and the kernel version, so it is built once (about 30 s) and again only when one
  # of them changes
  if [ ! -f "$moddir/build/Makefile" ]; then
    echo "device lab: installing linux-headers-$version with apt-get (NVMeVirt is built against them)" >&2
    bash "$repo/scripts/apt-install.sh" "linux-headers-$version" \
      || cannot "apt-get could not install linux-headers-$version"
  fi
  key=$({ echo "$version"; cd "$repo/third_party" && find nvmevirt -type f -print0 | sort -z \
          | xargs -0 sha256sum && sha256sum nvmevirt-ptsbench.patch; } | sha256sum | cut -c1-16)
  nvmev_cache=${PTSBENCH_NVMEVIRT_CACHE:-/var/cache/ptsbench/nvmevirt}
  nvmev=$nvmev_cache/$version-$key/nvmev.ko
  mkdir -p "$nvmev_cache"
  exec 7>"$nvmev_cache/build.lock"
  flock 7  # another lab building the same module: wait for it, then use its build
  if [ ! -f "$nvmev" ]; then
    echo "device lab: building NVMeVirt (conventional SSD) for $version into $(dirname "$nvmev")" >&2
    build=$(mktemp -d /tmp/ptsbench-nvmevirt.XXXXXX)
    cp -r "$repo/third_party/nvmevirt/." "$build"
    if ! patch -s -p1 -d "$build" < "$repo/third_party/nvmevirt-ptsbench.patch" >"$build/patch.log" 2>&1; then
      echo "device lab: third_party/nvmevirt-ptsbench.patch does not apply to third_party/nvmevirt:" >&2
      cat "$build/patch.log" >&2; rm -rf "$build"; exit 1
    fi
    # Kbuild selects NVMeVirt's target: the conventional SSD (page mapping, write buffer, greedy GC), not its default
    if ! make -C "$moddir/build" M="$build" CONFIG_NVMEVIRT_NVM= CONFIG_NVMEVIRT_SSD=y modules \
         >"$build/build.log" 2>&1; then
      echo "device lab: NVMeVirt did not build against $moddir/build:" >&2
      tail -30 "$build/build.log" >&2; rm -rf "$build"; exit 1
    fi
    mkdir -p "$(dirname "$nvmev")"
    cp "$build/nvmev.ko" "$nvmev.new" && mv "$nvmev.new" "$nvmev"
    rm -rf "$build"
  fi
  flock -u 7
  if [ "${PTSBENCH_LAB_SPRANDOM:-}" = 1 ]; then
    # a fio with sprandom for the sprandom check (fio 3.41's preconditioning; the host's fio, which the guest runs, is
    # older): built from its release tarball once (a minute or a few) and kept, usable in the guest, which runs the
    # host's root
    lab_fio=$(bash "$repo/scripts/build-fio.sh") || { status=$?; [ "$status" = 77 ] && exit 77; exit 1; }
  fi
fi

if [ "$variant" = debian13 ]; then
  root=${PTSBENCH_DEBIAN13_ROOT:-/var/cache/ptsbench/debian13}
  # this lab and the Debian 13 part of the suite (scripts/test-debian13.sh) take turns: CI runs both in the
  # background beside the main suite, and both at once would crowd its 2 CPUs
  mkdir -p "$(dirname "$root")"
  exec 8>"$root.turn"
  flock -n 8 || { echo "device lab: waiting for scripts/test-debian13.sh to finish with $root" >&2; flock 8; }
  bash "$repo/scripts/debian13-root.sh" "$root" qemu-system-x86 nvme-cli kmod \
    || cannot "no Debian 13 root with QEMU and nvme-cli at $root (scripts/debian13-root.sh failed, its reason above)"
  venv=/opt/ptsbench-lab-venv  # the lab's own: test-debian13.sh may install into its venv meanwhile
  # ptsbench from this checkout, as a user installs it (no editable install: the checkout stays as it is)
  bash "$repo/scripts/in-root.sh" "$root" --bind "$repo" bash -euc '
    repo=$1 venv=$2
    mkdir /tmp/ptsbench
    tar -C "$repo" --exclude=./.venv --exclude=./.git --exclude=./build --exclude="*.egg-info" \
        --exclude=__pycache__ --exclude="*.so" --exclude=./src/ptsbench/fio/_bound_exec -c . | tar -C /tmp/ptsbench -x
    [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check /tmp/ptsbench -c /tmp/ptsbench/constraints.txt
  ' lab-venv "$repo" "$venv" >&2 || cannot "pip could not install ptsbench into $venv of $root (its reason above)"
fi

# the work folder (disk images, the initramfs) in TMPDIR: tests/conftest.py sets it to the lab's folder in pytest's
# run folder, so a lab killed before its exit trap leaves its images where pytest removes old runs' folders
work=$(mktemp -d "${TMPDIR:-/tmp}/ptsbench-lab.XXXXXX")
# QEMU's monitor listens on an abstract UNIX socket: a name of at most 107 bytes that no folder's depth lengthens
# (a socket file's path is limited to 108 bytes) and that vanishes with QEMU
monitor=ptsbench-lab-monitor-${work##*.}
relay=""
cleanup() {
  if [ -n "$relay" ]; then kill "$relay" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "device lab: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work/out" "$work/initramfs"/{bin,dev,proc,sys,host,rw,newroot,modules}
[ -n "$results" ] || results=$work/out/results.jsonl
results=$(realpath -m "$results")

# sparse disk images: nothing is allocated until the guest writes
if [ "$variant" = debian13 ]; then
  truncate -s 128M "$work/ocp.img"
  truncate -s 128M "$work/fdp.img"
else
  truncate -s 256M "$work/nvme0.img"
  truncate -s 256M "$work/nvme1.img"
  truncate -s 256M "$work/ssd.img"
  truncate -s 256M "$work/hdd.img"
  truncate -s 256M "$work/sata.img"
  truncate -s 256M "$work/nvmehp.img"
  truncate -s 64M "$work/nvmepi.img"
  truncate -s 128M "$work/nvmezns.img"
  truncate -s 64M "$work/nvmens1.img"
  truncate -s 64M "$work/nvmens2.img"
  truncate -s 64M "$work/nvmecap0.img"
  truncate -s 64M "$work/nvmeio.img"
  # blkdebug rules for the io-error controller's image: a Write Zeroes command from the guest arms them (state 2: every
  # write fails with EIO, errno 5, which the NVMe device reports as a write fault), the next one disarms them (state 3:
  # blkdebug keeps an error rule active until another one fires, so state 3 has one for an offset past the image's end).
  # The one after arms them again (3 -> 2; every rule is matched against the state before the event), and so on.
  # Not a flush: with the volatile write cache off, QEMU follows every write with one.
  cat > "$work/blkdebug.conf" <<'EOF'
[set-state]
state = "1"
event = "pwritev_zero"
new_state = "2"

[set-state]
state = "2"
event = "pwritev_zero"
new_state = "3"

[set-state]
state = "3"
event = "pwritev_zero"
new_state = "2"

[inject-error]
state = "2"
event = "pwritev"
iotype = "write"
errno = "5"

[inject-error]
state = "3"
event = "pwritev"
iotype = "write"
sector = "1000000000"
errno = "5"
EOF
fi

# initramfs: static busybox and the modules that mount the shared root (each after its dependencies)
cp "$(command -v busybox)" "$work/initramfs/bin/busybox"
load_order=()
add_module() {  # $1: path relative to $moddir; its dependencies first, each once
  local dep
  for dep in $(grep "^$1:" "$moddir/modules.dep" | cut -d: -f2); do add_module "$dep"; done
  case " ${load_order[*]} " in *" $1 "*) ;; *) load_order+=("$1") ;; esac
}
for name in virtio_pci 9pnet_virtio 9p overlay; do
  path=$(grep -E "/$name\.ko(\.[a-z]+)?:" "$moddir/modules.dep" | cut -d: -f1 | head -1)
  [ -n "$path" ] || cannot "module $name is not in $moddir"
  add_module "$path"
done
for path in "${load_order[@]}"; do
  cp "$moddir/$path" "$work/initramfs/modules/"
  echo "/modules/$(basename "$path")" >> "$work/initramfs/modules/order"
done
cat > "$work/initramfs/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for module in $(cat /modules/order); do insmod "$module" || echo "init: insmod $module failed"; done
out=$(sed -n 's/.*lab\.out=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /host
mount -t tmpfs -o size=1500m tmpfs /rw && mkdir /rw/up /rw/work
mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/up,workdir=/rw/work /newroot
mount -t proc proc /newroot/proc; mount -t sysfs sys /newroot/sys; mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/shm; mount -t tmpfs tmpfs /newroot/dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L labout "/newroot$out"
chroot /newroot /bin/sh "$out/guest.sh"
echo "$?" > "/newroot$out/status"
sync; poweroff -f
EOF
chmod +x "$work/initramfs/init"
(cd "$work/initramfs" && find . | cpio -o -H newc --quiet | gzip -1 > "$work/initramfs.gz")

# what runs in the guest, chrooted into the shared root: the rest of the drivers, then the checks
guest_env=""
# the FTL variant: NVMeVirt's storage is guest memory the kernel leaves alone (memmap=SIZE$START: reserved); its
# dispatcher and I/O worker poll on the third vCPU, which the scheduler keeps for them (isolcpus)
ftl_memmap_start=0x80000000 ftl_memmap_size=33M
if [ "$variant" = debian13 ]; then
  modules="nvme" disks_seen="[ -e /dev/nvme1n1 ]" python=$venv/bin/python guest=$repo/tests/device_lab/device_lab_debian13.py
elif [ "$variant" = ftl ]; then
  # the checks load NVMeVirt themselves (fresh-out-of-box is rmmod + insmod): its module and the reservation below
  modules="nvme" disks_seen="true" python=$repo/.venv/bin/python guest=$repo/tests/device_lab/device_lab_ftl.py
  guest_env="export PTSBENCH_LAB_NVMEV=$nvmev"
  guest_env+=" PTSBENCH_LAB_NVMEV_ARGS='memmap_start=$ftl_memmap_start memmap_size=$ftl_memmap_size cpus=2,2'"
  [ -z "${lab_fio:-}" ] || guest_env+=" PTSBENCH_LAB_SPRANDOM=1 PTSBENCH_LAB_FIO=$lab_fio"
else
  modules="nvme virtio_scsi sd_mod sg ahci ext4 crc32c_generic" disks_seen="[ -e /dev/nvme5n1 ] && [ -e /dev/sdc ]"
  python=$repo/.venv/bin/python guest=$repo/tests/device_lab/device_lab_guest.py
fi
cat > "$work/out/guest.sh" <<EOF
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
$guest_env
modprobe -a $modules || echo "guest: modprobe failed"
for wait in 1 2 3 4 5 6 7 8 9 10; do $disks_seen && break; sleep 0.5; done
cd "$repo"
"$python" "$guest" --results "$work/out/results.jsonl" ${checks:+--checks "$checks"}
EOF

if [ "$variant" = debian13 ]; then
  # QEMU 10 runs inside the Debian 13 root, which it shares with the guest as its /, with the checkout, the work
  # folder and the guest kernel's modules bound into it at their paths
  cp "$kernel" "$work/vmlinuz"
  kernel=$work/vmlinuz
  qemu=(bash "$repo/scripts/in-root.sh" "$root" --bind "$repo" --bind "$work" --bind "$moddir" qemu-system-x86_64)
  # an NVMe controller with the OCP extended SMART log, and an FDP subsystem (one reclaim group, 4 reclaim unit
  # handles with reclaim units of 64 MiB, more than a check writes) with a controller and a namespace holding all 4
  disks=(-drive file="$work/ocp.img",if=none,id=ocp0,format=raw
         -device nvme,id=nvmeocp,serial=LABNVMEOCP,drive=ocp0,ocp=on
         -device nvme-subsys,id=fdpsubsys,nqn=ptsbench-lab-fdp,fdp=on,fdp.nruh=4,fdp.nrg=1,fdp.runs=64M
         -device nvme,id=nvmefdp,serial=LABNVMEFDP,subsys=fdpsubsys
         -drive file="$work/fdp.img",if=none,id=fdp0,format=raw
         -device nvme-ns,drive=fdp0,bus=nvmefdp,nsid=1,fdp.ruhs=0-3)
  what="an OCP NVMe controller and an FDP subsystem"
elif [ "$variant" = ftl ]; then
  qemu=(qemu-system-x86_64)
  disks=()
  what="no disks: NVMeVirt in $ftl_memmap_size of reserved guest memory"
else
  qemu=(qemu-system-x86_64)
  disks=(-drive file="$work/nvme0.img",if=none,id=nv0,format=raw
         -device nvme,id=nvme0,serial=LABNVME0,drive=nv0
         -drive file="$work/nvme1.img",if=none,id=nv1,format=raw
         -device nvme,id=nvme1,serial=LABNVME1
         -device nvme-ns,drive=nv1,bus=nvme1,nsid=1,logical_block_size=4096,physical_block_size=4096
         -device virtio-scsi-pci,id=scsi0
         -drive file="$work/ssd.img",if=none,id=ssd0,format=raw
         -device scsi-hd,drive=ssd0,bus=scsi0.0,product="LAB SSD",serial=LABSSD0,rotation_rate=1
         -drive file="$work/hdd.img",if=none,id=hdd0,format=raw
         -device scsi-hd,drive=hdd0,bus=scsi0.0,product="LAB HDD",serial=LABHDD0,rotation_rate=7200
         -device ahci,id=ahci
         -drive file="$work/sata.img",if=none,id=sata0,format=raw
         -device ide-hd,drive=sata0,bus=ahci.0,model="LAB SATA DISK WITH A 40 CHARACTER MODEL",serial=LABSATA0,ver=LABFW123
         -blockdev driver=file,filename="$work/nvmehp.img",node-name=nvhpfile
         -blockdev driver=raw,file=nvhpfile,node-name=nvhp
         -device nvme,id=nvmehp,serial=LABNVMEHP,drive=nvhp
         -drive file="$work/nvmepi.img",if=none,id=nvpi,format=raw
         -device nvme,id=nvmepi,serial=LABNVMEPI
         -device nvme-ns,drive=nvpi,bus=nvmepi,nsid=1,ms=8,pi=1
         -drive file="$work/nvmezns.img",if=none,id=nvzns,format=raw
         -device nvme-ns,drive=nvzns,bus=nvmepi,nsid=2,zoned=true,zoned.zone_size=64M,logical_block_size=4096,physical_block_size=4096
         -drive file="$work/nvmecap0.img",if=none,id=nvcap0,format=raw
         -device nvme-ns,drive=nvcap0,bus=nvmepi,nsid=3,ms=8,mset=1
         -drive file="$work/nvmens1.img",if=none,id=nvns1,format=raw
         -drive file="$work/nvmens2.img",if=none,id=nvns2,format=raw
         -device nvme,id=nvmens,serial=LABNVMENS
         -device nvme-ns,drive=nvns1,bus=nvmens,nsid=1
         -device nvme-ns,drive=nvns2,bus=nvmens,nsid=2
         -blockdev driver=file,filename="$work/nvmeio.img",node-name=nviofile
         -blockdev driver=blkdebug,image=nviofile,config="$work/blkdebug.conf",node-name=nviodebug
         -blockdev driver=raw,file=nviodebug,node-name=nvio
         -device nvme,id=nvmeio,serial=LABNVMEIO,drive=nvio
         -chardev socket,id=monitor,path="$monitor",server=on,wait=off,abstract=on -mon chardev=monitor,mode=readline)
  what="6 NVMe controllers, 2 SCSI disks and 1 SATA disk"
  # QEMU's monitor for the guest: a check asks for a command (device_del / device_add of the hot-plug controller) by
  # writing out/monitor/N.cmd; this relay sends it to QEMU and writes the monitor's answer to out/monitor/N.done
  mkdir -p "$work/out/monitor"
  "$repo/.venv/bin/python" - "$monitor" "$work/out/monitor" <<'PY' &
import pathlib, socket, sys, time

name, folder = sys.argv[1], pathlib.Path(sys.argv[2])
def ask(command: str) -> str:
    with socket.socket(socket.AF_UNIX) as monitor:
        monitor.connect("\0" + name)  # an abstract socket: a name, not a file
        monitor.settimeout(60)
        said = b""
        for send in (b"", command.encode() + b"\n"):
            monitor.sendall(send)
            while not said.endswith(b"(qemu) "):
                said += monitor.recv(4096) or b"(qemu) "
            answer, said = said, b""
        # HMP echoes the command with terminal escapes, then answers on the next lines, then its prompt again
        return answer.decode(errors="replace").replace("\r", "").partition("\n")[2].removesuffix("(qemu) ")
while True:
    for request in sorted(folder.glob("*.cmd")):
        try:
            answer = ask(request.read_text().strip())
        except OSError as error:
            answer = f"relay: {error}"
        request.with_suffix(".tmp").write_text(answer)
        request.with_suffix(".tmp").rename(request.with_suffix(".done"))
        request.unlink()
    time.sleep(0.2)
PY
  relay=$!
fi
# labs take turns with the FTL variant: the others may run together (each holds the turn shared), the FTL variant
# runs alone (it holds it exclusively): its third vCPU polls all the time, and its model's pace before garbage
# collection is the emulated CPU's, which another lab's QEMU would take
turn=${PTSBENCH_LAB_TURN:-/tmp/ptsbench-device-lab.turn}
exec 5>>"$turn"
if [ "$variant" = ftl ]; then
  flock -n -x 5 || { echo "device lab: waiting for the other device labs to finish (the FTL variant runs alone)" >&2
                     flock -x 5; }
else
  flock -n -s 5 || { echo "device lab: waiting for the FTL device lab to finish" >&2; flock -s 5; }
fi
echo "device lab: booting $kernel under QEMU (TCG) with $what" >&2
started=$(date +%s)
# the bound on the guest: several times its idle time (the main lab: 8 min 42 s on an idle 2-vCPU host; beside the
# host level, the Debian 13 platform and the other labs on 2 CPUs, CI saw it pass 20 min)
cpus=2 append="" lab_timeout_s=2400
if [ "$variant" = ftl ]; then
  cpus=3 lab_timeout_s=1800  # up to 25 PTS rounds, at any load
  [ -z "${lab_fio:-}" ] || lab_timeout_s=3600  # and the sprandom check's two IOPS tests
  append="memmap=$ftl_memmap_size\$$ftl_memmap_start isolcpus=2 nvme_core.io_timeout=600 nvme_core.admin_timeout=600"
fi
# no_timer_check: the kernel's check of the IO-APIC timer panics when a loaded host delays the emulated timer
# --foreground: QEMU stays in this script's process group, so stopping the group (tests/conftest.py) stops QEMU too
timeout --foreground "${LAB_TIMEOUT_S:-$lab_timeout_s}" "${qemu[@]}" \
  -accel tcg -cpu max -smp "$cpus" -m 3072 -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$kernel" -initrd "$work/initramfs.gz" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check lab.out=$work/out${append:+ $append}" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$work/out",mount_tag=labout,security_model=none \
  ${disks[@]+"${disks[@]}"} \
  </dev/null || echo "device lab: QEMU exited with status $? after $(( $(date +%s) - started )) s" >&2
kill "$relay" 2>/dev/null || true
wait "$relay" 2>/dev/null || true
relay=""
echo "device lab: guest ran $(( $(date +%s) - started )) s" >&2
[ "$results" = "$work/out/results.jsonl" ] || cp "$work/out/results.jsonl" "$results" 2>/dev/null || : > "$results"
"$repo/.venv/bin/python" "$guest" --summarize "$results" ${checks:+--checks "$checks"}
