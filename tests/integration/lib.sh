# lib.sh: shared helpers for the integration tests. Each test runs in a fresh temporary directory.
# Exit codes follow automake: 0 pass, 1 fail, 77 skip, 99 hard error.
set -eu

: "${QGC:?QGC must name the qgc binary}"
: "${QGC_TESTDATA:?QGC_TESTDATA must name tests/data}"

T=$(mktemp -d "${TMPDIR:-/tmp}/qgc-test.XXXXXX")
cleanup() { [ -n "${KEEP_T:-}" ] && return; chmod -R u+w "$T" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# skip WHY: the test cannot run here. WHY is printed as "SKIP: WHY", the line .ci/run's SKIP list
# (tests/skip-list.sh) reports; a missing judge is judge_missing's, not skip's.
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "PASS: $*"; }

# judges_must_run: must every judge run here (Qwen Code from npm, journald, nspawn)? Yes under
# CI=true, as root, where mount namespaces work (`unshare -m true`) and the npm registry answers
# (`npm view` within 20 seconds) or Qwen Code's cache is installed already (qwen-npm.sh's mark).
judges_must_run() {
        [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ] || return 1
        unshare -m true 2>/dev/null || return 1
        [ -f "${QGC_NPM_DIR:-/var/tmp/qgc-realqwen}/.qgc-verified" ] ||
                timeout 20 npm view @qwen-code/qwen-code version >/dev/null 2>&1
}

# judge_missing [--part] JUDGE WHY: the judge JUDGE (the real Qwen Code, journald, nspawn) cannot
# run here because WHY. Where every judge must run (judges_must_run) the test FAILs; elsewhere it
# SKIPs with the reason (--part: only this part, see part_skipped).
judge_missing() {
        _part=
        [ "$1" != --part ] || { _part=1; shift; }
        ! judges_must_run ||
                fail "judge $1 missing on a machine where every judge must run (CI=true, root, mount namespaces, the npm registry): $2"
        if [ -n "$_part" ]; then part_skipped "judge $1: $2"; else skip "judge $1: $2"; fi
}

# users_lock: a test that adds system users (useradd) takes this lock before its first useradd and
# holds it until it exits (its users removed): t-0300 runs --all-users over every user of the
# system, so another test's user appearing during it (make -j) would be counted there.
users_lock() {
        command -v flock >/dev/null 2>&1 || skip "flock is not installed"
        exec 9>>/tmp/qgc-test-users.lock
        flock 9 || fail "cannot take the lock of the tests that add users"
}

# have_pty: can script(1) give a command a pseudo-terminal here? (Not in a chroot without
# /dev/pts, nor where script is missing.)
have_pty() { command -v script >/dev/null 2>&1 && script -qec true /dev/null </dev/null >/dev/null 2>&1; }
# part_skipped WHY: a part of this test cannot run here. The test goes on with the rest, and
# finish() then ends it with SKIP (77), never PASS: a skipped part is not a passed one; its
# "SKIP: parts not run here; WHY..." line is what .ci/run's SKIP list reports.
parts_skipped=""
part_skipped() { echo "SKIP (part): $*" >&2; parts_skipped="$parts_skipped; $*"; }
finish() {
        [ -z "$parts_skipped" ] || { echo "SKIP: parts not run here$parts_skipped" >&2; exit 77; }
        exit 0
}

# golden_compare GOLDEN OUT: the file OUT must equal the golden file GOLDEN, else the test fails.
# Goldens are rewritten only by `make update-golden`: with QGC_UPDATE_GOLDEN=1 (exactly; any other
# non-empty value fails, and so does any value under CI=true) a GOLDEN that differs is replaced by
# OUT and the test fails all the same, so the run that rewrote a golden never passes. The C tests'
# test_golden_compare() (tests/common/testdata.c) has the same rules.
golden_compare() {
        if [ -n "${QGC_UPDATE_GOLDEN:-}" ]; then
                [ "$QGC_UPDATE_GOLDEN" = 1 ] ||
                        fail "QGC_UPDATE_GOLDEN='$QGC_UPDATE_GOLDEN': only 1 rewrites goldens (make update-golden)"
                [ "${CI:-}" != true ] || fail "QGC_UPDATE_GOLDEN=1 under CI=true: goldens are not rewritten in CI"
                if ! cmp -s "$1" "$2"; then
                        cp "$2" "$1"
                        fail "golden $1 rewritten: review the diff (git diff), then make check"
                fi
        fi
        diff -u "$1" "$2" || fail "the output differs from the golden $1"
}

# make_tree NAME: a fresh copy of the corpus tree at $T/NAME, printed.
make_tree() {
        mkdir -p "$T/$1"
        cp -a "$QGC_TESTDATA/corpus/tree/." "$T/$1/"
        chmod -R u+w "$T/$1"
        # The corpus was written on a host named "vm" by processes long dead. A claim from another
        # host, or whose pid happens to be alive here, counts as live (Qwen's rule), so make the
        # claims local and point them at a pid that just exited.
        python3 - "$T/$1" "$(sh -c 'echo $$')" <<'PY'
import glob, json, os, sys
tree, dead = sys.argv[1], int(sys.argv[2])
for f in glob.glob(os.path.join(tree, "projects/*/chats/*.runtime.json")):
    claim = json.load(open(f))
    claim["hostname"], claim["pid"] = os.uname().nodename, dead
    text = json.dumps(claim, indent=2)
    # a fixed size, so that session sizes (and golden plans) do not depend on the host
    open(f, "w").write(text + " " * max(0, 511 - len(text)) + "\n")
PY
        # a checkout gives every file the time of the checkout: pin them, so that ages and
        # ranks (and the golden plans) do not depend on when the tests run. A month before the
        # corpus was written: real runs measure min-idle with the real clock, whatever --now says
        find "$T/$1" -exec touch -h -d 2026-11-01T00:00:00Z {} +
        echo "$T/$1"
}

# move_project G CWD [keep-mtimes] [FROM]: the corpus project FROM (/srv/demo/scratch) of the
# tree G, as if it had been started in CWD (its directory renamed, its records' cwd rewritten);
# with keep-mtimes every file keeps its modification time, else it gets the time of the rewrite.
move_project() {
        python3 - "$1" "$2" "${3:-}" "${4:-/srv/demo/scratch}" <<'PY'
import os, re, sys
g, w, keep, src = sys.argv[1], sys.argv[2], sys.argv[3] == "keep-mtimes", sys.argv[4]
old = os.path.join(g, "projects", re.sub(r"[^A-Za-z0-9]", "-", src))
new = os.path.join(g, "projects", re.sub(r"[^A-Za-z0-9]", "-", w))
os.rename(old, new)
for d, _, files in os.walk(new):
    for f in files:
        p = os.path.join(d, f)
        st = os.stat(p)
        data = open(p, "rb").read().replace(('"%s"' % src).encode(), ('"%s"' % w).encode())
        open(p, "wb").write(data)
        if keep:
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
}

# normalize_plan PLAN.json TREE: the plan without what depends on the machine (paths of the
# temporary tree, filesystem sizes, allocated blocks), for comparison with a golden file.
normalize_plan() {
        python3 - "$1" "$2" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
tree = sys.argv[2]
def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()
                if k not in ("fs_size", "fs_avail", "bytes_allocated")}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        return v.replace(tree, "TREE")
    return v
print(json.dumps(norm(plan), indent=1, ensure_ascii=False, sort_keys=False))
PY
}

# snapshot DIR OUT: every path with type, size, mode, inode, mtime, atime and a content hash,
# taken with lstat on a path list gathered beforehand, so that taking it reads no directory
# after the atimes were reset (see reset_atimes).
snapshot() {
        python3 "$QGC_TESTDATA/../integration/snapshot.py" "$1" > "$2"
}

# reset_atimes DIR: set every atime (files and directories) to 2001-01-01, so that any read
# (even a relatime one) would change it.
reset_atimes() {
        python3 "$QGC_TESTDATA/../integration/snapshot.py" --reset-atimes "$1"
}

# qgc_dry ARGS...: run qgc and fail on a crash or timeout.
run_qgc() {
        set +e
        timeout 60 "$QGC" "$@"
        rc=$?
        set -e
        [ $rc -lt 124 ] || fail "qgc $* timed out or crashed (rc=$rc)"
        return $rc
}

# realdc_setup [TOOL...]: the real Deep Code 0.2.1, the judge of a Deep Code store, built by
# tests/realdeepcode/setup.sh into $REALDC_BUILD (one build at a time, under a lock; setup.sh is
# idempotent: a stamp holds the tarball's sha256); sets HARNESS to tests/realdeepcode. The judge
# is missing (judge_missing) without node, npm, git or a TOOL named, or when setup.sh says so.
realdc_setup() {
        : "${QGC_SRCDIR:?}" "${QGC_BUILDDIR:?}"
        HARNESS=$QGC_SRCDIR/tests/realdeepcode
        REALDC_BUILD=${REALDC_BUILD:-$QGC_BUILDDIR/tests/realdeepcode-build}
        export REALDC_BUILD
        for _tool in node npm git "$@"; do
                command -v "$_tool" >/dev/null 2>&1 || judge_missing "Deep Code" "$_tool is not installed"
        done
        mkdir -p "$(dirname "$REALDC_BUILD")"
        _rc=0
        ( command -v flock >/dev/null && flock -w 1800 9; "$HARNESS/setup.sh" ) 9>>"$REALDC_BUILD.lock" \
                > "$T/setup.log" 2>&1 || _rc=$?
        [ $_rc -ne 77 ] || judge_missing "Deep Code" "$(tail -1 "$T/setup.log")"
        [ $_rc -eq 0 ] || { cat "$T/setup.log"; fail "setup.sh could not build Deep Code"; }
}
