#!/bin/sh
# t-0700-metrics: --metrics-file writes node_exporter textfile metrics that pass promcheck.py
# (the exposition format: sample grammar, HELP and TYPE for every family, no duplicate series,
# Prometheus naming); the numbers match the run's summary; the file is replaced by rename with
# mode 0644 whatever the umask, no temporary file is left; an invalid policy gives exit code 78
# in the file; a metrics file that cannot be written is a warning that does not change the exit
# status; --metrics-file with --dry-run is a usage error. Root mode (one series per user) is
# checked under a real systemd by t-0500-nspawn.sh. The checker itself rejects broken files.
# A compressing run (compress-after) gives the sessions compressed and their bytes before and
# after, the sums of its journal entries.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
PC="$QGC_TESTDATA/../integration/promcheck.py"

# the checker can fail
cat >"$T/broken.prom" <<'PROM'
# HELP qgc_a_total A counter.
# TYPE qgc_a_total gauge
qgc_a_total{user="x"} 1
qgc_a_total{user="x"} 2
qgc_b 1
qgc_c{user="unterminated} 1
PROM
python3 "$PC" "$T/broken.prom" 2>"$T/broken.err" && fail "promcheck accepted a broken file"
for e in "_total on a gauge" "duplicate series" "qgc_b: no HELP" "qgc_b: no TYPE" "not a sample line"; do
        grep -q "$e" "$T/broken.err" || { cat "$T/broken.err"; fail "promcheck missed: $e"; }
done

tree=$(make_tree tree)
cat >"$T/policy.conf" <<'CONF'
defaults = {
        action = "archive";
        max-age = "12h";
        min-age = "1h";
};
tree = {
        max-size = "1G";
        keep-free = "1%";
};
CONF
mkdir "$T/textfile"
M="$T/textfile/qgc.prom"
n_sessions=$(ls "$tree"/projects/*/chats/*.jsonl "$tree"/projects/*/chats/archive/*.jsonl | wc -l)

(umask 077; timeout 60 "$QGC" -c "$T/policy.conf" --root "$tree" --log-target stderr \
        --metrics-file "$M" >"$T/out" 2>"$T/err") || { cat "$T/err"; fail "the run failed"; }
archived=$(sed -n 's/^qgc: archived \([0-9]*\)[ ,].*/\1/p' "$T/out")
[ "${archived:-0}" -gt 0 ] || { cat "$T/out"; fail "the run archived nothing"; }
python3 "$PC" "$M" \
        'qgc_last_run_exit_code==0' 'qgc_last_run_timestamp_seconds>1700000000' \
        'qgc_last_run_duration_seconds>=0' \
        "qgc_last_run_actions{outcome=\"archived\"}==$archived" \
        'qgc_last_run_actions{outcome="failed"}==0' 'qgc_last_run_archived_bytes>0' \
        'qgc_last_run_freed_bytes==0' \
        "qgc_sessions==$n_sessions" "qgc_sessions{verb=\"archive\",rule=\"max-age\"}==$archived" \
        'qgc_held_back_sessions{protection="keep-latest"}>0' \
        "qgc_tree_size_bytes{tree=\"$tree\"}>0" "qgc_filesystem_size_bytes{tree=\"$tree\"}>0" \
        "qgc_filesystem_avail_bytes{tree=\"$tree\"}>0" \
        'qgc_policy_tree_max_size_bytes==1073741824' 'qgc_policy_keep_free_bytes>0' \
        "qgc_sessions{user=\"$(id -un)\"}?" || { cat "$M"; fail "the metrics file"; }
# debian/postrm removes a metrics file at purge only when its first line is qgc's: that line
pat=$(sed -n "s/.*head -n 1 -- \"\$1\" | grep -q '\(.*\)' || return 0$/\1/p" "$QGC_SRCDIR/debian/postrm")
[ -n "$pat" ] || fail "debian/postrm tests no first line"
head -n 1 "$M" | grep -q "$pat" || fail "debian/postrm would not know the file qgc wrote: $(head -n 1 "$M")"
[ "$(stat -c %a "$M")" = 644 ] || fail "mode $(stat -c %a "$M"), not 644, under umask 077"
[ "$(ls "$T/textfile")" = qgc.prom ] || fail "left in the directory: $(ls "$T/textfile")"
pass "a run's metrics: the format, the numbers of its summary, mode 0644"

# replaced by rename: a new inode, never the old file rewritten in place
ino=$(stat -c %i "$M")
timeout 60 "$QGC" -c "$T/policy.conf" --root "$tree" --log-target stderr --quiet \
        --metrics-file "$M" 2>"$T/err" || { cat "$T/err"; fail "the second run failed"; }
[ "$(stat -c %i "$M")" != "$ino" ] || fail "the metrics file was rewritten in place"
python3 "$PC" "$M" 'qgc_last_run_actions{outcome="archived"}==0' 'qgc_last_run_exit_code==0' ||
        fail "the second run's metrics"
pass "the file is replaced by rename"

# an invalid policy: nothing done, exit 78 in the file
printf 'defaults = {\n        max-age = "soon";\n};\n' >"$T/bad.conf"
set +e
timeout 60 "$QGC" -c "$T/bad.conf" --root "$tree" --metrics-file "$M" 2>"$T/err"
rc=$?
set -e
[ $rc = 78 ] || fail "invalid policy: exit $rc"
python3 "$PC" "$M" 'qgc_last_run_exit_code==78' 'qgc_sessions!' || { cat "$M"; fail "invalid policy's metrics"; }
pass "an invalid policy: qgc_last_run_exit_code 78"

# a file that cannot be written: a warning, the exit status of the run
set +e
timeout 60 "$QGC" -c "$T/policy.conf" --root "$tree" --log-target stderr --quiet \
        --metrics-file "$T/no/such/dir/qgc.prom" 2>"$T/err"
rc=$?
set -e
[ $rc = 0 ] || { cat "$T/err"; fail "an unwritable metrics file changed the exit status to $rc"; }
grep -q "^qgc: --metrics-file: cannot create a file next to '$T/no/such/dir/qgc.prom': " "$T/err" ||
        { cat "$T/err"; fail "no warning about the metrics file"; }
set +e
"$QGC" --dry-run --root "$tree" --metrics-file "$M" >/dev/null 2>"$T/err"
rc=$?
set -e
[ $rc = 64 ] || fail "--metrics-file with --dry-run: exit $rc, not 64"
pass "an unwritable file warns; --dry-run refuses --metrics-file"

# deletions: freed bytes, and the sessions the per-run deletion limit held back
tree2=$(make_tree tree2)
cat >"$T/delete.conf" <<'CONF'
defaults = {
        action = "delete";
        max-age = "12h";
        min-age = "1h";
        max-deletions = 1;
};
CONF
timeout 60 "$QGC" -c "$T/delete.conf" --root "$tree2" --log-target stderr --quiet \
        --metrics-file "$M" 2>"$T/err" || { cat "$T/err"; fail "the deleting run failed"; }
python3 "$PC" "$M" 'qgc_last_run_actions{outcome="deleted"}==1' 'qgc_last_run_freed_bytes>0' \
        'qgc_held_back_sessions{protection="blast-radius"}>0' \
        'qgc_sessions{verb="skip",rule="blast-radius"}>0' || { cat "$M"; fail "the deleting run's metrics"; }
pass "deletions: freed bytes; the deletion limit's held-back sessions"

# compression (compress-after, the cold tier): sessions compressed, their bytes before and after,
# the same numbers as the journal's entry of each compression
tree4=$(make_tree tree4)
cat >"$T/compress.conf" <<'CONF'
defaults = { action = "archive"; max-age = "90d"; compress-after = "90d"; keep-latest = 0;
             max-deletions-percent = 100; };
CONF
timeout 60 "$QGC" -c "$T/compress.conf" --root "$tree4" --now 2027-04-01T00:00:00Z \
        --log-file "$T/compress.log" --quiet --metrics-file "$M" 2>"$T/err" ||
        { cat "$T/err"; fail "the compressing run failed"; }
n_comp=$(grep -c "QGC_ACTION=compressed " "$T/compress.log" || true)
[ "$n_comp" -gt 0 ] || { cat "$T/compress.log"; fail "the run compressed nothing"; }
orig_b=$(sed -n 's/.*QGC_ACTION=compressed .* QGC_ORIGINAL_BYTES=\([0-9]*\) .*/\1/p' "$T/compress.log" |
        awk '{ s += $1 } END { print s }')
comp_b=$(sed -n 's/.*QGC_ACTION=compressed .* QGC_COMPRESSED_BYTES=\([0-9]*\).*/\1/p' "$T/compress.log" |
        awk '{ s += $1 } END { print s }')
python3 "$PC" "$M" "qgc_last_run_actions{outcome=\"compressed\"}==$n_comp" \
        "qgc_last_run_compressed_original_bytes==$orig_b" "qgc_last_run_compressed_bytes==$comp_b" \
        'qgc_last_run_compressed_bytes>0' 'qgc_last_run_exit_code==0' ||
        { cat "$M"; fail "the compressing run's metrics ($n_comp, $orig_b, $comp_b)"; }
python3 "$PC" "$T/textfile/qgc.prom" >/dev/null || fail "promcheck"
pass "compression: sessions compressed, bytes before and after, as journalled"

# the admin's key: admin.metrics-file in the system file, for root's real runs (the timer's)
if [ "$(id -u)" = 0 ]; then
        tree3=$(make_tree tree3)
        M3="$T/textfile/key.prom"
        printf 'defaults = { max-age = "12h"; min-age = "1h"; };\nadmin = { metrics-file = "%s"; };\n' \
                "$M3" > "$T/system.conf"
        HOME="$T" timeout 60 "$QGC" --system-config "$T/system.conf" --root "$tree3" \
                --log-target stderr --quiet 2>"$T/err" || { cat "$T/err"; fail "the run with the key failed"; }
        python3 "$PC" "$M3" 'qgc_last_run_exit_code==0' || { cat "$M3"; fail "metrics-file key"; }
        HOME="$T" timeout 60 "$QGC" --system-config "$T/system.conf" check-config --explain |
                grep -q "metrics-file .*key.prom" || fail "--explain does not show metrics-file"
        printf 'admin = { metrics-file = "relative.prom"; };\n' > "$T/bad-key.conf"
        set +e
        timeout 60 "$QGC" -c "$T/bad-key.conf" check-config 2>"$T/err"
        rc=$?
        set -e
        [ $rc = 78 ] && grep -q "bad-key.conf:1: .*metrics-file" "$T/err" ||
                { cat "$T/err"; fail "a relative metrics-file: exit $rc"; }
        # a file the key names that cannot be written: a warning that names the key and where it
        # was set (issue 24.9: it named --metrics-file, which nobody passed), the run's exit status
        printf 'defaults = { max-age = "12h"; min-age = "1h"; };\nadmin = { metrics-file = "%s"; };\n' \
                "$T/no/such/dir/qgc.prom" > "$T/system-bad.conf"
        HOME="$T" timeout 60 "$QGC" --system-config "$T/system-bad.conf" --root "$tree3" \
                --log-target stderr --quiet 2>"$T/err" || { cat "$T/err"; fail "an unwritable key's file failed the run"; }
        grep -q "^qgc: admin\.metrics-file ($T/system-bad\.conf:2): cannot create a file next to '$T/no/such/dir/qgc.prom': " \
                "$T/err" || { cat "$T/err"; fail "the warning does not name admin.metrics-file and its file"; }
        # on a read-only file system (the unit's ProtectSystem=strict): which directory the unit allows
        if unshare -m true 2>/dev/null; then
                mkdir -p "$T/ro"
                printf 'defaults = { max-age = "12h"; min-age = "1h"; };\nadmin = { metrics-file = "%s"; };\n' \
                        "$T/ro/qgc.prom" > "$T/system-ro.conf"
                HOME="$T" unshare -m sh -c \
                        'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec timeout 60 "$@"' \
                        sh "$T/ro" "$QGC" --system-config "$T/system-ro.conf" --root "$tree3" --log-target stderr \
                        --quiet 2>"$T/err" ||
                        { cat "$T/err"; fail "a read-only metrics directory failed the run"; }
                grep -q "^qgc: admin\.metrics-file ($T/system-ro\.conf:2): .*Read-only file system (qgc\.service may write only under /var/lib/prometheus/node-exporter; .*ReadWritePaths=" \
                        "$T/err" || { cat "$T/err"; fail "a read-only file system: no hint of ReadWritePaths="; }
        else
                part_skipped "a read-only metrics directory (no mount namespace)"
        fi
        pass "admin.metrics-file: the system file's key writes the metrics of root's runs; its failures name it"
fi

# doc/fleet.md has a query for every event of the catalog
if [ -f "$QGC_TESTDATA/../../doc/fleet.md" ]; then
        for id in $(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$QGC_TESTDATA/../../systemd/qgc.catalog"); do
                grep -q "journalctl MESSAGE_ID=$id" "$QGC_TESTDATA/../../doc/fleet.md" ||
                        fail "doc/fleet.md has no query for MESSAGE_ID=$id"
        done
        pass "doc/fleet.md: a journalctl MESSAGE_ID= query for every catalog entry"
fi
finish
