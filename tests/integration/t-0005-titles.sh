#!/bin/sh
# Titles decide "titled by a person" exactly as with every title read. The text plan reads a
# transcript's title windows only when its mtime says max-age (or archive-max-age) could select
# it; the JSON plan reads every title. Both must give every session the same verb and reason,
# with any --jobs, including sessions titled by a person that a rule selected.
. "$(dirname "$0")/lib.sh"
D=$(dirname "$0")

tree=$(make_tree tree)
NOW=2027-04-01T00:00:00Z
CHATS="$tree/projects/-srv-demo-webapp/chats"
API="$tree/projects/-srv-demo-api-server/chats"

# title(FILE, TITLE, SOURCE): append a custom_title record as Qwen does
title() {
        printf '{"uuid":"t-%s","parentUuid":null,"sessionId":"x","timestamp":"2026-01-01T00:00:00.000Z","type":"system","subtype":"custom_title","systemPayload":{"customTitle":"%s","titleSource":"%s"}}\n' \
                "$2" "$2" "$3" >> "$1"
}
OLD_MANUAL=aefd2a51-f2fc-4eed-a29c-91292bb022bf     # webapp, idle past max-age
OLD_AUTO=8a7ded31-31b8-46e9-b4e0-9e1af37c0d0d       # api-server, idle past max-age
YOUNG_MANUAL=c7bab6d3-4d35-4ebb-b856-81c884008a1e  # webapp, made young below
[ -f "$CHATS/$OLD_MANUAL.jsonl" ] && [ -f "$API/$OLD_AUTO.jsonl" ] && [ -f "$CHATS/$YOUNG_MANUAL.jsonl" ] ||
        fail "corpus sessions missing"
title "$CHATS/$OLD_MANUAL.jsonl" "Keep me" manual
title "$API/$OLD_AUTO.jsonl" "Auto named" auto
title "$CHATS/$YOUNG_MANUAL.jsonl" "Young" manual
find "$tree" -exec touch -h -d 2026-11-01T00:00:00Z {} +
touch -d 2027-03-31T00:00:00Z "$CHATS/$YOUNG_MANUAL.jsonl"

for conf in "$QGC_TESTDATA/integration/empty.conf" "$QGC_TESTDATA/integration/titles.conf"; do
        name=$(basename "$conf" .conf)
        run_qgc --dry-run --json --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.json" ||
                fail "$name: json dry run failed"
        for j in 1 3; do
                run_qgc --dry-run --jobs $j --root "$tree" --now "$NOW" -c "$conf" > "$T/$name.$j.txt" ||
                        fail "$name: dry run --jobs $j failed"
                python3 "$D/textcheck.py" "$T/$name.json" "$T/$name.$j.txt" ||
                        fail "$name: the text plan (--jobs $j) differs from the JSON plan"
        done
        cmp -s "$T/$name.1.txt" "$T/$name.3.txt" || fail "$name: --jobs 1 and --jobs 3 differ"
        # the text plan shows short ids: the first 8 characters here
        om=$(echo "$OLD_MANUAL" | cut -c1-8) oa=$(echo "$OLD_AUTO" | cut -c1-8)
        grep -q "^  $om keep .*kept: titled by a person (a rule would select it: archive" "$T/$name.1.txt" ||
                fail "$name: the old session titled by a person is not kept: $(grep "$om" "$T/$name.1.txt")"
        grep -q "^  $oa would archive" "$T/$name.1.txt" ||
                fail "$name: an automatic title protected a session: $(grep "$oa" "$T/$name.1.txt")"
done
pass "titles: text plans (titles read only where a rule could act) equal the JSON plans (all read)"
