#!/usr/bin/env bash
# Build a simulated host image: Debian booting systemd as PID 1.
#
# Usage: scripts/build-test-image.sh [FLAVOUR] [SUITE]   (prints the image's exact tag)
#   gpu      (default) the simulated GPU host every scenario runs on, with a cache of
#            the code Ansible's module payloads compile (scripts/lib/ansiballz_code_cache.py)
#   minimal  what a minimal real host (a Proxmox container, issue 11) has: systemd,
#            python3 and dbus only; no python3-requests, no sudo, no pip
#   SUITE    bookworm (default, Debian 12) or trixie (Debian 13, issue 14: a platform
#            meta/main.yml lists is a platform a scenario deploys on)
#
# The image is rebuilt only when its recipe (this file and the flavour's package
# list) changes: the recipe's hash is the image tag, so a second run finds the tag
# and returns at once. Facts behind the recipe (shared/DESIGN.md): debootstrap
# minbase + systemd boots under podman with --runtime runc --systemd=always.
set -euo pipefail

FLAVOUR="${1:-gpu}"
case "$FLAVOUR" in
    gpu)
        IMAGE_REPO="${DDTREE_TEST_IMAGE_REPO:-localhost/ddtree-sglang-testhost}"
        # Packages the simulated GPU host needs: systemd as init, python3 for Ansible
        # and the SGLang simulator, python3-requests for llm_probe, python3-venv and
        # pip for sglang_install, patch for ansible.posix.patch, ca-certificates so
        # pip inside the host trusts the registry through the mounted CA bundle.
        PACKAGES="systemd,systemd-sysv,python3,dbus,iproute2,procps,python3-requests,python3-venv,python3-pip,patch,ca-certificates"
        ;;
    minimal)
        IMAGE_REPO="${DDTREE_TEST_IMAGE_REPO:-localhost/ddtree-sglang-testhost}-minimal"
        # The field report's kind of host: init, python3 for Ansible's modules and the
        # simulator, dbus for systemctl. Nothing the collection's own modules need
        # (python3-requests) and no sudo: preflight must install or name what is missing.
        # apt's sources come with minbase, so the host can install from Debian's mirror.
        PACKAGES="systemd,systemd-sysv,python3,dbus"
        ;;
    *)
        echo "unknown image flavour '$FLAVOUR'; flavours: gpu, minimal" >&2
        exit 2
        ;;
esac
SUITE="${2:-bookworm}"
case "$SUITE" in
    bookworm) ;;
    # Its own repository name, so a bookworm and a trixie image never share :latest.
    trixie) IMAGE_REPO="$IMAGE_REPO-trixie" ;;
    *)
        echo "unknown Debian suite '$SUITE'; suites: bookworm, trixie" >&2
        exit 2
        ;;
esac
MIRROR="${DDTREE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# The GPU host's compiled-code cache for Ansible's module payloads (see its header: the
# molecule stage is bound by the CPU the hosts spend compiling module_utils). Part of the
# recipe, so a change to it builds the image again.
CODE_CACHE="$(dirname "$0")/lib/ansiballz_code_cache.py"
[[ "$FLAVOUR" == gpu ]] || CODE_CACHE=/dev/null

recipe_hash="$( { cat "$0" "$CODE_CACHE"; echo "$PACKAGES $SUITE"; } | sha256sum | cut -c1-12)"
image="${IMAGE_REPO}:${recipe_hash}"

if podman image exists "$image"; then
    echo "$image"
    exit 0
fi

# One build at a time (scripts/test and scripts/demo may both ask on a fresh
# machine); whoever waited finds the image the other built.
exec 8>/var/tmp/ddtree-test-image.lock
flock 8
if podman image exists "$image"; then
    echo "$image"
    exit 0
fi

rootfs="$(mktemp -d /var/tmp/ddtree-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
echo "building $FLAVOUR $SUITE test host image $image (debootstrap, about a minute)" >&2
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >&2
# A clean machine-id lets systemd generate one per container at boot.
: > "$rootfs/etc/machine-id"
# Units that cannot work in a container and only add noise to the journal.
for unit in systemd-remount-fs.service getty.target console-getty.service; do
    ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
if [[ "$FLAVOUR" == gpu ]]; then
    install -m 0644 "$CODE_CACHE" "$rootfs/usr/lib/python3/dist-packages/ansiballz_code_cache.py"
    echo "import ansiballz_code_cache; ansiballz_code_cache.install()" >"$rootfs/usr/lib/python3/dist-packages/ddtree-ansiballz-code-cache.pth"
fi
# debootstrap leaves $MIRROR in the image's sources.list: the minimal host's
# preflight installs from it, so it must be a mirror the containers reach too.
tar -C "$rootfs" -c . | podman import --change 'CMD ["/sbin/init"]' - "$image" >&2
podman tag "$image" "${IMAGE_REPO}:latest"
echo "$image"
