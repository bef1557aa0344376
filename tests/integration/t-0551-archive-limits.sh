#!/bin/sh
# t-0551-archive-limits: the sidecar limit of an archive (and of a restore) is planned. When chats/ and chats/archive/
# both hold a session's .pr.json or .ledger.jsonl, the archive merges them, reading each up to
# 64 MiB. One past that, the dry run says "skip ... (limit) (would archive: ...)" and the real run
# skips exactly that session: its transcript and both sidecars stay, it is journalled as skipped,
# a warning says the policy was not met, and the exit status is 0 (as for the shared-file limits,
# t-0550). At exactly 64 MiB the merge is done and the session archived. (Before, the dry run
# said "archive" and the run failed the archive, exit 1.) A restore that would merge such a
# file is refused by its plan (dry run and run alike, exit 1 as for every refused restore); at
# the maximum it is done. (Before, its dry run said "would restore".)
. "$(dirname "$0")/lib.sh"
NOW=2027-04-01T00:00:00Z
CONF="$QGC_TESTDATA/integration/apply.conf"
MAX=$((64 * 1024 * 1024))
ID=aefd2a51-f2fc-4eed-a29c-91292bb022bf # /srv/demo/webapp: archived by max-age

# pr_json PATH SIZE: a .pr.json Qwen would write, of exactly SIZE bytes (its url padded), binding
# PR 7 (a large one) or 8 (a small one)
pr_json() {
        python3 - "$1" "$2" <<'PY'
import sys
head = '{"prs":[{"number":%d,"url":"https://example.com/' % (7 if int(sys.argv[2]) > 1000 else 8)
tail = '","createdAt":"2026-10-01T00:00:00.000Z"}]}'
with open(sys.argv[1], "w") as f:
    f.write(head); f.write("x" * (int(sys.argv[2]) - len(head) - len(tail))); f.write(tail)
PY
}

# case NAME SUFFIX SIDE SIZE WANT: chats/<id>SUFFIX is small and valid, and SIDE's copy (chats or
# archive) is SIZE bytes; WANT is "skip" (planned and run as a skip) or "archive"
case_limit() {
        name=$1 suffix=$2 side=$3 size=$4 want=$5
        tree=$(make_tree "tree-$name")
        chats=$tree/projects/-srv-demo-webapp/chats
        mkdir -p "$chats/archive"
        for d in "$chats" "$chats/archive"; do
                if [ "$suffix" = .pr.json ]; then pr_json "$d/$ID$suffix" 100
                else echo '{"turn":1}' > "$d/$ID$suffix"; fi
        done
        big=$chats/$ID$suffix
        [ "$side" = chats ] || big=$chats/archive/$ID$suffix
        if [ "$suffix" = .pr.json ]; then pr_json "$big" "$size"; else truncate -s "$size" "$big"; fi
        run_qgc --dry-run --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan-$name.txt" ||
                fail "$name: dry run"
        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$CONF" > "$T/plan-$name.json" ||
                fail "$name: dry run (json)"
        run_qgc --root "$tree" --now "$NOW" -c "$CONF" --log-file "$T/actions-$name.log" \
                > "$T/run-$name.out" 2> "$T/run-$name.err" ||
                { cat "$T/run-$name.out" "$T/run-$name.err"; fail "$name: the run failed"; }
        python3 - "$chats" "$T/plan-$name.json" "$T/plan-$name.txt" "$T/actions-$name.log" \
                "$T/run-$name.err" "$ID" "$suffix" "$want" <<'PY' || fail "$name: run and plan differ"
import json, os, sys
chats, plan, text, log, err, sid, suffix, want = sys.argv[1:9]
plan = json.load(open(plan))
text, log, err = open(text).read(), open(log).read(), open(err).read()
s = [x for p in plan["projects"] for x in p["sessions"] if x["id"] == sid][0]
here = lambda d, n: os.path.exists(os.path.join(chats, d, sid + n))
warning = "not archived: a sidecar to merge is larger than qgc merges (limit)"
if want == "skip":
    assert s["verb"] == "skip" and s["rule"] == "limit", s
    assert "the 64M qgc merges (limit) (would archive: idle" in s["reason"], s["reason"]
    assert "qgc merges (limit)" in text and warning in text, text
    assert here("", ".jsonl") and not here("archive", ".jsonl"), "archived"
    assert here("", suffix) and here("archive", suffix), "a sidecar moved"
    assert f"skipped archive of session {sid}" in log and "(limit)" in log, "not journalled"
    assert warning in err, err
    print("the archive is planned and run as a skip")
else:
    assert s["verb"] == "archive", s
    assert warning not in text, text
    assert not here("", ".jsonl") and here("archive", ".jsonl"), "not archived"
    assert not here("", suffix) and os.path.getsize(os.path.join(chats, "archive", sid + suffix)) >= 64 << 20
    print("archived at the maximum, the sidecars merged")
PY
}

# restore NAME SIZE WANT: the archived session of /srv/demo/scratch, whose chats/ holds a ledger
# of SIZE bytes beside the archive's: WANT is "refuse" (`qgc restore` and `restore --project`
# plan it refused, exit 1, and the run refuses it the same way, nothing moved) or "restore"
case_restore() {
        name=$1 size=$2 want=$3
        tree=$(make_tree "tree-$name")
        chats=$tree/projects/-srv-demo-scratch/chats
        rid=1a914264-8e49-442e-bc79-1cb2de9eae0c
        echo '{"turn":1}' > "$chats/archive/$rid.ledger.jsonl"
        truncate -s "$size" "$chats/$rid.ledger.jsonl"
        why="cannot restore session $rid: its .pr.json or .ledger.jsonl, in both chats/ and chats/archive/, is larger than the 64M qgc merges (limit)"
        for how in "$rid" "--project /srv/demo/scratch"; do
                # shellcheck disable=SC2086 # $how is two words for --project
                rc=0
                run_qgc restore --dry-run --root "$tree" $how > "$T/plan-$name.txt" 2>&1 || rc=$?
                if [ "$want" = refuse ]; then
                        [ $rc = 1 ] && grep -qxF "$why" "$T/plan-$name.txt" ||
                                { cat "$T/plan-$name.txt"; fail "$name: restore $how: rc $rc, not refused (limit)"; }
                else
                        [ $rc = 0 ] && grep -q "would restore session $rid" "$T/plan-$name.txt" ||
                                { cat "$T/plan-$name.txt"; fail "$name: restore $how: rc $rc"; }
                fi
        done
        rc=0
        run_qgc restore --root "$tree" --log-file "$T/actions-$name.log" "$rid" > "$T/run-$name.out" 2>&1 ||
                rc=$?
        if [ "$want" = refuse ]; then
                [ $rc = 1 ] || fail "$name: the refused restore exits $rc"
                [ -f "$chats/archive/$rid.jsonl" ] && [ ! -e "$chats/$rid.jsonl" ] || fail "$name: moved"
                [ "$(stat -c %s "$chats/$rid.ledger.jsonl")" = "$size" ] || fail "$name: ledger changed"
                grep -q "failed restore of session $rid.*(limit)" "$T/actions-$name.log" ||
                        fail "$name: not journalled with its reason"
        else
                [ $rc = 0 ] && [ -f "$chats/$rid.jsonl" ] && [ ! -e "$chats/archive/$rid.ledger.jsonl" ] ||
                        { cat "$T/run-$name.out"; fail "$name: not restored at the maximum"; }
        fi
        echo "$name: restore planned and run alike ($want)"
}

case_restore restore-over $((MAX + 1)) refuse
case_restore restore-max $MAX restore
case_limit ledger-over .ledger.jsonl archive $((MAX + 1)) skip
case_limit ledger-source-over .ledger.jsonl chats $((MAX + 1)) skip
case_limit pr-over .pr.json archive $((MAX + 1)) skip
case_limit ledger-max .ledger.jsonl archive $MAX archive
case_limit pr-max .pr.json archive $MAX archive
finish
