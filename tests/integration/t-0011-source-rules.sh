#!/bin/sh
# t-0011-source-rules: rules of the source that no compiler checks. src/ holds one folder per
# layer, bottom to top: base, model, config, policy, scan, plan, qwen, deepcode,
# exec, cli.
#   - layers: a file's #include "x.h" resolves to the folder holding x.h, and a call (an object
#     of libqgc.a or of qgc's main using a symbol another object defines, by nm) to the folder
#     of the defining object; either must be the file's own folder or one before it.
#   - no circle between files over the whole of src/ (a file: x.c with its x.h), in the graph
#     of the #include lines and the calls together.
#   - the policy is pure: no object of src/policy/ uses an I/O symbol of libc (IO_SYMBOLS).
#   - the store boundary: no file of a store-neutral folder (NEUTRAL) includes a header of a
#     store's folder (STORES) or calls its functions; it reaches a store through Tree.store
#     (model/store.h) alone. Nor does a file of one store's folder include a header of another
#     store's folder or call its functions: what two stores share is in base/ or model/.
#   - nothing exported for tests: every global function (T) of libqgc.a is used by another
#     object of libqgc.a or of qgc's main; one used only in its own file should be static.
#   - every function an object of src/ exports is prefixed with its file's name (x-y.c: x_y_),
#     and so is every function a header of src/ defines (static inline in x-y.h: x_y_), which
#     no object exports.
#   - every .c and .h under src/ is named in doc/architecture.md, and opens with a comment
#     "/* NAME: what it owns".
#   - every file (`x.c`, `x.[ch]`) and function (`x_y()`) that DEVELOPERS.md and
#     doc/architecture.md name in backticks exists (a function: defined in src/ or tests/).
#   - errno becomes text only through log_errno_to_string() (log.c): strerror() is not thread-safe,
#     and the scan's worker threads report errors.
#   - one FNV-1a (hashmap.c): no other copy of its offset basis or prime, right or wrong.
#   - one UTF-8 decoder (utf8.c), one days_from_civil and ISO 8601 parser (js.c).
#   - one case-insensitive comparison: util.c's util_ascii_strcasecmp() family (no locale); the C
#     library's strcasecmp()/tolower() nowhere.
# No rule has an exception list: a test reaches qgc through what qgc itself calls (the
# executor through actions_run(): tests/common/run-plan.h). Each rule is first checked on a
# planted violation, so a rule that never fires fails. Every rule runs and prints each violation (file, edge, symbol) before
# the test fails.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?QGC_SRCDIR must name the source tree}"
LAYERS="base model config policy scan plan qwen deepcode exec cli"
# The folders of the stores, and the folders of the core that reach them through store.h only.
STORES="qwen deepcode"
NEUTRAL="policy scan plan exec"
# The I/O of libc: opening, reading, writing, asking about and changing files, directories and
# terminals. With _FORTIFY_SOURCE and large-file builds they appear as __NAME_chk, __NAME_2 and
# NAME64, which io_symbol matches too.
IO_SYMBOLS="open openat fopen fdopen opendir fdopendir read pread readv write pwrite writev
        printf fprintf dprintf vfprintf fputs fputc puts putchar fwrite fread fgets getline
        stat fstat fstatat lstat statx access faccessat readlink readlinkat
        unlink unlinkat rename renameat renameat2 mkdir mkdirat rmdir link linkat symlink"

broken=""
# check NAME CMD...: CMD prints one violation a line; none is a PASS. A broken rule is
# reported, and the test fails after every rule ran.
check() {
        name=$1
        shift
        if ! "$@" > "$T/violations"; then
                echo "$name: the check could not run" >&2
                broken="$broken; $name"
        elif [ -s "$T/violations" ]; then
                echo "rule broken: $name" >&2
                sed 's/^/        /' "$T/violations" >&2
                broken="$broken; $name"
        else
                pass "$name"
        fi
}
# planted WHAT CMD...: CMD must report WHAT (a planted violation), or the rule never fires
planted() {
        what=$1
        shift
        "$@" > "$T/planted" 2> /dev/null || true
        grep -q -- "$what" "$T/planted" || fail "a planted violation was not reported: $what"
}

# files SRC: "folder/name" of every .c and .h of SRC/src
files() {
        ( cd "$1/src" && for f in */*.c */*.h; do [ -e "$f" ] && echo "$f"; done )
}

# rule SRC REGEX ALLOWED-FILE...: REGEX matches in no src/*/*.[ch] but the allowed ones
rule() {
        src=$1 re=$2
        shift 2
        ( cd "$src/src" && grep -nE "$re" -- $(files "$src") /dev/null ) | while IFS=: read -r f rest; do
                ok=0
                for a in "$@"; do [ "${f##*/}" = "$a" ] && ok=1; done
                [ $ok = 1 ] || echo "src/$f:$rest"
        done
}

# includes SRC: "FROM TO HOW" for each #include "x.h" of SRC/src that names a header of
# SRC/src: FROM and TO are folder/name without the extension (a file and its header are one)
includes() {
        ( cd "$1/src" && ls */*.h ) > "$T/headers"
        ( cd "$1/src" && grep -Hn '^#include "' -- $(files "$1") /dev/null ) |
        sed 's/^\([^:]*\):\([0-9]*\):#include "\([^"]*\)".*/\1 \3 \2/' |
        awk 'NR == FNR { h = $1; sub(/.*\//, "", h); dir[h] = $1; next }
             ($2 in dir) { f = $1; t = dir[$2]; sub(/\.[ch]$/, "", f); sub(/\.[ch]$/, "", t)
                           if (f != t) print f, t, "src/" $1 ":" $3 " #include \"" $2 "\"" }' "$T/headers" -
}

# symbols SRC OBJECT...: "NODE TYPE SYMBOL" for each symbol nm lists in the objects and
# archives, NODE the folder/name of the object's source (X.o is the object of SRC/src/*/X.c)
symbols() {
        src=$1
        shift
        files "$src" | grep '\.c$' > "$T/sources"
        nm -A "$@" | awk 'NR == FNR { b = $1; sub(/.*\//, "", b); sub(/\.c$/, "", b)
                                       n = $1; sub(/\.c$/, "", n); node[b] = n; next }
                {
                        k = split($1, p, ":"); obj = p[k - 1]; sub(/.*\//, "", obj)
                        sub(/\.o$/, "", obj)
                        if (!(obj in node)) next
                        print node[obj], $2, $3
                }' "$T/sources" -
}

# calls SYMS: "FROM TO SYMBOL" for each symbol an object uses (U) and another defines
calls() {
        awk '$2 ~ /^[TDRBCV]$/ { def[$3] = $1; next }
             $2 == "U" { k++; uo[k] = $1; us[k] = $3 }
             END { for (i = 1; i <= k; i++)
                       if ((us[i] in def) && def[us[i]] != uo[i]) print uo[i], def[us[i]], us[i] }' "$1"
}

# upward EDGES: the edges "FROM TO HOW" whose TO is in a folder after FROM's
upward() {
        awk -v layers="$LAYERS" 'BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
             { a = $1; b = $2; sub(/\/.*/, "", a); sub(/\/.*/, "", b)
               if (rank[b] > rank[a]) {
                       how = $0; sub(/^[^ ]* [^ ]* /, "", how)
                       print "src/" $1 " (" a "/) -> src/" $2 " (" b "/, above): " how
               } }' "$1"
}
# layer_calls EDGES: the same for calls ("calls SYMBOL()")
layer_calls() {
        awk '{ print $1, $2, "calls " $3 "()" }' "$1" > "$T/lc"
        upward "$T/lc"
}

# crossing EDGES: the edges "FROM TO HOW" from a store-neutral folder into a store's
crossing() {
        awk -v core="$NEUTRAL" -v stores="$STORES" '
             BEGIN { n = split(core, l, " "); for (i = 1; i <= n; i++) neutral[l[i]] = 1
                     n = split(stores, l, " "); for (i = 1; i <= n; i++) store[l[i]] = 1 }
             { a = $1; b = $2; sub(/\/.*/, "", a); sub(/\/.*/, "", b)
               if ((a in neutral) && (b in store)) {
                       how = $0; sub(/^[^ ]* [^ ]* /, "", how)
                       print "src/" $1 " (" a "/, store-neutral) -> src/" $2 " (" b "/, a store): " how
               } }' "$1"
}

# cross_store EDGES: the edges "FROM TO HOW" from one store's folder into another store's
cross_store() {
        awk -v stores="$STORES" '
             BEGIN { n = split(stores, l, " "); for (i = 1; i <= n; i++) store[l[i]] = 1 }
             { a = $1; b = $2; sub(/\/.*/, "", a); sub(/\/.*/, "", b)
               if ((a in store) && (b in store) && a != b) {
                       how = $0; sub(/^[^ ]* [^ ]* /, "", how)
                       print "src/" $1 " (" a "/, a store) -> src/" $2 " (" b "/, another store): " how
               } }' "$1"
}

# circles EDGES: each set of files in a circle (a strongly connected component of the graph of
# "FROM TO HOW" edges, Tarjan), with its edges and how each is made
circles() {
        awk '{ h = $0; sub(/^[^ ]* [^ ]* /, "", h)
               if (!(($1, $2) in how)) { how[$1, $2] = h; nadj[$1]++; adj[$1, nadj[$1]] = $2 }
               else more[$1, $2]++
               node[$1] = 1; node[$2] = 1 }
             function visit(v,    i, w) {
                     idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
                     for (i = 1; i <= nadj[v]; i++) {
                             w = adj[v, i]
                             if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
                             else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
                     }
                     if (low[v] == idx[v]) {
                             n = 0
                             do { w = stack[sp--]; on[w] = 0; comp[++n] = w; incomp[w] = v } while (w != v)
                             if (n > 1) {
                                     line = "circle between"
                                     for (i = n; i >= 1; i--) line = line " src/" comp[i]
                                     print line ":"
                                     for (i = n; i >= 1; i--) for (j = 1; j <= nadj[comp[i]]; j++)
                                             if (incomp[adj[comp[i], j]] == v)
                                                     print "    src/" comp[i] " -> src/" adj[comp[i], j] ": " how[comp[i], adj[comp[i], j]] \
                                                           (more[comp[i], adj[comp[i], j]] ? " (and " more[comp[i], adj[comp[i], j]] " more)" : "")
                             }
                     }
             }
             END { for (v in node) if (!(v in idx)) visit(v) }' "$1"
}

# impure SYMS: each I/O symbol an object of policy/ uses
impure() {
        awk -v io="$IO_SYMBOLS" 'BEGIN { n = split(io, l, /[ \n\t]+/); for (i = 1; i <= n; i++) if (l[i] != "") s[l[i]] = 1 }
             $1 ~ /^policy\// && $2 == "U" {
                     b = $3; sub(/^__/, "", b); sub(/(_chk|_2)$/, "", b); sub(/64$/, "", b)
                     if (b in s) print "src/" $1 ".c uses " $3 "() (I/O: the policy is pure)"
             }' "$1"
}

# unused_exports SRC LIBSYMS ALLSYMS: each function the library exports (T in LIBSYMS) that no
# other object (ALLSYMS: the library's and qgc's main's) uses: used in its own file only (the
# object's relocations, or its name in the file's code): it should be static; else nothing of
# qgc uses it (only tests, or nobody).
unused_exports() {
        src=$1
        awk 'NR == FNR { if ($2 == "U") used[$3] = 1; next }
             $2 == "T" && !($3 in used) { print $1, $3 }' "$3" "$2" | sort -u |
        while read -r node sym; do
                if grep -v '^ *\(/\*\|\*\)' "$src/src/$node.c" | grep -w -- "$sym" |
                   grep -qv "^[a-zA-Z_][^(]*[ *]$sym(.*[^;]$"; then
                        echo "src/$node.c: $sym() is used only in its own file: make it static"
                else
                        echo "src/$node.c: $sym() is used by nothing in qgc (only tests, or nobody)"
                fi
        done
}

# unprefixed SYMS: each function an object exports (T) whose name does not start with its file's
# (x-y.c: x_y_, or is x_y itself); main() is the program's
unprefixed() {
        awk '$2 == "T" && $3 != "main" {
                f = $1; sub(/.*\//, "", f); gsub(/-/, "_", f)
                if ($3 != f && substr($3, 1, length(f) + 1) != f "_")
                        print "src/" $1 ".c: " $3 "() is not named after its file (" f "_)"
             }' "$1"
}

# unprefixed_inline SRC: each function a header of SRC/src defines (static inline) whose name
# does not start with the header's (x-y.h: x_y_)
unprefixed_inline() {
        files "$1" | grep '\.h$' | while read -r f; do
                b=${f##*/}
                b=$(printf '%s' "${b%.h}" | tr - _)
                grep -oE 'static inline [^(]*\(' "$1/src/$f" | sed 's/($//; s/.*[ *]//' |
                while read -r fn; do
                        case $fn in
                        "$b" | "$b"_*) ;;
                        *) echo "src/$f: $fn() is not named after its file (${b}_)" ;;
                        esac
                done
        done
}

# unheaded SRC: each .c and .h of SRC/src whose first line is not "/* NAME: " (what it owns)
unheaded() {
        files "$1" | while read -r f; do
                head -n 1 "$1/src/$f" | grep -qF "/* ${f##*/}: " ||
                        echo "src/$f does not open with /* ${f##*/}: what it owns"
        done
}

# undocumented SRC DOC: each .c and .h of SRC/src that DOC does not name (`x.c`, `x.h`, `x.[ch]`)
undocumented() {
        grep -o '`[^`]*`' "$2" | tr -d '`' | tr ', ' '\n\n' | sed 's/.*\///' |
        awk '/\.\[ch\]$/ { b = $0; sub(/\.\[ch\]$/, "", b); print b ".c"; print b ".h"; next }
             /\.[ch]$/ { print }' | sort -u > "$T/documented"
        files "$1" | while read -r f; do
                grep -qxF -- "${f##*/}" "$T/documented" || echo "src/$f is not named in ${2##*/}"
        done
}

# unnamed SRC DOC: each file (`x.c`, `x.h`, `x.[ch]`, `dir/x*.c`) and function (`x_y()`) DOC
# names in backticks that SRC does not have: a file by its path under SRC when the name has a
# folder, else by its name anywhere in SRC (build folders _* and .git aside); a function by a
# line of SRC/src or SRC/tests that defines or declares it ("TYPE name(" at the start of a line,
# or "#define name("). Library calls (`poll()`) have no "_" and are not looked up.
unnamed() {
        tr '\n' ' ' < "$2" | grep -o '`[^`]*`' | tr -d '`' | tr ' ,;' '\n\n\n' | sort -u > "$T/named"
        grep -E '^[A-Za-z0-9_./*-]+\.([ch]|\[ch\])$' "$T/named" | while read -r f; do
                case $f in
                */*) ( cd "$1" && set -- $f && [ -e "$1" ] ) ;;
                *) find "$1" \( -path "$1/_*" -o -path "$1/.git" \) -prune -o -name "$f" -print |
                   grep -q . ;;
                esac || echo "${2##*/} names $f, which is not in the source tree"
        done
        sed -n 's/^\([a-z][a-z0-9]*_[a-z0-9_]*\)()$/\1/p' "$T/named" | while read -r fn; do
                grep -rsqE "^([A-Za-z_].*[^A-Za-z0-9_]|#define )$fn\(" --include='*.c' --include='*.h' \
                        "$1/src" "$1/tests" ||
                        echo "${2##*/} names $fn(), which no file of src/ or tests/ defines"
        done
}

# --- each rule fires on a planted violation
P=$T/plant
mkdir -p "$P/src/base" "$P/src/policy" "$P/src/cli" "$P/src/qwen" "$P/src/deepcode" "$P/src/scan" "$P/doc"
printf 'x = strerror(e);\n' > "$P/src/base/bad.c"
planted "bad.c:1" rule "$P" '(^|[^_a-z])strerror\(' log.c log.h
# base/low.c includes and calls cli/high (up); cli/a and cli/b include and call each other;
# policy/pure.c opens a file; cli/unused.c exports a function nobody calls, and one only it calls
printf 'int high(void);\n' > "$P/src/cli/high.h"
printf '#include "high.h"\nint high(void) { return 1; }\n' > "$P/src/cli/high.c"
printf 'int low(void);\n' > "$P/src/base/low.h"
printf '#include "low.h"\n#include "high.h"\nint low(void) { return high(); }\n' > "$P/src/base/low.c"
printf '/* a.h: a */\nint a(void);\nstatic inline int a_ok(void) { return 1; }\nstatic inline const char *other_fn(void) { return ""; }\n' > "$P/src/cli/a.h"
printf 'int b(void);\n' > "$P/src/cli/b.h"
printf '#include "a.h"\n#include "b.h"\nint a(void) { return b(); }\n' > "$P/src/cli/a.c"
printf '#include "b.h"\n#include "a.h"\nint b(void) { return a(); }\n' > "$P/src/cli/b.c"
printf '#include <fcntl.h>\nint pure(void) { return open("/", O_RDONLY); }\n' > "$P/src/policy/pure.c"
printf 'int unused_fn(void) { return 1; }\nint self_fn(void) { return 2; }\nint self_user(void) { return self_fn(); }\n' \
        > "$P/src/cli/unused.c"
# scan/walk.c (store-neutral) includes and calls qwen/qw (a store's)
printf 'int qw(void);\n' > "$P/src/qwen/qw.h"
printf '#include "qw.h"\nint qw(void) { return 3; }\n' > "$P/src/qwen/qw.c"
printf '#include "qw.h"\nint walk(void) { return qw(); }\n' > "$P/src/scan/walk.c"
# deepcode/dcx.c (a store) includes and calls qwen/qw (another store's)
printf '#include "qw.h"\nint dcx(void) { return qw(); }\n' > "$P/src/deepcode/dcx.c"
printf 'int low(void);\nint pure(void);\nint self_user(void);\nint walk(void);\nint dcx(void);\nint main(void) { return low() + pure() + self_user() + walk() + dcx(); }\n' \
        > "$P/src/cli/main.c"
printf '`low.[ch]`, `high.[ch]`, `a.[ch]`, `b.[ch]`, `pure.c`, `main.c`, `bad.c`, `qw.[ch]`, `walk.c`, `dcx.c`\n' > "$P/doc/architecture.md"
includes "$P" > "$T/p.inc"
planted "src/base/low (base/) -> src/cli/high (cli/, above): src/base/low.c:2 #include \"high.h\"" upward "$T/p.inc"
planted "circle between src/cli/a src/cli/b:" circles "$T/p.inc"
planted "src/scan/walk (scan/, store-neutral) -> src/qwen/qw (qwen/, a store): src/scan/walk.c:1 #include \"qw.h\"" crossing "$T/p.inc"
planted "src/deepcode/dcx (deepcode/, a store) -> src/qwen/qw (qwen/, another store): src/deepcode/dcx.c:1 #include \"qw.h\"" cross_store "$T/p.inc"
planted "src/cli/unused.c is not named" undocumented "$P" "$P/doc/architecture.md"
planted "src/cli/a.c does not open with" unheaded "$P"
planted "src/cli/a.h: other_fn() is not named after its file (a_)" unprefixed_inline "$P"
unprefixed_inline "$P" | grep 'a_ok' && fail "unprefixed_inline reports a prefixed function"
printf 'the rules: `self_fn()`, `unused.c`, `src/cli/high.[ch]`, `src/base/lo*.c`, `poll()`,\n`gone.c`, `src/cli/gone.h`, `gone_fn()`\n' > "$P/doc/named.md"
planted "named.md names gone.c, which" unnamed "$P" "$P/doc/named.md"
planted "named.md names src/cli/gone.h, which" unnamed "$P" "$P/doc/named.md"
planted "named.md names gone_fn(), which" unnamed "$P" "$P/doc/named.md"
unnamed "$P" "$P/doc/named.md" | grep -v 'gone' && fail "unnamed reports a name that exists"
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1 && command -v ar >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 &&
   ( cd "$P/src" && for f in base/low.c cli/high.c cli/a.c cli/b.c policy/pure.c cli/unused.c cli/main.c qwen/qw.c scan/walk.c deepcode/dcx.c; do
           "$cc" -O0 -Ibase -Icli -Iqwen -c "$f" -o "${f%.c}.o" || exit 1
     done && ar rc libplanted.a base/low.o cli/high.o cli/a.o cli/b.o policy/pure.o cli/unused.o qwen/qw.o scan/walk.o deepcode/dcx.o ) 2>/dev/null; then
        symbols "$P" "$P/src/libplanted.a" > "$T/p.lib"
        symbols "$P" "$P/src/libplanted.a" "$P/src/cli/main.o" > "$T/p.all"
        calls "$T/p.all" > "$T/p.call"
        planted "src/base/low (base/) -> src/cli/high (cli/, above): calls high()" layer_calls "$T/p.call"
        awk '{ print $1, $2, "calls " $3 "()" }' "$T/p.call" > "$T/p.callhow"
        planted "src/cli/a -> src/cli/b: calls b()" circles "$T/p.callhow"
        planted "src/scan/walk (scan/, store-neutral) -> src/qwen/qw (qwen/, a store): calls qw()" crossing "$T/p.callhow"
        planted "src/deepcode/dcx (deepcode/, a store) -> src/qwen/qw (qwen/, another store): calls qw()" cross_store "$T/p.callhow"
        planted "src/policy/pure.c uses open()" impure "$T/p.lib"
        planted "src/cli/unused.c: unused_fn() is used by nothing in qgc" unused_exports "$P" "$T/p.lib" "$T/p.all"
        planted "src/cli/unused.c: self_fn() is used only in its own file" unused_exports "$P" "$T/p.lib" "$T/p.all"
        planted "src/cli/unused.c: self_fn() is not named after its file (unused_)" unprefixed "$T/p.all"
        have_planted_objects=yes
else
        part_skipped "no C compiler, ar or nm to plant the rules on calls"
fi

# --- the source
S=$QGC_SRCDIR
check "no strerror() outside log.c" rule "$S" '(^|[^_a-z])strerror\(' log.c log.h
check "one FNV-1a" rule "$S" '1469598103934665603|14695981039346656037|cbf29ce484222325|1099511628211|100000001b3' hashmap.h hashmap.c
check "one days_from_civil" rule "$S" 'days_from_civil\(' js.c js.h
check "one UTF-8 decoder" rule "$S" '0xc2 && .*<= 0xdf' utf8.c
check "one id compare ignoring case" rule "$S" '(^|[^_a-z])(str(n)?casecmp|tolower)\('
check "every file of src/ is named in doc/architecture.md" undocumented "$S" "$S/doc/architecture.md"
check "every file of src/ opens with its name and what it owns" unheaded "$S"
check "every function a header defines is prefixed with its file's name" unprefixed_inline "$S"
check "every file and function DEVELOPERS.md names exists" unnamed "$S" "$S/DEVELOPERS.md"
check "every file and function doc/architecture.md names exists" unnamed "$S" "$S/doc/architecture.md"
includes "$S" > "$T/inc"
[ -s "$T/inc" ] || fail "no #include between the files of src/"
check "no #include of a folder above the file's ($LAYERS)" upward "$T/inc"
check "no #include of a store's header ($STORES) in $NEUTRAL" crossing "$T/inc"
check "no #include of one store's header in another store's folder ($STORES)" cross_store "$T/inc"
lib=${QGC_BUILDDIR:-}/libqgc.a
if [ -n "${have_planted_objects:-}" ] && [ -n "${QGC_BUILDDIR:-}" ] && [ -f "$lib" ]; then
        # qgc's main: the objects of src/ that are not in the library
        main_objs=$(ar t "$lib" | sort > "$T/members"
                    find "$QGC_BUILDDIR/src" -name '*.o' | while read -r o; do
                            grep -qxF "${o##*/}" "$T/members" || echo "$o"
                    done)
        [ -n "$main_objs" ] || fail "no object of qgc's main under $QGC_BUILDDIR/src"
        symbols "$S" "$lib" > "$T/lib"
        symbols "$S" "$lib" $main_objs > "$T/all"
        calls "$T/all" > "$T/call"
        [ -s "$T/call" ] || fail "nm found no call between the objects of libqgc.a"
        check "no call into a folder above the caller's" layer_calls "$T/call"
        awk '{ print $1, $2, "calls " $3 "()" }' "$T/call" | cat "$T/inc" - > "$T/edges"
        check "no circle between files (#include and calls)" circles "$T/edges"
        awk '{ print $1, $2, "calls " $3 "()" }' "$T/call" > "$T/callhow"
        check "no call into a store ($STORES) from $NEUTRAL" crossing "$T/callhow"
        check "no call from one store's folder into another's ($STORES)" cross_store "$T/callhow"
        check "the policy is pure: no I/O symbol in src/policy/" impure "$T/lib"
        check "no function exported for tests only" unused_exports "$S" "$T/lib" "$T/all"
        check "every exported function is prefixed with its file's name" unprefixed "$T/all"
else
        part_skipped "no libqgc.a (QGC_BUILDDIR), C compiler or nm: calls not checked"
        check "no circle between files (#include)" circles "$T/inc"
fi
[ -z "$broken" ] || fail "rules broken (see above)$broken"
finish
