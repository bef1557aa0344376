#!/bin/sh
# The cold tier's directory is invisible to Qwen Code: with one archived session compressed into
# chats/archive/.qgc-cold/<id>.jsonl.zst (its original removed) and another archived plainly
# beside it, Qwen's own SessionService (tests/realqwen) lists and loads every other session,
# the plain archived one included, and neither lists nor trips over the compressed one.
# Needs node and npm (the npm registry), and the zstd command; SKIP otherwise.
. "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || judge_missing "Qwen Code" "zstd not installed: no compressed session to show it"
. "$(dirname "$0")/qwen-npm.sh"

tree=$(make_tree tree)
chats="$tree/projects/-srv-demo-scratch/chats"
cold=1a914264-8e49-442e-bc79-1cb2de9eae0c
plain=$(cd "$chats" && ls *.jsonl | head -1)
[ -f "$chats/archive/$cold.jsonl" ] && [ -n "$plain" ] || fail "the corpus changed: no archived session to compress"
mkdir "$chats/archive/.qgc-cold"
zstd -q -3 "$chats/archive/$cold.jsonl" -o "$chats/archive/.qgc-cold/$cold.jsonl.zst" || fail "zstd"
rm "$chats/archive/$cold.jsonl"
mv "$chats/$plain" "$chats/archive/$plain"

"$NPMDIR/qwen-check.sh" "$tree" > "$T/qwen.txt" 2>&1 || { cat "$T/qwen.txt"; fail "Qwen cannot read a tree with a compressed session"; }
grep -q "^PASS: 11 session(s) listed and loaded" "$T/qwen.txt" || { cat "$T/qwen.txt"; fail "Qwen did not list the 11 other sessions"; }
grep -q "0 active + 1 archived" "$T/qwen.txt" || { cat "$T/qwen.txt"; fail "Qwen did not list the plain archived session"; }
grep -q "$cold" "$T/qwen.txt" && { cat "$T/qwen.txt"; fail "Qwen saw the compressed session"; }
pass "Qwen lists and loads every session but the compressed one, and ignores chats/archive/.qgc-cold/"
