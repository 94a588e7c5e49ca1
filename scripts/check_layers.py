#!/usr/bin/env python3
"""Check that the folders of sdk/src and host/ are layers.

    scripts/check_layers.py [--order FILE] [--root DIR] BUILD

The order is written in one place, scripts/layers.txt:

    layers GROUP OBJDIR FOLDER...   folders of GROUP, lowest first; their
                                    objects are BUILD/obj/OBJDIR/FOLDER/*.o
    public GROUP FOLDER...          folders built on the public API only

A file of a folder may call, and include, only its own folder and the
folders before it on its line.  The checks:

  calls     each object's undefined symbols (nm) that another object of the
            group defines must be defined in the same folder or a lower one;
            an object of a public folder may call only exported symbols
            (PH_API: default visibility, readelf) of the other folders;
  includes  an #include "OTHER/..." naming a folder of the group must name
            the same folder or a lower one; a file of a public folder may
            include only <...> and "passhost/..." headers, and headers of
            its own folder.

A folder on disk (or in the build tree) that its line does not place, or a
placed folder that is not there, is an error too.  Since the order is total,
no upward edge means no cycle between folders.  Prints one line per
offending edge, naming the file and the symbol or include, and exits 1;
exits 0 with a summary line per group when the layers hold.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+(["<])([^">]+)[">]', re.M)


def read_order(path):
    """{group: (objdir, [folders])} and {group: set(public folders)}."""
    layers, public = {}, {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            where = f"{path}:{lineno}"
            if words[0] == 'layers' and len(words) >= 4:
                folders = words[3:]
                if len(set(folders)) != len(folders):
                    sys.exit(f"{where}: a folder is listed twice")
                layers[words[1]] = (words[2], folders)
            elif words[0] == 'public' and len(words) >= 3:
                public.setdefault(words[1], set()).update(words[2:])
            else:
                sys.exit(f"{where}: expected `layers GROUP OBJDIR FOLDER...` or "
                         f"`public GROUP FOLDER...`")
    for group, folders in public.items():
        if group not in layers or not folders <= set(layers[group][1]):
            sys.exit(f"{path}: `public {group}` names a folder no `layers` line places")
    return layers, public


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def nm_all(paths, flag):
    """(object, symbol, type letter) for every symbol nm lists with flag."""
    rows = []
    if paths:
        for line in run(['nm', '-A', flag, *paths]).splitlines():
            path, _, rest = line.partition('.o:')
            parts = rest.split()
            if len(parts) >= 2:
                rows.append((path + '.o', parts[-1], parts[-2]))
    return rows


def exported(paths):
    """The symbols the objects define with default visibility (PH_API)."""
    out = set()
    if paths:
        for line in run(['readelf', '-sW', *paths]).splitlines():
            f = line.split()
            # Num: Value Size Type Bind Vis Ndx Name
            if len(f) == 8 and f[4] == 'GLOBAL' and f[5] == 'DEFAULT' and f[6] != 'UND':
                out.add(f[7])
    return out


def check_calls(group, objroot, srcroot, folders, public, problems):
    """Edges from the symbols of the objects; returns how many objects.  An
    object whose source is gone (left over from a move) is not looked at."""
    if not os.path.isdir(objroot):
        problems.append(f"{group}: no objects under {objroot} (build first)")
        return 0
    rank = {f: i for i, f in enumerate(folders)}
    where = {}  # object path -> (folder, source)
    for folder in sorted(os.listdir(objroot)):
        d = os.path.join(objroot, folder)
        if not os.path.isdir(d):
            continue
        objs = [o for o in sorted(os.listdir(d))
                if o.endswith('.o') and os.path.exists(os.path.join(srcroot, folder, o[:-2] + '.c'))]
        if objs and folder not in rank:
            problems.append(f"{group}/{folder}: objects of a folder scripts/layers.txt does not place")
            continue
        for o in objs:
            where[os.path.join(d, o)] = (folder, f"{group}/{folder}/{o[:-2]}.c")
    defined = {}  # symbol -> (folder, source)
    for path, sym, kind in nm_all(list(where), '--defined-only'):
        if kind in 'TDBRVWGS':
            defined[sym] = where[path]
    api = exported(list(where)) if public else set()
    for path, sym, _ in nm_all(list(where), '--undefined-only'):
        if sym not in defined:
            continue
        folder, src = where[path]
        to_folder, to_src = defined[sym]
        if rank[to_folder] > rank[folder]:
            problems.append(f"{src} calls {sym} of {to_src}: {folder} is below {to_folder}")
        elif folder in public and to_folder != folder and sym not in api:
            problems.append(f"{src} calls {sym} of {to_src}, which is internal: "
                            f"{folder} is built on the public API only")
    return len(where)


def check_includes(group, root, folders, public, problems):
    """Edges from the #include lines; returns how many files."""
    srcroot = os.path.join(root, group)
    rank = {f: i for i, f in enumerate(folders)}
    files = 0
    for folder in sorted(os.listdir(srcroot)):
        d = os.path.join(srcroot, folder)
        if not os.path.isdir(d):
            continue
        srcs = sorted(os.path.join(dp, n) for dp, _, names in os.walk(d)
                      for n in names if n.endswith(('.c', '.h')))
        if srcs and folder not in rank:
            problems.append(f"{group}/{folder}: sources in a folder scripts/layers.txt does not place")
            continue
        for path in srcs:
            files += 1
            rel = os.path.relpath(path, root)
            with open(path, errors='replace') as f:
                text = f.read()
            for quote, inc in INCLUDE.findall(text):
                first = inc.split('/', 1)[0]
                if '/' in inc and first in rank and rank[first] > rank[folder]:
                    problems.append(f"{rel} includes \"{inc}\": {folder} is below {first}")
                elif (folder in public and quote == '"' and first != 'passhost' and
                      not os.path.exists(os.path.join(os.path.dirname(path), inc))):
                    problems.append(f"{rel} includes \"{inc}\": {folder} is built on the "
                                    f"public API only (passhost/*.h)")
    for folder in folders:
        if not os.path.isdir(os.path.join(srcroot, folder)):
            problems.append(f"{group}/{folder}: placed in scripts/layers.txt but not there")
    return files


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--order', default=os.path.join(here, 'layers.txt'))
    ap.add_argument('--root', default=os.path.dirname(here), help='the source tree')
    ap.add_argument('build', help='the build tree (BUILD/obj holds the objects)')
    args = ap.parse_args()
    layers, public = read_order(args.order)
    problems, summary = [], []
    for group, (objdir, folders) in layers.items():
        pub = public.get(group, set())
        n_obj = check_calls(group, os.path.join(args.build, 'obj', objdir),
                            os.path.join(args.root, group), folders, pub, problems)
        n_src = check_includes(group, args.root, folders, pub, problems)
        note = f"; public API only: {', '.join(sorted(pub))}" if pub else ""
        summary.append(f"{group}: {' < '.join(folders)} ({n_obj} objects, {n_src} sources{note})")
    if problems:
        for p in problems:
            print(f"layers: {p}")
        print(f"layers: {len(problems)} edge(s) against {os.path.relpath(args.order)}")
        return 1
    for s in summary:
        print(f"layers: {s}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
