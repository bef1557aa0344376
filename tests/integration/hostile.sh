# hostile.sh: plant hostile entries in the tree $HOSTILE_TREE. Sourced by tests. Ids (36 chars):
P="$HOSTILE_TREE/projects/-srv-demo-api-server/chats"
ID_SYMLINK=11111111-1111-4111-8111-111111111111
ID_FIFO=22222222-2222-4222-8222-222222222222
ID_DIR=33333333-3333-4333-8333-333333333333
ID_FOREIGN=44444444-4444-4444-8444-444444444444
ID_EMPTY=55555555-5555-4555-8555-555555555555
ID_HUGE=66666666-6666-4666-8666-666666666666
ID_GLUED=77777777-7777-4777-8777-777777777777
ID_BADUTF=88888888-8888-4888-8888-888888888888
ID_MISMATCH=99999999-9999-4999-8999-999999999999
ID_NOTJSON=aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa
OUTSIDE="$(dirname "$HOSTILE_TREE")/outside-secret.jsonl"
rec() { # rec ID CWD TIMESTAMP
        printf '{"uuid":"u-%s","parentUuid":null,"sessionId":"%s","timestamp":"%s","type":"user","cwd":"%s","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}\n' "$1" "$1" "$3" "$2"
}
rec "$ID_SYMLINK" /srv/demo/api-server 2026-01-01T00:00:00.000Z > "$OUTSIDE"
ln -s "$OUTSIDE" "$P/$ID_SYMLINK.jsonl"
mkfifo "$P/$ID_FIFO.jsonl"
mkdir "$P/$ID_DIR.jsonl"
rec "$ID_FOREIGN" /srv/demo/webapp 2026-01-01T00:00:00.000Z > "$P/$ID_FOREIGN.jsonl"
: > "$P/$ID_EMPTY.jsonl"
python3 - "$P/$ID_HUGE.jsonl" "$ID_HUGE" <<'PY'
import sys
pad = "x" * (2 * 1024 * 1024)
open(sys.argv[1], "w").write('{"sessionId":"%s","cwd":"/srv/demo/api-server","timestamp":"2026-01-01T00:00:00.000Z","pad":"%s"}\n' % (sys.argv[2], pad))
PY
{ rec "$ID_GLUED" /srv/demo/api-server 2026-01-01T00:00:00.000Z | tr -d '\n'; rec "$ID_GLUED" /srv/demo/api-server 2026-01-01T00:00:01.000Z; } > "$P/$ID_GLUED.jsonl"
{ printf '\xff\xfe'; rec "$ID_BADUTF" /srv/demo/api-server 2026-01-01T00:00:00.000Z; } > "$P/$ID_BADUTF.jsonl"
rec 12345678-1234-4234-8234-123456789abc /srv/demo/api-server 2026-01-01T00:00:00.000Z > "$P/$ID_MISMATCH.jsonl"
printf 'this is not json\n' > "$P/$ID_NOTJSON.jsonl"
touch -h -d 2026-01-01 "$P"/*-*-*-*.jsonl
