#!/usr/bin/env python3
"""snapshot.py DIR: print one line per entry under DIR (lstat fields, atime included, and a
sha256 of regular files read with O_NOATIME), sorted. --reset-atimes DIR: set every atime to
2001-01-01 first (directories last, so that listing them does not undo it)."""
import hashlib, os, stat, sys

OLD = 978307200  # 2001-01-01

def walk(root):
    out = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            out.append(os.path.join(d, n))
    out.append(root)
    return sorted(out)

def digest(p):
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOATIME", 0))
    except OSError:
        return "-"
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        for b in iter(lambda: f.read(1 << 16), b""):
            h.update(b)
    return h.hexdigest()

def main():
    if sys.argv[1] == "--reset-atimes":
        paths = walk(sys.argv[2])
        # deepest first, directories after their contents
        for p in sorted(paths, key=lambda p: -p.count("/")):
            st = os.lstat(p)
            os.utime(p, ns=(OLD * 10**9, st.st_mtime_ns), follow_symlinks=False)
        return
    root = sys.argv[1]
    listfile = os.path.join(os.path.dirname(root), ".paths-" + os.path.basename(root))
    # gather the path list once and keep it, so later snapshots lstat without listing
    if not os.path.exists(listfile):
        with open(listfile, "w") as f:
            f.write("\n".join(walk(root)))
    paths = open(listfile).read().split("\n")
    for p in paths:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            print(f"{os.path.relpath(p, root)} MISSING")
            continue
        h = digest(p) if stat.S_ISREG(st.st_mode) else ""
        print(f"{os.path.relpath(p, root)} {stat.filemode(st.st_mode)} {st.st_size} {st.st_ino} "
              f"m={st.st_mtime_ns} a={st.st_atime_ns} {h}")

main()
