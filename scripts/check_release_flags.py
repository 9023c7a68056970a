"""Check every unit the class and profile tables render against an SGLang release's own flags.

    python scripts/check_release_flags.py RELEASE [RELEASE_FOR_DDTREE]

RELEASE is a wheel (pip download --no-deps sglang==X), an installed release venv, its
site-packages or its sglang package directory. Every class x profile x variant unit (6 x 4 x
{none, adaptive, small, nograph, balanced} = 120) is merged by the sglang_server_options filter for that
release's version (roles/sglang/vars/option_names.yml picks the option names), rendered by
sglang_args and parsed by the release's parser (plugins/module_utils/_sglang_flags.py reads it
from the release's files, without importing SGLang). The ddtree profile's units are checked
against RELEASE_FOR_DDTREE when given (a DDTree build: #29907's branch, or the release with
#29907's patch, as ddtree.sglang.sglang_install installs it); without it, against RELEASE with
#29907's speculative_ddtree_budget field added (tests/sglang_sim/stand_in_release.py, what the
test hosts run). Prints one line per refused unit and a summary; exit 1 when any is refused.
Needs ansible-core and PyYAML (the repository's .venv); run it from the repository.
"""

import os
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
VARS = REPO / "roles" / "sglang" / "vars"
# What the role adds (roles/sglang/tasks/preflight.yml __sglang_base_options), on a 2-GPU host.
BASE = {"model_path": "/models/Qwen3.6-27B", "host": "0.0.0.0", "port": 30000, "tp_size": 2}
DRAFT = "/models/Qwen3.6-27B-DFlash"


def _collection():
    """Import the collection from this checkout (the symlink tree the tests use)."""
    root = REPO / ".cache" / "collections"
    link = root / "ansible_collections" / "ddtree" / "sglang"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(REPO, target_is_directory=True)
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(REPO / "tests" / "sglang_sim"))


def tables():
    classes = yaml.safe_load((VARS / "gpu_classes.yml").read_text())["__sglang_gpu_classes"]
    profiles_file = yaml.safe_load((VARS / "profiles.yml").read_text())
    names = yaml.safe_load((VARS / "option_names.yml").read_text())["__sglang_option_names"]
    return classes, profiles_file["__sglang_profiles"], profiles_file["__sglang_profile_variants"], names


def units():
    """Every (class, profile, variant or None) the tables define."""
    classes, profiles, variants = tables()[:3]
    return [(c, p, v) for c in sorted(classes) for p in sorted(profiles) for v in [None, *sorted(variants)]]


def render(class_id, profile, variant, version, option_names=None, variant_list=None):
    """The argv of one unit, with the option names of the given release version (``variant_list``: several
    variants, in order, instead of ``variant``)."""
    from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import sglang_args
    from ansible_collections.ddtree.sglang.plugins.filter.sglang_server_options import sglang_server_options

    classes, profiles, variants, names = tables()
    options = sglang_server_options(
        profile,
        gpu_class=class_id,
        gpu_classes=classes,
        profiles=profiles,
        variant_table=variants,
        variants=list(variant_list) if variant_list is not None else [variant] if variant else [],
        draft_model_path=DRAFT,
        base=BASE,
        option_names=names if option_names is None else option_names,
        release_version=version,
    )
    return sglang_args(options, "argv")


def read_release(path, ddtree=False):
    """The option table of a wheel or an installed release (with #29907's field added for a wheel if ddtree)."""
    from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags
    from ansible_collections.ddtree.sglang.plugins.module_utils._sglang_source import find_package_dir
    from stand_in_release import release_files

    if zipfile.is_zipfile(path):
        with tempfile.TemporaryDirectory(prefix="sglang-release-") as tmp:
            for name, data in release_files(path, everything=True, ddtree=ddtree).items():
                target = Path(tmp) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return _sglang_flags.read_cli_options(os.path.join(tmp, "sglang"))
    return _sglang_flags.read_cli_options(find_package_dir(path))


def main(argv):
    if len(argv) not in (1, 2):
        sys.stderr.write(__doc__)
        return 2
    _collection()
    from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags

    release = read_release(argv[0])
    ddtree = read_release(argv[1]) if len(argv) == 2 else read_release(argv[0], ddtree=True)
    version = release["sglang_version"]
    refused = 0
    for class_id, profile, variant in units():
        table = ddtree if profile == "ddtree" else release
        problems = _sglang_flags.check_argv(table, render(class_id, profile, variant, table["sglang_version"]))
        for problem in problems:
            refused += 1
            print(f"{class_id} x {profile} x {variant or '-'}: {problem['message']} (closest: {problem['closest']})")
    count = len(units())
    print(
        f"SGLang {version} ({argv[0]}, parser {release['parser_source']}, {len(release['options'])} options): "
        f"{count} units checked, {refused} refused argument(s)"
    )
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
