#!/usr/bin/env python3
"""Writes the package scripts/snippets.sh builds: every ```swift block of README.md, docs/**/*.md and the DocC
catalogs' articles (Sources/*/*.docc/**/*.md), as a user would use it (issue 27 item 18).

The block that is a manifest (it starts with `// swift-tools-version`) is the package's Package.swift as written; its
`.package(path: "../cropzoom")` finds this checkout through a link named cropzoom beside the package. Every other
block is the main.swift of an executable target of its own, appended to that manifest, compiled with warnings as
errors. Prints one line per block: its target, file and line.
"""
import os
import re
import sys

root, work = sys.argv[1], sys.argv[2]
docs = ["README.md"]
for folder, _, files in sorted(os.walk(os.path.join(root, "docs"))):
    docs += [os.path.relpath(os.path.join(folder, f), root) for f in sorted(files) if f.endswith(".md")]
# The DocC catalogs' articles and landing pages (Sources/TARGET/TARGET.docc/*.md), which `swift package
# generate-documentation` renders.
for folder, _, files in sorted(os.walk(os.path.join(root, "Sources"))):
    if any(part.endswith(".docc") for part in os.path.relpath(folder, root).split(os.sep)):
        docs += [os.path.relpath(os.path.join(folder, f), root) for f in sorted(files) if f.endswith(".md")]

blocks = []  # (file, line, text)
for doc in docs:
    lines = open(os.path.join(root, doc), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```swift":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            blocks.append((doc, start + 1, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1

manifests = [b for b in blocks if b[2].lstrip().startswith("// swift-tools-version")]
code = [b for b in blocks if b not in manifests]
if len(manifests) != 1:
    sys.exit(f"snippets: expected one manifest block (// swift-tools-version) in {docs}, found {len(manifests)}")
manifest = manifests[0][2]
m = re.search(r'\.executableTarget\(\s*name:\s*"([^"]+)"', manifest)
if not m or not code:
    sys.exit("snippets: the manifest block declares no executable target, or there is no code block")
app = m.group(1)

package = os.path.join(work, "app")
os.makedirs(package, exist_ok=True)
link = os.path.join(work, "cropzoom")
if os.path.islink(link):
    os.unlink(link)
os.symlink(root, link)
# (Not "Snippets/": SwiftPM makes a snippet target of every file under a package's Snippets folder.)
for entry in ("Sources", "Snippets", "DocSnippets"):
    path = os.path.join(package, entry)
    if os.path.isdir(path):
        for folder, dirs, files in os.walk(path, topdown=False):
            for f in files:
                os.unlink(os.path.join(folder, f))
            for d in dirs:
                os.rmdir(os.path.join(folder, d))
        os.rmdir(path)

strict = 'swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]'
extra = ["", "// Added by scripts/snippets.py: one target per code block of the docs, warnings as errors."]
for n, (doc, line, text) in enumerate(code):
    name = f"{app}" if n == 0 else re.sub(r"[^A-Za-z0-9]", "_", f"snippet_{doc}_{line}")
    folder = os.path.join(package, "Sources", app) if n == 0 else os.path.join(package, "DocSnippets", name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "main.swift"), "w", encoding="utf-8") as f:
        f.write(text)
    if n == 0:
        extra.append(f'package.targets.first(where: {{ $0.name == "{app}" }})?.swiftSettings = [.unsafeFlags(["-warnings-as-errors"])]')
    else:
        extra.append(
            f'package.targets.append(.executableTarget(name: "{name}", dependencies: '
            f'[.product(name: "CropZoomKit", package: "cropzoom")], path: "DocSnippets/{name}", {strict}))')
    print(f"{name}: {doc}:{line}")
print(f"{app} (manifest): {manifests[0][0]}:{manifests[0][1]}")
with open(os.path.join(package, "Package.swift"), "w", encoding="utf-8") as f:
    f.write(manifest + "\n".join(extra) + "\n")
