# shellcheck shell=bash
# Shared set-up for scripts/test and scripts/demo: source this file, then call
# the ddtree_ensure_* functions (or ddtree_setup for all of them).
#
# Every function is idempotent and skips finished work, so a second run costs
# seconds: apt packages are only installed when missing, the virtualenv is only
# re-installed when requirements-dev.txt (or the Python) changes, the test host
# image is only built when its recipe changes.
#
# After sourcing, these are set:
#   DDTREE_ROOT          the repository (= collection) root
# After the functions run, these are exported:
#   ddtree_ensure_venv               VIRTUAL_ENV, PATH (venv first)
#   ddtree_ensure_image              DDTREE_TEST_IMAGE (the recipe's exact tag)
#   ddtree_ensure_minimal_image      DDTREE_TEST_IMAGE_MINIMAL (the minimal host flavour)
#   ddtree_ensure_trixie_image       DDTREE_TEST_IMAGE_TRIXIE (the GPU host on Debian 13)
#   ddtree_ensure_dev_collections    DDTREE_COLLECTIONS_PATH (unless already set)
#   ddtree_ensure_sglang_wheel       DDTREE_SGLANG_WHEEL (the pinned release's wheel)
# and ddtree_ensure_sim_cli_table writes .cache/sglang_sim/sglang_cli.json.
#
# Knobs (environment):
#   DDTREE_PYTHON       interpreter for the virtualenv (default: python3 on PATH)
#   DDTREE_VENV         virtualenv location (default: $DDTREE_ROOT/.venv)

# Guard against double sourcing (scripts/demo may source it through helpers).
if [[ -n "${__DDTREE_SETUP_SOURCED:-}" ]]; then
    return 0
fi
__DDTREE_SETUP_SOURCED=1

DDTREE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DDTREE_VENV="${DDTREE_VENV:-$DDTREE_ROOT/.venv}"
# Packages the tool chain needs on the controller. crun cannot run containers on
# these hosts (cgroups in hybrid mode), so runc is the runtime; python3-venv is
# what Debian's python3 needs for `-m venv`. prometheus (with promtool) and
# prometheus-alertmanager: the unit tests and the eda stage run the real servers on
# loopback (tests/unit/prometheus_harness.py), their binaries directly, never the services.
DDTREE_APT_PACKAGES=(podman runc debootstrap shellcheck python3-venv git ca-certificates patch
    prometheus prometheus-alertmanager)

ddtree_log() {
    printf '[ddtree] %s\n' "$*" >&2
}

ddtree_die() {
    printf '[ddtree] ERROR: %s\n' "$*" >&2
    exit 1
}

# ddtree_ensure_apt_packages [PKG...]: install the missing ones (default list above).
ddtree_ensure_apt_packages() {
    local pkgs=("$@") missing=() pkg
    if ((${#pkgs[@]} == 0)); then
        pkgs=("${DDTREE_APT_PACKAGES[@]}")
    fi
    for pkg in "${pkgs[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    if ((EUID != 0)); then
        ddtree_die "missing Debian packages: ${missing[*]}; install them as root: apt-get install ${missing[*]}"
    fi
    ddtree_log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ddtree_ensure_venv: the virtualenv from requirements-dev.txt, re-installed only
# when that file or the interpreter changes; activates it for the caller.
ddtree_ensure_venv() {
    local python="${DDTREE_PYTHON:-python3}" req="$DDTREE_ROOT/requirements-dev.txt"
    local stamp="$DDTREE_VENV/.ddtree-requirements.sha256" want have=""
    command -v "$python" >/dev/null || ddtree_die "no $python on PATH; install python3 (3.11 or newer) or set DDTREE_PYTHON"
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || ddtree_die "$python is $("$python" -V 2>&1); ansible-core 2.19 needs Python 3.11 or newer (set DDTREE_PYTHON)"
    # A venv whose interpreter disappeared (Python upgraded or moved) is rebuilt.
    if [[ -d "$DDTREE_VENV" ]] && ! "$DDTREE_VENV/bin/python" -c '' 2>/dev/null; then
        ddtree_log "virtualenv $DDTREE_VENV is broken; recreating it"
        rm -rf "$DDTREE_VENV"
    fi
    if [[ ! -x "$DDTREE_VENV/bin/python" ]]; then
        ddtree_log "creating virtualenv $DDTREE_VENV"
        "$python" -m venv "$DDTREE_VENV"
    fi
    want="$( { sha256sum <"$req"; "$DDTREE_VENV/bin/python" -V; } | sha256sum | cut -d' ' -f1)"
    [[ -f "$stamp" ]] && have="$(cat "$stamp")"
    if [[ "$want" != "$have" ]]; then
        ddtree_log "installing $req into $DDTREE_VENV (a few minutes on a fresh machine)"
        "$DDTREE_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
        echo "$want" >"$stamp"
    fi
    export VIRTUAL_ENV="$DDTREE_VENV"
    case ":$PATH:" in
        *":$DDTREE_VENV/bin:"*) ;;
        *) export PATH="$DDTREE_VENV/bin:$PATH" ;;
    esac
}

# ddtree_ensure_image: the simulated GPU host image (built only when its recipe changes).
ddtree_ensure_image() {
    DDTREE_TEST_IMAGE="$("$DDTREE_ROOT/scripts/build-test-image.sh" gpu)"
    export DDTREE_TEST_IMAGE
}

# ddtree_ensure_minimal_image: the minimal host image, no python3-requests and no sudo
# (scenario deploy_minimal_host; built only when its recipe changes).
ddtree_ensure_minimal_image() {
    DDTREE_TEST_IMAGE_MINIMAL="$("$DDTREE_ROOT/scripts/build-test-image.sh" minimal)"
    export DDTREE_TEST_IMAGE_MINIMAL
}

# ddtree_ensure_trixie_image: the simulated GPU host image on Debian 13 (trixie), the same
# recipe on the newer release (scenarios sglang_install, deploy_success, deploy_minimal_host;
# built only when its recipe changes).
ddtree_ensure_trixie_image() {
    DDTREE_TEST_IMAGE_TRIXIE="$("$DDTREE_ROOT/scripts/build-test-image.sh" gpu trixie)"
    export DDTREE_TEST_IMAGE_TRIXIE
}

# ddtree_matrix_versions: the ansible-core pins of the matrix, one "ansible-core==X.Y.Z" a line
# (requirements-matrix.txt, comments and blank lines left out).
ddtree_matrix_versions() {
    sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$DDTREE_ROOT/requirements-matrix.txt"
}

# ddtree_matrix_venv PIN: the virtualenv directory of one matrix line ("ansible-core==2.16.19").
ddtree_matrix_venv() {
    printf '%s/.cache/matrix/%s\n' "$DDTREE_ROOT" "${1//==/-}"
}

# ddtree_ensure_matrix_venvs: one virtualenv per line of requirements-matrix.txt, from that
# ansible-core pin plus requirements-dev.txt's pins of the unit tests' own packages (pytest,
# pytest-xdist, requests, jinja2, prometheus-client), each re-installed only when its pins or
# the interpreter change (like .venv).
# One at a time: pip is CPU-bound on 2 cores. Needs ddtree_ensure_venv first.
ddtree_ensure_matrix_venvs() {
    local pin venv stamp want have test_pins=()
    mapfile -t test_pins < <(grep -E '^(pytest|pytest-xdist|requests|jinja2|prometheus-client)==' "$DDTREE_ROOT/requirements-dev.txt")
    ((${#test_pins[@]} == 5)) || ddtree_die "requirements-dev.txt must pin pytest, pytest-xdist, requests, jinja2 and prometheus-client (==) for the matrix"
    while IFS= read -r pin; do
        venv="$(ddtree_matrix_venv "$pin")"
        stamp="$venv/.ddtree-requirements.sha256"
        if [[ -d "$venv" ]] && ! "$venv/bin/python" -c '' 2>/dev/null; then
            rm -rf "$venv"
        fi
        [[ -x "$venv/bin/python" ]] || "$DDTREE_VENV/bin/python" -m venv "$venv"
        want="$(printf '%s\n' "$pin" "${test_pins[@]}" "$("$venv/bin/python" -V)" | sha256sum | cut -d' ' -f1)"
        have=""
        [[ -f "$stamp" ]] && have="$(cat "$stamp")"
        if [[ "$want" != "$have" ]]; then
            ddtree_log "installing $pin ${test_pins[*]} into ${venv#"$DDTREE_ROOT"/}"
            "$venv/bin/python" -m pip install -q --disable-pip-version-check "$pin" "${test_pins[@]}" \
                || ddtree_die "could not install $pin into $venv"
            echo "$want" >"$stamp"
        fi
        ddtree_ensure_sanity_bootstrap "$venv/bin/python"
    done < <(ddtree_matrix_versions)
}

# ddtree_ensure_dev_collections: make the work tree resolvable as ddtree.sglang
# through a symlink tree (.cache/collections/ansible_collections/ddtree/sglang),
# the same one tests/unit/conftest.py uses. Exports DDTREE_COLLECTIONS_PATH for
# the molecule base config unless the caller already points it elsewhere (for
# example at an installed tarball).
ddtree_ensure_dev_collections() {
    local base="$DDTREE_ROOT/.cache/collections" link
    link="$base/ansible_collections/ddtree/sglang"
    if [[ ! -e "$link" ]]; then
        mkdir -p "$(dirname "$link")"
        ln -sfn "$DDTREE_ROOT" "$link"
    fi
    export DDTREE_COLLECTIONS_PATH="${DDTREE_COLLECTIONS_PATH:-$base}"
}

# ddtree_ensure_sglang_wheel: the wheel of the SGLang release the collection pins
# (sglang_install_version in roles/sglang_install/defaults/main.yml) and those listed in
# tests/sglang-wheels.txt (the DDTree pull request's base), each downloaded once from PyPI with
# its own client (no dependencies: only their files are read, never installed) into
# .cache/sglang-wheel/. The tests read the releases' command line options from them
# (plugins/module_utils/_sglang_flags.py). Exports DDTREE_SGLANG_WHEEL, the pinned one.
ddtree_ensure_sglang_wheel() {
    local dir="$DDTREE_ROOT/.cache/sglang-wheel" pinned version wheel
    pinned="$(sed -n 's/^sglang_install_version: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' \
        "$DDTREE_ROOT/roles/sglang_install/defaults/main.yml")"
    [[ -n "$pinned" ]] || ddtree_die "no sglang_install_version in roles/sglang_install/defaults/main.yml"
    mkdir -p "$dir"
    for version in "$pinned" $(sed -e 's/#.*//' "$DDTREE_ROOT/tests/sglang-wheels.txt"); do
        wheel="$(find "$dir" -maxdepth 1 -name "sglang-$version-*.whl" -type f | sort | head -n 1)"
        if [[ -z "$wheel" ]]; then
            ddtree_log "downloading the sglang $version wheel from PyPI (no dependencies) into ${dir#"$DDTREE_ROOT"/}"
            "$DDTREE_VENV/bin/python" -m pip download -q --disable-pip-version-check \
                --no-deps --only-binary=:all: -d "$dir" "sglang==$version" \
                || ddtree_die "could not download sglang==$version from PyPI; the flag checks read its wheel"
            wheel="$(find "$dir" -maxdepth 1 -name "sglang-$version-*.whl" -type f | sort | head -n 1)"
            [[ -n "$wheel" ]] || ddtree_die "pip download left no sglang-$version wheel in $dir"
        fi
        [[ "$version" != "$pinned" ]] || export DDTREE_SGLANG_WHEEL="$wheel"
    done
}

# ddtree_venv_collections_dir: where the `ansible` package keeps its bundled
# collections (the offline source of containers.podman, ansible.posix, ...).
ddtree_venv_collections_dir() {
    "$DDTREE_VENV/bin/python" - <<'EOF'
import pathlib

import ansible_collections.ansible.posix as posix

print(pathlib.Path(posix.__path__[0]).parents[1])
EOF
}

# ddtree_ensure_sanity_bootstrap [PYTHON]: ansible-test --venv bootstraps pip with a
# get-pip script from a host these machines cannot reach; put a stand-in in
# its cache that installs the same pip version from a wheel fetched from PyPI.
# PYTHON (default: the .venv's) is the interpreter whose ansible-test says which pip
# version it wants: each ansible-core of the matrix pins its own.
ddtree_ensure_sanity_bootstrap() {
    local cache="$HOME/.ansible/test/cache" version script wheel python="${1:-$DDTREE_VENV/bin/python}"
    # The pip version ansible-test pins for this Python.
    version="$("$python" -c '
import sys, types
from ansible_test._internal.python_requirements import get_venv_packages
python = types.SimpleNamespace(version="%d.%d" % sys.version_info[:2])
print(get_venv_packages(python)["pip"])')"
    script="$cache/get_pip_${version//./_}.py"
    wheel="$cache/pip-${version}-py3-none-any.whl"
    mkdir -p "$cache"
    if [[ ! -f "$wheel" ]]; then
        ddtree_log "fetching pip $version wheel for ansible-test's pip bootstrap"
        "$DDTREE_VENV/bin/python" -m pip download -q --disable-pip-version-check \
            --no-deps --only-binary=:all: -d "$cache" "pip==$version"
    fi
    cat >"$script.new" <<EOF
# Stand-in for get-pip.py $version written by scripts/lib/setup.sh: the host
# ansible-test downloads get-pip.py from is not reachable from these machines.
# Runs pip from its wheel (pip supports running from a wheel) to install pip
# into the virtualenv ansible-test is bootstrapping.
import sys

WHEEL = "$wheel"
sys.path.insert(0, WHEEL)
from pip._internal.cli.main import main  # noqa: E402

# get-pip.py's own options; pip does not know them.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(main(["install", "--find-links", "$cache", "--upgrade", *args]))
EOF
    if cmp -s "$script.new" "$script"; then
        rm -f "$script.new"
    else
        mv "$script.new" "$script"
    fi
}

# ddtree_setup: everything above, in order.
# ddtree_ensure_sim_cli_table: the simulator's argument table,
# .cache/sglang_sim/sglang_cli.json, read from the pinned SGLang wheel
# (ddtree_ensure_sglang_wheel) by plugins/module_utils/_sglang_flags.py (its flags) and
# _sglang_adaptive.py (its adaptive speculation rules). Regenerated only
# when the wheel or the reader changes. The simulator (tests/sglang_sim/) parses its command
# line with it, and extensions/molecule/shared/prepare_gpu_host.yml copies it to the test hosts.
ddtree_ensure_sim_cli_table() {
    local out="$DDTREE_ROOT/.cache/sglang_sim/sglang_cli.json" stamp want have=""
    stamp="$out.sha256"
    [[ -n "${DDTREE_SGLANG_WHEEL:-}" ]] || ddtree_ensure_sglang_wheel
    want="$(cat "$DDTREE_SGLANG_WHEEL" "$DDTREE_ROOT/plugins/module_utils/_sglang_flags.py" \
        "$DDTREE_ROOT/plugins/module_utils/_sglang_adaptive.py" "$DDTREE_ROOT/scripts/lib/sim_cli_table.py" \
        | sha256sum | cut -d' ' -f1)"
    [[ -f "$stamp" && -f "$out" ]] && have="$(cat "$stamp")"
    if [[ "$want" != "$have" ]]; then
        "$DDTREE_VENV/bin/python" "$DDTREE_ROOT/scripts/lib/sim_cli_table.py" "$DDTREE_SGLANG_WHEEL" "$out" >&2 \
            || ddtree_die "could not read the argument table of $DDTREE_SGLANG_WHEEL"
        echo "$want" >"$stamp"
    fi
}

ddtree_setup() {
    ddtree_ensure_apt_packages "${DDTREE_APT_PACKAGES[@]}"
    ddtree_ensure_venv
    ddtree_ensure_sglang_wheel
    ddtree_ensure_sim_cli_table
    ddtree_ensure_image
    ddtree_ensure_dev_collections
}
