#!/bin/sh
# t-0710-dc-git: the compaction of Deep Code checkpoint repositories (src/deepcode/dc-git.c), through
# tests/helpers/dc-git-run. On every repository of the Deep Code 0.2.1 corpus (made by the real
# CLI) and on synthetic ones made with the git commands of Deep Code's file-history.ts (a fork
# sharing history, an /undo that strands named checkpoints, a session removed from the index with
# its branch left, a fork whose source is removed): git fsck is clean afterwards, every named
# checkpoint resolves with its tree and manifest, kept branches are unchanged, removed sessions'
# refs and reflogs are gone, unnamed orphans are pruned, bytes are freed, the dry run changes
# nothing and announces what goes, and a second run changes nothing. Hostile repositories (a
# symlinked ref, alternates, a config with core.fsmonitor, a FIFO, a broken object store) are kept
# as they are, and so is one larger than the limit; a git that blocks is killed at the deadline; hooks, replace refs and grafts are neutralised.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/git ] || skip "git is not installed (/usr/bin/git)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
RUN="${QGC_BUILDDIR:-$(dirname "$QGC")}/tests/helpers/dc-git-run"
[ -x "$RUN" ] || skip "tests/helpers/dc-git-run is not built"

# g GITDIR ARGS...: git as Deep Code runs it, without the tester's configuration
g() {
        _gd=$1; shift
        env -i PATH=/usr/bin:/bin HOME="$T" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
                GIT_AUTHOR_NAME="DeepCode Checkpoint" GIT_AUTHOR_EMAIL=deepcode-checkpoint@localhost \
                GIT_COMMITTER_NAME="DeepCode Checkpoint" GIT_COMMITTER_EMAIL=deepcode-checkpoint@localhost \
                git -c core.autocrlf=false -c core.eol=lf --git-dir="$_gd" "$@"
}
field() { sed -n "s/^$1=//p" "$2"; }
# snapshot GITDIR: every file's path, size, mtime and inode (what "changes nothing" compares)
snapshot() { (cd "$1" && find . -printf '%P %y %s %T@ %i\n' | sort); }

# sets PROJECTDIR: $T/kept (the index's ids) and $T/named (their messages' checkpointHash values)
sets() {
        python3 - "$1" "$T/kept" "$T/named" <<'PY'
import json, os, sys
d, kept, named = sys.argv[1:]
ids = [e["id"] for e in json.load(open(os.path.join(d, "sessions-index.json")))["entries"]]
hashes = []
for i in ids:
    p = os.path.join(d, i + ".jsonl")
    if os.path.exists(p):
        for line in open(p, encoding="utf-8"):
            if line.strip():
                h = json.loads(line).get("checkpointHash")
                if h:
                    hashes.append(h)
open(kept, "w").write("".join(i + "\n" for i in ids))
open(named, "w").write("".join(h + "\n" for h in hashes))
PY
}

# check GITDIR: fsck clean; every named checkpoint a commit whose tree holds its manifest
check() {
        g "$1" fsck --no-dangling --no-progress >"$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$1: git fsck"; }
        while read -r h; do
                g "$1" cat-file -e "$h^{commit}" 2>/dev/null || fail "$1: checkpoint $h lost"
                g "$1" cat-file -e "$h^{tree}" 2>/dev/null || fail "$1: checkpoint $h has no tree"
                g "$1" cat-file blob "$h:.deepcode-file-history.json" >/dev/null 2>&1 ||
                        fail "$1: checkpoint $h has no manifest"
        done <"$T/named"
}

# compact GITDIR NAME: dry run (changes nothing), compaction, checks, a second run (changes
# nothing); the outputs in $T/NAME.plan, $T/NAME.out, $T/NAME.again
compact() {
        _gd=$1 _n=$2
        g "$_gd" for-each-ref --format='%(refname) %(objectname)' >"$T/$_n.refs"
        snapshot "$_gd" >"$T/$_n.snap0"
        "$RUN" plan "$_gd" "$T/kept" "$T/named" >"$T/$_n.plan"
        snapshot "$_gd" >"$T/$_n.snap1"
        cmp -s "$T/$_n.snap0" "$T/$_n.snap1" || fail "$_n: the dry run changed the repository"
        [ "$(field result "$T/$_n.plan")" = 1 ] || { cat "$T/$_n.plan"; fail "$_n: plan"; }
        "$RUN" compact "$_gd" "$T/kept" "$T/named" >"$T/$_n.out"
        [ "$(field result "$T/$_n.out")" = 1 ] || { cat "$T/$_n.out"; fail "$_n: compact"; }
        check "$_gd"
        # what the plan announced is what went
        grep '^ref=' "$T/$_n.plan" >"$T/$_n.p" || true
        grep '^ref=' "$T/$_n.out" >"$T/$_n.o" || true
        cmp -s "$T/$_n.p" "$T/$_n.o" || fail "$_n: the plan's refs differ from the run's"
        while read -r ref oid; do
                id=${ref#refs/heads/}
                if grep -qx "ref=$ref" "$T/$_n.out"; then
                        g "$_gd" show-ref --verify -q "$ref" && fail "$_n: $ref still there"
                        [ ! -e "$_gd/logs/$ref" ] || fail "$_n: the reflog of $ref still there"
                        grep -qx "$id" "$T/kept" && fail "$_n: $ref of a kept session removed"
                else
                        [ "$(g "$_gd" rev-parse --verify -q "$ref")" = "$oid" ] || fail "$_n: $ref changed"
                fi
        done <"$T/$_n.refs"
        [ "$(g "$_gd" count-objects -v | sed -n 's/^count: //p')" = 0 ] || fail "$_n: loose objects left"
        _b0=$(field bytes_before "$T/$_n.out") _b1=$(field bytes_after "$T/$_n.out")
        [ "$_b1" -lt "$_b0" ] || fail "$_n: no byte freed ($_b0 -> $_b1)"
        [ "$(du -sB1 "$_gd" | cut -f1)" = "$_b1" ] || fail "$_n: bytes_after is not du's"
        snapshot "$_gd" >"$T/$_n.snap2"
        "$RUN" compact "$_gd" "$T/kept" "$T/named" >"$T/$_n.again"
        [ "$(field result "$T/$_n.again")" = 1 ] && [ "$(field changed "$T/$_n.again")" = 0 ] ||
                { cat "$T/$_n.again"; fail "$_n: a second run did something"; }
        snapshot "$_gd" >"$T/$_n.snap3"
        cmp -s "$T/$_n.snap2" "$T/$_n.snap3" || fail "$_n: a second run changed the repository"
        "$RUN" plan "$_gd" "$T/kept" "$T/named" >"$T/$_n.plan2"
        [ "$(field bytes_estimate "$T/$_n.plan2")" = 0 ] && [ "$(field refs_removed "$T/$_n.plan2")" = 0 ] ||
                { cat "$T/$_n.plan2"; fail "$_n: the plan of a compacted repository is not empty"; }
        check "$_gd"
}

# ---------------------------------------------------------------- the corpus
mkdir "$T/home"
tar xzf "$QGC_TESTDATA/deepcode/home.tar.gz" -C "$T/home"
freed=0 before=0 n=0
for p in "$T"/home/home/.deepcode/projects/*/; do
        gd="$p/file-history/.git"
        [ -d "$gd" ] || continue
        n=$((n + 1))
        sets "$p"
        compact "$gd" "corpus$n"
        _b0=$(field bytes_before "$T/corpus$n.out") _b1=$(field bytes_after "$T/corpus$n.out")
        freed=$((freed + _b0 - _b1)) before=$((before + _b0))
        echo "corpus $(basename "$p"): $_b0 -> $_b1 bytes, estimate $(field bytes_estimate "$T/corpus$n.plan"), refs removed $(field refs_removed "$T/corpus$n.out")"
done
[ "$n" = 5 ] || fail "the corpus has $n checkpoint repositories, not 5"
# the corpus's orphans (README of realdeepcode): 3 refs in busy (the 50-entry cap), 1 in webapp
[ "$(cat "$T"/corpus*.out | grep -c '^ref=')" = 4 ] || fail "not the corpus's 4 orphan refs removed"
echo "corpus: $before bytes of .git, $freed freed"

# ---------------------------------------------------------------- synthetic repositories
# dc_commit GITDIR ID CONTENT MESSAGE: one checkpoint of session ID as file-history.ts makes it
# (a blob, the manifest, mktree, commit-tree on the branch's head, update-ref); prints the commit
dc_commit() {
        _gd=$1 _id=$2
        _parent=$(g "$_gd" rev-parse -q --verify "refs/heads/$_id^{commit}" || true)
        _blob=$(printf '%s\n' "$3" | g "$_gd" hash-object -w --stdin)
        _key=files-$(printf '%s' "/w/$_id" | sha256sum | cut -c1-64)
        _man=$(printf '{\n  "version": 2,\n  "files": {\n    "%s": {\n      "path": "/w/%s",\n      "blob": "%s",\n      "mode": "100644"\n    }\n  }\n}\n' \
                "$_key" "$_id" "$_blob" | g "$_gd" hash-object -w --stdin)
        _tree=$(printf '100644 blob %s\t.deepcode-file-history.json\000100644 blob %s\t%s\000' "$_man" "$_blob" "$_key" |
                g "$_gd" mktree -z)
        if [ -n "$_parent" ]; then
                _c=$(g "$_gd" commit-tree "$_tree" -p "$_parent" -m "$4")
                g "$_gd" update-ref "refs/heads/$_id" "$_c" "$_parent"
        else
                _c=$(g "$_gd" commit-tree "$_tree" -m "$4")
                g "$_gd" update-ref "refs/heads/$_id" "$_c"
        fi
        echo "$_c"
}
dc_init() { mkdir -p "$(dirname "$1")" && g "$1" init -q; }

A=aaaaaaaa-0000-4000-8000-000000000001 # kept, forked by F
F=ffffffff-0000-4000-8000-000000000002 # kept fork of A
B=bbbbbbbb-0000-4000-8000-000000000003 # kept, /undo moved its branch back
R=eeeeeeee-0000-4000-8000-000000000004 # removed from the index, its branch left
S=dddddddd-0000-4000-8000-000000000005 # removed, forked by K
K=cccccccc-0000-4000-8000-000000000006 # kept fork of S, undone before the fork point
O=99999999-0000-4000-8000-000000000007 # removed; only its reflog is left

make_repo() {
        gd=$1
        dc_init "$gd"
        a1=$(dc_commit "$gd" $A a1 "Initial checkpoint") a2=$(dc_commit "$gd" $A a2 "Pre-mutation checkpoint")
        a3=$(dc_commit "$gd" $A a3 "File mutation checkpoint")
        g "$gd" update-ref refs/heads/$F "$a3" # forkSession: the fork starts at the source's head
        f1=$(dc_commit "$gd" $F f1 "File mutation checkpoint")
        b1=$(dc_commit "$gd" $B b1 "Initial checkpoint") b2=$(dc_commit "$gd" $B b2 "Pre-mutation checkpoint")
        b3=$(dc_commit "$gd" $B b3 "File mutation checkpoint") b4=$(dc_commit "$gd" $B b4 "File mutation checkpoint")
        g "$gd" update-ref refs/heads/$B "$b1" # /undo: restore() moves the branch back
        r1=$(dc_commit "$gd" $R r1 "Initial checkpoint") r2=$(dc_commit "$gd" $R r2 "File mutation checkpoint")
        s1=$(dc_commit "$gd" $S s1 "Initial checkpoint") s2=$(dc_commit "$gd" $S s2 "File mutation checkpoint")
        g "$gd" update-ref refs/heads/$K "$s2"
        k1=$(dc_commit "$gd" $K k1 "File mutation checkpoint")
        g "$gd" update-ref refs/heads/$K "$s1" # K's /undo to before the fork point
        o1=$(dc_commit "$gd" $O o1 "Initial checkpoint")
        g "$gd" update-ref -d refs/heads/$O
        mkdir -p "$gd/logs/refs/heads" && echo "$o1 $o1 x <x> 0 +0000	y" >"$gd/logs/refs/heads/$O"
        printf '%s\n' $A $F $B $K >"$T/kept"
        # A's messages, F's copies of them and its own; B's (stranded by the undo, except b1 and
        # b3: b4 unnamed); K's copies of S's and its own (s2, k1: on no kept branch now)
        printf '%s\n' "$a1" "$a2" "$a3" "$a1" "$a3" "$f1" "$b1" "$b3" "$s1" "$s2" "$k1" >"$T/named"
}

make_repo "$T/syn/.git"
gd=$T/syn/.git
compact "$gd" syn
[ "$(field keep_refs "$T/syn.out")" = 3 ] || { cat "$T/syn.out"; fail "syn: not 3 keep-refs (b3, s2, k1)"; }
for c in "$b3" "$s2" "$k1"; do
        [ "$(g "$gd" rev-parse -q --verify "refs/qgc/keep/$c")" = "$c" ] || fail "syn: no keep-ref for $c"
done
for c in "$b4" "$r1" "$r2" "$o1"; do
        g "$gd" cat-file -e "$c" 2>/dev/null && fail "syn: unnamed orphan $c not pruned"
done
[ ! -e "$gd/logs/refs/heads/$O" ] || fail "syn: the reflog left without a ref is still there"
[ "$(field reflogs_removed "$T/syn.out")" = 3 ] || fail "syn: not 3 reflogs removed (R, S, O)"
for id in $A $F $B $K; do
        [ ! -s "$gd/logs/refs/heads/$id" ] || fail "syn: the reflog of kept $id not emptied"
done

# a session leaves the index later: its keep-refs that no longer serve go
printf '%s\n' $A $F $B >"$T/kept"
printf '%s\n' "$a1" "$a2" "$a3" "$a1" "$a3" "$f1" "$b1" "$b3" >"$T/named"
"$RUN" compact "$gd" "$T/kept" "$T/named" >"$T/syn2.out"
[ "$(field result "$T/syn2.out")" = 1 ] || { cat "$T/syn2.out"; fail "syn2"; }
[ "$(field keep_refs "$T/syn2.out")" = 1 ] && [ "$(field keep_refs_removed "$T/syn2.out")" = 2 ] ||
        { cat "$T/syn2.out"; fail "syn2: keep-refs not 1 (b3), 2 removed"; }
check "$gd"
g "$gd" cat-file -e "$k1" 2>/dev/null && fail "syn2: k1 not pruned once K left the index"

# ---------------------------------------------------------------- hostile repositories
# kept GITDIR NAME WHY [MAX_BYTES]: compaction keeps the repository as is, saying WHY
kept() {
        snapshot "$1" >"$T/$2.snap0"
        "$RUN" compact "$1" "$T/kept" "$T/named" ${4:-} >"$T/$2.out"
        [ "$(field result "$T/$2.out")" = 0 ] || { cat "$T/$2.out"; fail "$2: not kept as is"; }
        field why "$T/$2.out" | grep -q "$3" || { cat "$T/$2.out"; fail "$2: the reason is not '$3'"; }
        snapshot "$1" >"$T/$2.snap1"
        cmp -s "$T/$2.snap0" "$T/$2.snap1" || fail "$2: a kept repository was changed"
}
h=0
hostile() { h=$((h + 1)); make_repo "$T/h$h/.git"; gd=$T/h$h/.git; }

hostile
ln -s "$(cat "$gd/refs/heads/$A")" "$gd/refs/heads/$R" 2>/dev/null || true
rm -f "$gd/refs/heads/$R" && ln -s ../../../elsewhere "$gd/refs/heads/$R"
kept "$gd" symlink "is a symlink"

hostile
mkdir -p "$T/other.git" && echo "$T/other.git/objects" >"$gd/objects/info/alternates"
kept "$gd" alternates "objects of another repository"

hostile
g "$gd" config core.fsmonitor "touch $T/pwned"
kept "$gd" fsmonitor "core.fsmonitor"

hostile
mkfifo "$gd/refs/heads/fifo"
kept "$gd" fifo "not a file or directory"

hostile
obj=$(g "$gd" rev-parse "$a2^{tree}")
rm -f "$gd/objects/$(echo "$obj" | cut -c1-2)/$(echo "$obj" | cut -c3-)"
kept "$gd" broken "git fsck fails before compaction"

hostile
kept "$gd" huge "over the limit" 100000

# a config include that blocks (a FIFO): git is killed at the deadline, nothing changed
hostile
mkfifo "$T/fifo"
g "$gd" config include.path "$T/fifo"
snapshot "$gd" >"$T/fifo.snap0"
start=$(date +%s)
"$RUN" compact "$gd" "$T/kept" "$T/named" 0 2000 >"$T/fifo.out"
[ "$(field result "$T/fifo.out")" = -62 ] || { cat "$T/fifo.out"; fail "fifo include: not -ETIME"; }
[ $(($(date +%s) - start)) -lt 30 ] || fail "fifo include: the deadline did not stop git"
snapshot "$gd" >"$T/fifo.snap1"
cmp -s "$T/fifo.snap0" "$T/fifo.snap1" || fail "fifo include: the repository was changed"

# hooks: never run (core.hooksPath=/dev/null); compaction goes on
hostile
printf '#!/bin/sh\ntouch %s/hooked\n' "$T" >"$gd/hooks/reference-transaction"
chmod +x "$gd/hooks/reference-transaction"
compact "$gd" hooks
[ ! -e "$T/hooked" ] || fail "hooks: a hook of the repository ran"

# replace refs and grafts: neutralised (what is pruned is decided on the real objects); the
# replace ref is another ref, kept as it is, and a root
hostile
fake=$(dc_commit "$gd" 11111111-0000-4000-8000-00000000000f fake "Initial checkpoint")
g "$gd" update-ref -d refs/heads/11111111-0000-4000-8000-00000000000f
g "$gd" update-ref "refs/replace/$a3" "$fake"
printf '%s\n' "$a3" >"$gd/info/grafts" # a3 without its parents: a2, a1 would look unreachable
printf '%s\n' $A $F $B $K >"$T/kept"
printf '%s\n' "$a3" "$f1" >"$T/named"
compact "$gd" replace
for c in "$a1" "$a2" "$fake"; do
        g "$gd" cat-file -e "$c" 2>/dev/null || fail "replace: $c pruned"
done
[ "$(g "$gd" rev-parse "refs/replace/$a3")" = "$fake" ] || fail "replace: the replace ref changed"
[ "$(cat "$T/pwned" 2>/dev/null)" = "" ] && [ ! -e "$T/pwned" ] || fail "a repository's command ran"
pass "t-0710: $n corpus repositories ($freed of $before bytes freed), synthetic and hostile ones"
