#!/bin/sh
# The audit trail against a real systemd-journald: in a private mount namespace (tmpfs over
# /run/systemd, /run/log and /var/log/journal) a journald of our own listens on the usual socket;
# a real qgc run with --log-target=journal sends its entries there, and journalctl reads them
# back: one entry per planned action plus run start and summary, all sharing one QGC_RUN, with
# the fixed MESSAGE_ID of each kind and the QGC_* fields. Needs root, unshare and journald:
# without them the judge is missing (judge_missing: SKIP, or FAIL where every judge must run).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || judge_missing journald "needs root (mount namespace and journald)"
command -v unshare >/dev/null 2>&1 || judge_missing journald "no unshare"
command -v journalctl >/dev/null 2>&1 || judge_missing journald "no journalctl"
command -v python3 >/dev/null 2>&1 || skip "no python3"
JOURNALD=
for j in /lib/systemd/systemd-journald /usr/lib/systemd/systemd-journald; do
        [ -x "$j" ] && { JOURNALD=$j; break; }
done
[ -n "$JOURNALD" ] || judge_missing journald "no systemd-journald"
unshare -m --propagation private true 2>/dev/null || judge_missing journald "mount namespaces are not available"
[ -x "$QGC" ] || fail "no qgc binary at $QGC"

tree=$(make_tree tree)
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"

# The plan first: what the journal must report.
run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan.json" || fail "dry run"

# The catalog, compiled into a database of our own, for journalctl -x inside the namespace.
CATDB=""
if [ -n "${QGC_SRCDIR:-}" ] && [ -f "$QGC_SRCDIR/systemd/qgc.catalog" ] &&
   [ -d /var/lib/systemd/catalog ]; then
        mkdir -p "$T/catroot/usr/lib/systemd/catalog" "$T/catroot/var/lib/systemd/catalog"
        cp "$QGC_SRCDIR/systemd/qgc.catalog" "$T/catroot/usr/lib/systemd/catalog/"
        journalctl --root="$T/catroot" --update-catalog || fail "journalctl rejects qgc.catalog"
        CATDB="$T/catroot/var/lib/systemd/catalog"
fi

# qgc as the system unit runs it (issue 24.1): in a cgroup named qgc.service, stdout and stderr
# connected to journald's stream socket as systemd connects them (identifier qgc, level prefix
# on, JOURNAL_STREAM set). The wrapper keeps qgc unreaped until journald has read every entry,
# so that journald still finds its cgroup (a reaped pid has none: no _SYSTEMD_UNIT).
cat > "$T/unitrun.py" <<'PY'
import os, socket, subprocess, sys
for d in sys.argv[1].split(":"):
    with open(os.path.join(d, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/run/systemd/journal/stdout")
s.shutdown(socket.SHUT_RD)
s.sendall(b"qgc\nqgc.service\n6\n1\n0\n0\n0\n")
st = os.fstat(s.fileno())
env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=s.fileno(),
                     stderr=s.fileno(), env=env)
os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
subprocess.run(["journalctl", "--sync"], check=False)
sys.exit(p.wait())
PY
# The cgroup: qgc-t0100-PID.slice/qgc.service in every hierarchy that tracks units
CGS=""
for base in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd /sys/fs/cgroup; do
        [ -f "$base/cgroup.procs" ] || continue
        d="$base/qgc-t0100-$$.slice/qgc.service"
        mkdir -p "$d" 2>/dev/null || continue
        CGS="${CGS:+$CGS:}$d"
done
cleanup_cgroups() {
        IFS=:
        for d in $CGS; do rmdir "$d" "$(dirname "$d")" 2>/dev/null || true; done
        unset IFS
}
trap "cleanup_cgroups; cleanup" EXIT
[ -n "$CGS" ] || skip "cannot make a cgroup named qgc.service (journalctl -u qgc needs one)"
# what the unit's runs meet: a tree cap that keep-latest and the deletion limits keep unmet, a
# metrics file that cannot be written, a syntax error in a drop-in, and a person's typo
tree3=$(make_tree tree3)
mkdir -p "$T/etc/conf.d"
cat > "$T/etc/qgc.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; max-deletions-percent = 30; };
tree = { max-size = "20K"; };
CONF
printf 'defaults = { max-age = 10d; };\n' > "$T/etc/conf.d/50-typo.conf"
ACTIVE_ID=122b1556-a4f5-48b6-9bf1-eae6bac23f87

cat > "$T/inner.sh" <<'EOF'
set -eu
mkdir -p /run/systemd /run/log
mount -t tmpfs -o mode=0755 tmpfs /run/systemd
mount -t tmpfs -o mode=0755 tmpfs /run/log
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
"$JOURNALD" </dev/null >"$T/journald.log" 2>&1 &
jpid=$!
i=0
while [ ! -S /run/systemd/journal/socket ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -S /run/systemd/journal/socket ]; then
        kill $jpid 2>/dev/null || true
        exit 77
fi
set +e
timeout 60 "$QGC" --root "$tree" --now "$NOW" -c "$CONF" --log-target=journal \
        >"$T/run.out" 2>"$T/run.err"
echo $? >"$T/rc"
set -e
# the run's last entry (run-summary) readable: journalctl --sync asks journald to write out
# what it has; where it cannot, poll for the entry itself (a deadline, no fixed sleep)
journalctl --sync >/dev/null 2>&1 || true
i=0
until journalctl -q --no-pager SYSLOG_IDENTIFIER=qgc QGC_ACTION=run-summary 2>/dev/null | grep -q .; do
        i=$((i + 1))
        [ $i -lt 300 ] || break # 30 s: the entry check below then says what is missing
        sleep 0.1
done
journalctl -o json --no-pager SYSLOG_IDENTIFIER=qgc >"$T/entries.json"
# the unit's runs: cap warning and metrics warning; then the broken drop-in; then the typo
set +e
python3 "$T/unitrun.py" "$CGS" "$QGC" --system-config "$T/etc/qgc.conf.ok" --root "$tree3" \
        --now "$NOW" -c "$T/etc/qgc.conf" --quiet --metrics-file /nonexistent-qgc/qgc.prom
echo $? >"$T/rc-unit1"
python3 "$T/unitrun.py" "$CGS" "$QGC" --system-config "$T/etc/qgc.conf" --root "$tree3" \
        --now "$NOW" --quiet
echo $? >"$T/rc-unit2"
python3 "$T/unitrun.py" "$CGS" "$QGC" --root "$tree3" -c "$CONF" restore "$ACTIVE_ID"
echo $? >"$T/rc-unit3"
set -e
# doc/fleet.md's queries, as written there
journalctl --no-pager -o json -u qgc.service -p err >"$T/q-err.json"
journalctl --no-pager -o json -u qgc -p warning >"$T/q-warning.json"
journalctl --no-pager -o json -u qgc >"$T/q-all.json"
journalctl --no-pager -o json MESSAGE_ID=7b3ba3048f994cb7b8b1a09ee54cb397 >"$T/q-summary.json"
journalctl --no-pager -o json MESSAGE_ID=0f4eb6757d0b48799ced0ebf4404607f >"$T/q-failed.json"
if [ -n "$CATDB" ]; then
        # journalctl -x explains each entry from the catalog, its @FIELD@s filled in
        mount --bind "$CATDB" /var/lib/systemd/catalog
        journalctl -x --no-pager SYSLOG_IDENTIFIER=qgc QGC_ACTION=archived >"$T/explained.txt" 2>&1
fi
kill $jpid
wait $jpid 2>/dev/null || true
EOF
export T tree tree3 NOW CONF QGC JOURNALD CATDB CGS ACTIVE_ID
set +e
unshare -m --propagation private sh "$T/inner.sh"
rc=$?
set -e
[ $rc -ne 77 ] || judge_missing journald "journald did not start in the namespace: $(cat "$T/journald.log")"
[ $rc -eq 0 ] || fail "namespace script failed (rc=$rc): $(cat "$T/journald.log" 2>/dev/null)"
cat "$T/run.out" "$T/run.err"
[ "$(cat "$T/rc")" = 0 ] || fail "qgc exited $(cat "$T/rc")"
# nothing went to stderr as key=value lines: the journal got them
! grep -q 'QGC_ACTION=' "$T/run.err" || fail "entries went to stderr, not the journal"

python3 - "$T/entries.json" "$T/plan.json" "$tree" <<'PY' || fail "journal entries do not match the plan"
import json, os, re, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
plan = json.load(open(sys.argv[2]))
tree = sys.argv[3]
ids = {  # fixed forever, see src/journal.c and systemd/qgc.catalog
    "run-start": "caec719ed545467d92482f1a66e06938",
    "run-summary": "7b3ba3048f994cb7b8b1a09ee54cb397",
    "archived": "039b94a1c5f1467592954e2f0d504ac1",
    "deleted": "3dee92406ec3456597a3ed68f3882209",
    "restored": "bac76e86fbdc4c1987b043b9efc97119",
    "skipped": "20de1acb35f14aed9e6f19b5cbf0871e",
    "failed": "0f4eb6757d0b48799ced0ebf4404607f",
    "orphan-reclaimed": "2a4edf6fbf86489a83691f5330acbb1c",
    "salvaged": "8d8faafe2c18497fb8ddcd021f1b7965",
    "recovered": "22da4ba8837a4227a41ebfbe66fee1c8",
    "erased": "d45f8cd6b5864b6e93ddd4537003c5d0",
    "stale-mark": "bcf6b548b5bc4312ab27749a5b685795",
    "compressed": "54e2dc3abdde422d96118aded2e0acdb",
    "user-failed": "c9252e90c1b4455c8a467c66624ca373",
}
assert entries, "no qgc entries in the journal"
runs = {e.get("QGC_RUN") for e in entries}
assert len(runs) == 1, f"entries of several runs: {runs}"
run = runs.pop()
assert run and re.fullmatch(r"[0-9a-f]{32}", run), f"bad QGC_RUN {run!r}"
for e in entries:
    a = e.get("QGC_ACTION")
    assert a in ids, f"unknown QGC_ACTION {a!r}"
    assert e.get("MESSAGE_ID") == ids[a], f"{a}: MESSAGE_ID {e.get('MESSAGE_ID')}"
    assert e.get("MESSAGE"), f"{a}: no MESSAGE"
    assert e.get("PRIORITY", "") in "1234567", f"{a}: PRIORITY {e.get('PRIORITY')}"
    assert "CODE_FILE" not in e, "CODE_FILE present: sd_journal_sendv location not suppressed"
acts = [e["QGC_ACTION"] for e in entries]
assert acts[0] == "run-start" and acts[-1] == "run-summary", acts
assert acts.count("run-start") == 1 and acts.count("run-summary") == 1, acts

want = {}
for p in plan["projects"]:
    for s in p["sessions"]:
        if s["verb"] in ("archive", "delete"):
            want[s["id"]] = s["verb"] + "d"
assert want, "the test config plans no session action"
got = {e["QGC_SESSION"]: e["QGC_ACTION"] for e in entries if e["QGC_ACTION"] in ("archived", "deleted")}
assert got == want, f"journal {got} != plan {want}"
for e in entries:
    if e["QGC_ACTION"] not in ("archived", "deleted"):
        continue
    sid = e["QGC_SESSION"]
    for f in ("QGC_PROJECT", "QGC_PATH", "QGC_RULE", "QGC_REASON", "QGC_BYTES"):
        assert e.get(f), f"{sid}: no {f}"
    assert int(e["QGC_BYTES"]) > 0, f"{sid}: QGC_BYTES {e['QGC_BYTES']}"
    path = e["QGC_PATH"]
    assert path.startswith(tree) and path.endswith(sid + ".jsonl"), path
    if e["QGC_ACTION"] == "archived":
        assert "/chats/archive/" in path and os.path.exists(path), f"{path} not archived"
    else:
        assert not os.path.exists(path), f"{path} still exists"
summary = entries[-1]
n_arch = sum(1 for v in want.values() if v == "archived")
n_del = sum(1 for v in want.values() if v == "deleted")
assert summary.get("QGC_ARCHIVED") == str(n_arch), summary
assert summary.get("QGC_DELETED") == str(n_del), summary
assert summary.get("QGC_FAILED") == "0", summary
print(f"{len(entries)} entries, run {run}: {n_arch} archived, {n_del} deleted")
PY

# Priorities that mean something (issue 24.1): the unit's warnings at 4, errors at 3, actions at
# 5-6; the person's typo is an error line, never a failed restore nor a failure in a summary.
[ "$(cat "$T/rc-unit1")" = 0 ] || fail "unit run 1 exited $(cat "$T/rc-unit1")"
[ "$(cat "$T/rc-unit2")" = 78 ] || fail "the broken drop-in: exit $(cat "$T/rc-unit2"), not 78"
[ "$(cat "$T/rc-unit3")" = 1 ] || fail "restore of an active id: exit $(cat "$T/rc-unit3"), not 1"
python3 - "$T" <<'PY' || fail "journalctl -u qgc -p warning/err do not show qgc's warnings and errors"
import json, sys
t = sys.argv[1]
def load(n):
    return [json.loads(l) for l in open(f"{t}/{n}") if l.strip()]
err, warn, every = load("q-err.json"), load("q-warning.json"), load("q-all.json")
assert every, "journalctl -u qgc finds nothing: no _SYSTEMD_UNIT=qgc.service"
for e in every:
    assert e.get("_SYSTEMD_UNIT") == "qgc.service", e
def has(entries, text, prio):
    return [e for e in entries if text in e.get("MESSAGE", "") and e.get("PRIORITY") == prio]
# warnings: the cap (in the run summary, once), the metrics file; not at info
assert has(warn, "tree cap not met", "4"), [e["MESSAGE"] for e in warn]
assert len([e for e in every if "tree cap not met" in e.get("MESSAGE", "")]) == 1, \
    [e["MESSAGE"] for e in every if "not met" in e.get("MESSAGE", "")]
assert has(warn, "--metrics-file: cannot create a file", "4"), [e["MESSAGE"] for e in warn]
# errors: the drop-in's syntax error (file:line), the typo
assert has(err, "50-typo.conf:1: syntax error", "3"), [e["MESSAGE"] for e in err]
assert has(err, "restore: session 122b1556-a4f5-48b6-9bf1-eae6bac23f87 is not archived", "3"), \
    [e["MESSAGE"] for e in err]
# -p warning holds only warnings and worse; actions stay at info/notice
assert all(int(e["PRIORITY"]) <= 4 for e in warn + err), warn
acts = [e for e in every if e.get("QGC_ACTION") in ("archived", "deleted")]
assert acts and all(e["PRIORITY"] in ("5", "6") for e in acts), acts
# the typo is no failed restore and no failure in a summary
assert not [e for e in load("q-failed.json") if e.get("QGC_RULE") == "restore"], "failed restore"
assert all(e.get("QGC_FAILED") == "0" for e in load("q-summary.json")), load("q-summary.json")
print(f"-p err: {len(err)}, -p warning: {len(warn)}, -u qgc: {len(every)} entries")
PY

# Outside the namespace there is no journal here: asking for it explicitly is an error, auto
# falls back to key=value lines on stderr.
if [ ! -S /run/systemd/journal/socket ]; then
        tree2=$(make_tree tree2)
        rc2=0
        run_qgc --root "$tree2" --now "$NOW" -c "$CONF" --log-target=journal >/dev/null 2>"$T/err2" ||
                rc2=$?
        rc3=0
        run_qgc --root "$tree2" --now "$NOW" -c "$CONF" --log-target=auto >/dev/null 2>"$T/err3" ||
                rc3=$?
        [ $rc2 -ne 0 ] || fail "--log-target=journal without a journal succeeded"
        [ $rc3 -eq 0 ] || fail "--log-target=auto failed: $(cat "$T/err3")"
        grep -q 'QGC_ACTION=run-start' "$T/err3" || fail "auto did not fall back to stderr"
        grep -q "QGC_RUN=[0-9a-f]\{32\}" "$T/err3" || fail "no QGC_RUN on stderr"
fi
# The catalog parses, and explains every MESSAGE_ID qgc sends.
if [ -n "${QGC_SRCDIR:-}" ] && [ -f "$QGC_SRCDIR/systemd/qgc.catalog" ]; then
        mkdir -p "$T/catroot/usr/lib/systemd/catalog" "$T/catroot/var/lib/systemd/catalog"
        cp "$QGC_SRCDIR/systemd/qgc.catalog" "$T/catroot/usr/lib/systemd/catalog/"
        journalctl --root="$T/catroot" --update-catalog || fail "journalctl rejects qgc.catalog"
        journalctl --root="$T/catroot" --list-catalog >"$T/catalog.txt" 2>&1 || true
        python3 - "$T/entries.json" "$T/catalog.txt" <<'PY' || fail "MESSAGE_IDs missing from the catalog"
import json, sys
ids = {json.loads(l)["MESSAGE_ID"] for l in open(sys.argv[1]) if l.strip()}
listed = {l.split()[0] for l in open(sys.argv[2]) if l.strip()}
missing = ids - listed
assert not missing, missing
assert len(listed) == 14, listed  # one per JournalEvent (user-failed: root mode)
PY
fi
# journalctl -x shows the catalog's text with the session, project and rule of the entry
if [ -n "$CATDB" ]; then
        python3 - "$T/entries.json" "$T/explained.txt" <<'PY' || fail "journalctl -x does not name the session"
import json, sys
arch = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
arch = [e for e in arch if e.get("QGC_ACTION") == "archived"]
assert arch, "no archived entry"
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
for e in arch:
    want = "qgc moved the session %s of project %s" % (e["QGC_SESSION"], e["QGC_PROJECT"])
    assert want in " ".join(text.split()), (want, text[:2000])
    assert "@QGC_" not in text, "an @FIELD@ was not substituted"
PY
        pass "journalctl -x explains an archived entry with its session and project"
fi
pass "journal entries read back with journalctl"
