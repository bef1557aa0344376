#!/bin/sh
# t-0210-man: both man pages lint clean (`mandoc -Tlint -W warning` prints nothing), and qgc(8)
# documents every long option of `qgc --help`. SKIP (77) without mandoc.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"

command -v mandoc >/dev/null 2>&1 || skip "mandoc is not installed"

for m in man/qgc.8 man/qgc.conf.5; do
        f="$QGC_SRCDIR/$m"
        [ -s "$f" ] || fail "$m is missing or empty"
        head -c 200 "$f" | grep -q '^\.\(Dd\|TH\)' || fail "$m is not a man page"
        out=$(mandoc -Tlint -W warning "$f" 2>&1) || true
        [ -z "$out" ] || { echo "$out" >&2; fail "$m: mandoc -Tlint warnings"; }
        mandoc -Tascii "$f" > "$T/out.txt" 2>&1 || fail "$m: mandoc cannot render it"
        [ "$(wc -l < "$T/out.txt")" -gt 20 ] || fail "$m renders to almost nothing"
done
pass "mandoc -Tlint: qgc.8 and qgc.conf.5 clean"

# Macros that swallow the words after them render clean with no lint warning (issue 24.12c:
# ".Pq with Fl j , as JSON" rendered "(with -j, -as -JSON)", and ".Pq Ql a No or Ql b" a quote
# inside a quote): no word of two letters or more behind a single dash (qgc has no such option),
# and no quote opened twice before it closes.
for m in man/qgc.8 man/qgc.conf.5; do
        mandoc -Tascii "$QGC_SRCDIR/$m" | col -b > "$T/render.txt"
        ! grep -n -E "(^|[ (\`])-[A-Za-z][A-Za-z]+" "$T/render.txt" || fail "$m: a macro made words into flags"
        ! grep -n "\`[^']*\`" "$T/render.txt" || fail "$m: a quote opened inside a quote"
done
pass "qgc.8 and qgc.conf.5 render without flags or quotes swallowing words"

# A linter that never complains proves nothing: a planted error must be reported.
printf '.Dd $Mdocdate$\n.Dt X 8\n.Os\n.Sh NAME\n.Nm x\n.Nd y\n.Sh BOGUS\n.Bl -tag\n.It a\n' > "$T/bad.8"
[ -n "$(mandoc -Tlint -W warning "$T/bad.8" 2>&1)" ] || fail "mandoc did not flag a broken page"

# The documents the man pages cite are installed (issue 24.9: qgc(8) cited doc/*.md, not on the
# system): every /usr/share/doc/qgc/NAME is a file of Makefile.am's dist_doc_DATA (installed in
# $(docdir); the package keeps *.md uncompressed), and no page names a path of the source tree.
cited=$(cat "$QGC_SRCDIR/man/qgc.8" "$QGC_SRCDIR/man/qgc.conf.5" | grep -o '/usr/share/doc/qgc/[^ )]*' | sort -u)
[ -n "$cited" ] || fail "the man pages cite no installed document"
docs=$(sed -n 's/^dist_doc_DATA = //p' "$QGC_SRCDIR/Makefile.am")
for p in $cited; do
        n=${p#/usr/share/doc/qgc/}
        found=
        for d in $docs; do [ "$(basename "$d")" = "$n" ] && [ -f "$QGC_SRCDIR/$d" ] && found=$d; done
        [ -n "$found" ] || fail "the man pages cite $p, which is not installed (dist_doc_DATA: $docs)"
done
! grep -n '^\.Pa doc/\|[^/]doc/[a-z-]*\.md' "$QGC_SRCDIR/man/qgc.8" "$QGC_SRCDIR/man/qgc.conf.5" ||
        fail "a man page cites a file of the source tree (doc/*.md)"
grep -q -- '-X\.md' "$QGC_SRCDIR/debian/rules" || fail "debian/rules compresses the cited *.md files"
pass "the man pages cite installed documents only: $(echo $cited)"

# Every long option and command of `qgc --help` is documented in qgc(8).
if [ -x "$QGC" ]; then
        mandoc -Tascii "$QGC_SRCDIR/man/qgc.8" | col -b > "$T/qgc8.txt" 2>/dev/null ||
                mandoc -Tascii "$QGC_SRCDIR/man/qgc.8" | sed 's/.\x08//g' > "$T/qgc8.txt"
        "$QGC" --help > "$T/help.txt" || fail "qgc --help failed"
        for o in $(grep -o -- '--[a-z][a-z-]*' "$T/help.txt" | sort -u); do
                grep -q -- "$o" "$T/qgc8.txt" || fail "qgc(8) does not document $o"
        done
        # ... and in its SYNOPSIS (issue 24.12b: --changes, --jobs, --metrics-file were missing),
        # by its long name or its short letter, but -h and -V
        sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' "$T/qgc8.txt" > "$T/synopsis.txt"
        sed -n 's/^  *\(-\([a-zA-Z]\), \)\{0,1\}--\([a-z][a-z-]*\).*/\2 \3/p' "$T/help.txt" > "$T/opts.txt"
        [ "$(wc -l < "$T/opts.txt")" -gt 10 ] || fail "cannot read the options of qgc --help"
        while read -r s l; do
                [ -z "$l" ] && { l=$s; s=; }
                case $l in help | version) continue ;; esac
                grep -q -- "--$l\b" "$T/synopsis.txt" && continue
                [ -n "$s" ] && grep -q -- "\[-[a-zA-Z]*$s[a-zA-Z]*\]\|\[-$s \|^ *qgc -$s " "$T/synopsis.txt" && continue
                fail "the SYNOPSIS of qgc(8) lacks --$l${s:+ (-$s)}"
        done < "$T/opts.txt"
        for c in status check-config restore; do
                grep -q "$c" "$T/qgc8.txt" || fail "qgc(8) does not document '$c'"
        done
        for code in 0 1 64 75 78; do
                grep -q "^ *$code[[:space:]]" "$T/qgc8.txt" || fail "qgc(8) does not document exit code $code"
        done
        pass "qgc(8) documents every option, command and exit code"
fi
exit 0
