#!/usr/bin/env python3
"""Finds declared but unused dependencies of the workspace's crates.

For every member of the workspace (the root Cargo.toml's `members`), each
dependency of `[dependencies]`, `[dev-dependencies]` and
`[build-dependencies]` (also under `[target.*]`) must be named in the code
of that crate: its `src/`, `tests/`, `examples/`, `benches/` and `build.rs`.
A dependency is named when its crate name (the key, or `package` for a
renamed one, with `-` read as `_`) appears as a path (`name::`), in a `use`
or in an `extern crate`, outside comments. The check is the one `cargo
machete` makes, without installing it; like it, a crate lists in
`[package.metadata.cargo-machete] ignored` the dependencies it needs only
for their features (the manifest says why).

Usage: scripts/unused_deps.py [WORKSPACE_DIR]
Exits 0 when every dependency is used, 1 naming the unused ones.
"""

import re
import sys
import tomllib
from pathlib import Path

SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")


def strip_comments(text):
    """The Rust source `text` without its comments; strings are kept (so a
    `//` inside a string is not taken for a comment)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 20]) and not (
            i and (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(text[i:end])
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 12]):
            # A char literal such as '"' must not open a string.
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:i + 12])
            out.append(m.group(0))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def declared(manifest):
    """(crate name as code spells it, key, section) of every dependency."""
    deps = []

    def add(table, where):
        for section in SECTIONS:
            for key, spec in table.get(section, {}).items():
                package = spec.get("package", key) if isinstance(spec, dict) else key
                deps.append((package.replace("-", "_"), key, f"{where}{section}"))

    add(manifest, "")
    for target, table in manifest.get("target", {}).items():
        add(table, f"target.{target}.")
    return deps


def sources(crate_dir):
    """The crate's Rust files, as one text without comments."""
    files = [crate_dir / "build.rs"]
    for sub in ("src", "tests", "examples", "benches"):
        files += sorted((crate_dir / sub).rglob("*.rs"))
    return "\n".join(strip_comments(f.read_text()) for f in files if f.is_file())


def used(name, code):
    word = re.escape(name)
    pattern = rf"(?<![\w:]){word}\s*::|\buse\s+{word}\b|\bextern\s+crate\s+{word}\b"
    return re.search(pattern, code) is not None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent)
    workspace = tomllib.loads((root / "Cargo.toml").read_text())
    members = workspace.get("workspace", {}).get("members", [])
    unused = []
    for member in members:
        crate_dir = root / member
        manifest = tomllib.loads((crate_dir / "Cargo.toml").read_text())
        code = sources(crate_dir)
        meta = manifest.get("package", {}).get("metadata", {})
        ignored = set(meta.get("cargo-machete", {}).get("ignored", []))
        for name, key, section in declared(manifest):
            if key not in ignored and not used(name, code):
                unused.append(f"{member}: {key} ({section})")
    if unused:
        print("unused dependencies (declared in Cargo.toml, named nowhere in the crate's code):")
        for u in unused:
            print(f"  {u}")
        return 1
    print(f"every dependency of {', '.join(members)} is used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
