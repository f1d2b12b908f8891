#!/usr/bin/env python3
"""The order in which cropzoom's executable names its shared libraries (Package.swift's `loadOrder`), derived and
checked; docs/design/repair.md, "Session 14".

Debian's FFmpeg 5.1 pulls in 135 shared libraries, bound at start (most are linked `-z now`), and each of the ~30,000
symbol bindings walks the process's global scope from the start until a library defines the symbol. That scope is the
executable, then the libraries it names (DT_NEEDED) in order, then theirs, breadth first: libcrypto, which binds 3,605
of its own symbols through the scope, was the 80th library in it. The executable may name any of them, in any
order; named first, the libraries that most bindings resolve to are found first.

Naming a library earlier must not change which library a symbol binds to: glibc's libm and libc both define `frexp`,
and C++ libraries each carry the same template instances (`std::vector<int>::_M_realloc_insert`), where the first in
the scope wins. So a library X goes after every library W that a binding resolves to while X defines the same
symbol (in the natural scope W came first, which is why it won).

  python3 Benchmarks/load_order.py derive RELEASE [DEBUG]  # prints Package.swift's list
  python3 Benchmarks/load_order.py check PLAIN ORDERED     # every binding of ORDERED resolves as PLAIN's

RELEASE and DEBUG: cropzoom's release and debug builds, with the list or without it (the bindings are the same:
that is what `check` and Tests/EndToEndTests/LoadOrderTests.swift check). PLAIN: a build without the list
(`loadOrder` empty); `check` also counts the instructions of the start (the loader's among them) under callgrind when
valgrind is there.
"""
import collections
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# A run that loads everything and stops at once (the file does not exist: exit 3 before any work).
ARGS = ["repair", "/nonexistent/broken.mov", "-o", "/nonexistent/fixed.mov"]
BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'(?: \[([^\]]+)\])?")


def bindings(binary, args=ARGS):
    """{(file, symbol, version): library} of every binding made at start (LD_BIND_NOW), by basename; the
    executable is "EXE"."""
    env = dict(os.environ, LD_BIND_NOW="1", LD_DEBUG="bindings")
    p = subprocess.run([binary] + args, env=env, capture_output=True, text=True)
    exe = os.path.realpath(binary)
    out = {}

    def name(path):
        return "EXE" if os.path.realpath(path) == exe or path == binary else os.path.basename(path)

    for line in p.stderr.splitlines():
        m = BINDING.search(line)
        if m:
            out[(name(m.group(1)), m.group(3), m.group(4) or "")] = name(m.group(2))
    return out


def scope(binary):
    """The main program's global scope, in order (paths)."""
    env = dict(os.environ, LD_DEBUG="scopes")
    p = subprocess.run([binary] + ARGS, env=env, capture_output=True, text=True)
    for line in p.stderr.splitlines():
        if "scope 0:" in line:
            return line.split("scope 0:", 1)[1].split()
    sys.exit("load_order: no scope in LD_DEBUG's output")


def definitions(path):
    """{(symbol, version)} a library defines (its dynamic symbol table); version "" for an unversioned one."""
    p = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    out = set()
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        sym = parts[2]
        if "@" in sym:
            name, _, version = sym.partition("@")
            out.add((name, version.lstrip("@")))
        else:
            out.add((sym, ""))
    return out


def derive(binaries):
    """Prints the list for Package.swift: every library the first binary (the release build) binds to, the most bound
    first, each after the libraries that won a symbol it defines too in any of the binaries (a debug build adds the
    Swift runtime's own libraries, which Package.swift links in debug builds only)."""
    count = collections.Counter()
    before = collections.defaultdict(set)
    for n, binary in enumerate(binaries):
        paths = scope(binary)
        found = bindings(binary)
        if n == 0:
            count.update(lib for lib in found.values() if lib != "EXE")
        by_symbol = collections.defaultdict(set)
        for path in paths[1:]:
            if os.path.exists(path):
                for name, version in definitions(path):
                    by_symbol[name].add((os.path.basename(path), version))
        # before[X]: the libraries that must precede X (they won a symbol X defines too).
        for (file, name, version), winner in found.items():
            for lib, v in by_symbol.get(name, ()):
                if lib != winner and winner != "EXE" and (v == version or not version or not v):
                    before[lib].add(winner)
    skip = {"ld-linux-x86-64.so.2", "linux-vdso.so.1", "EXE"}
    order = []

    def place(lib, seen=()):
        if lib in order or lib in skip:
            return
        if lib in seen:
            sys.exit(f"load_order: a cycle through {lib}")
        for w in sorted(before[lib], key=lambda w: (-count[w], w)):
            place(w, seen + (lib,))
        order.append(lib)

    for lib, _ in count.most_common():
        place(lib)
    print(f"// {len(order)} libraries, by bindings: " + ", ".join(f"{lib} {count[lib]}" for lib in order[:8]) + " …")
    line = "    "
    for lib in order:
        item = f'"{lib}", '
        if len(line) + len(item) > 121:
            print(line.rstrip())
            line = "    "
        line += item
    print(line.rstrip())


def loader_instructions(binary):
    """Instructions the dynamic loader executes starting `binary` (callgrind), or None without valgrind."""
    if not shutil.which("valgrind"):
        return None
    stripped = "/tmp/load-order-" + os.path.basename(binary) + str(os.getpid())
    subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
    out = stripped + ".callgrind"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", stripped] + ARGS,
                   capture_output=True)
    listing = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True).stdout
    total = loader = 0
    for line in listing.splitlines():
        m = re.match(r"\s*([\d,]+) ", line)
        if m and "PROGRAM TOTALS" in line:
            total = int(m.group(1).replace(",", ""))
        if m and re.search(r"rtld\.c:_dl_start\b", line):
            loader = max(loader, int(m.group(1).replace(",", "")))
    os.remove(stripped)
    os.remove(out)
    return total, loader


def check(plain, ordered):
    a, b = bindings(plain), bindings(ordered)
    changed = [(k, a[k], b.get(k)) for k in a if k[0] != "EXE" and a[k] != "EXE" and b.get(k) != a[k]]
    for (file, name, version), was, now in changed[:20]:
        print(f"changed: {file} {name} [{version}]: {was} -> {now}")
    print(f"{len(a)} bindings; {len(changed)} resolve elsewhere")
    counts = {label: loader_instructions(path) for label, path in (("plain", plain), ("ordered", ordered))}
    for label, c in counts.items():
        if c:
            print(f"{label}: {c[0] / 1e6:.1f} M instructions to the first error, the loader {c[1] / 1e6:.1f} M")
    return 1 if changed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "derive":
        derive(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
