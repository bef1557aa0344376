#!/bin/sh
# t-0600-completion: the bash completion, sourced into bash and called as bash would call it
# (COMP_WORDS, COMP_CWORD): commands, every long option of `qgc --help` and no other, -c files,
# -r directories, --log-target values, archived session ids after `restore` (from ~/.qwen,
# $QWEN_HOME or the -r directories); with and without the bash-completion library. The zsh
# completion parses, offers the same options and (with _arguments and _describe stubbed) the
# commands and archived ids. SKIP (77) without bash.
. "$(dirname "$0")/lib.sh"
: "${QGC_SRCDIR:?}"
command -v bash >/dev/null 2>&1 || skip "bash is not installed"
B="$QGC_SRCDIR/completion/qgc"
Z="$QGC_SRCDIR/completion/_qgc"

tree=$(make_tree tree)
mkdir -p "$T/home/.qwen" "$T/cwd/dir.d"
cp -a "$tree/." "$T/home/.qwen/"
touch "$T/cwd/a.conf" "$T/cwd/b.conf"
# a second archived id in the -r tree only
other="$T/other"
mkdir -p "$other/projects/-x/chats/archive"
echo '{}' > "$other/projects/-x/chats/archive/2b000000-0000-4000-8000-000000000000.jsonl"

# the user database the completion sees as root: none but the test's (an empty one here)
: > "$T/passwd.empty"
export PASSWD_FILE="$T/passwd.empty"

# complete LIB WORDS...: the candidates, sorted, one a line, for the command line WORDS (the
# last word is the one being completed). LIB: "lib" to load bash-completion first, else "bare".
complete_words() {
        lib=$1; shift
        (cd "$T/cwd" && HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= bash --norc --noprofile -c '
                if [ "$1" = lib ]; then . /usr/share/bash-completion/bash_completion || exit 99; fi
                # the user database, for the root-mode part: a file of the test when set
                if [ -n "${PASSWD_FILE-}" ]; then getent() { cat "$PASSWD_FILE"; }; fi
                . "$2" || exit 99
                shift 2
                COMP_WORDS=("$@")
                COMP_CWORD=$(($# - 1))
                COMP_LINE="$*"
                COMP_POINT=${#COMP_LINE}
                _qgc qgc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}" | sort -u | sed "/^$/d"
        ' sh "$lib" "$B" "$@")
}
# expect LIB "WORDS" "CANDIDATES": the candidates, space-separated and sorted
expect() {
        got=$(complete_words "$1" $2 | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$3" ] || fail "[$1] '$2': expected '$3', got '$got'"
}
# expect0 LIB "WORDS" "CANDIDATES": the same, completing an empty word after WORDS
expect0() {
        got=$(complete_words "$1" $2 '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$3" ] || fail "[$1] '$2 ': expected '$3', got '$got'"
}
# $2 with a trailing empty word: 'qgc ' completes an empty word
libs=bare
[ -f /usr/share/bash-completion/bash_completion ] && libs="bare lib"
ids="1a914264-8e49-442e-bc79-1cb2de9eae0c"
helpopts=$("$QGC" --help | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
[ -n "$helpopts" ] || fail "qgc --help lists no options"
for lib in $libs; do
        got=$(complete_words $lib qgc '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "check-config restore run status" ] || fail "[$lib] commands: got '$got'"
        got=$(complete_words $lib qgc -- | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$helpopts" ] || fail "[$lib] long options: '$got' is not qgc --help's '$helpopts'"
        expect $lib "qgc --dr" "--dry-run"
        expect $lib "qgc -n --all" "--all-users"
        got=$(complete_words $lib qgc -c '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "a.conf b.conf dir.d" ] || fail "[$lib] -c files: got '$got'"
        got=$(complete_words $lib qgc --config b | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "b.conf" ] || fail "[$lib] --config b: got '$got'"
        got=$(complete_words $lib qgc -r '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "dir.d" ] || fail "[$lib] -r directories: got '$got'"
        expect $lib "qgc --log-target j" "journal"
        got=$(complete_words $lib qgc restore '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$ids" ] || fail "[$lib] restore ids from ~/.qwen: got '$got', expected '$ids'"
        got=$(complete_words $lib qgc -q restore 1a | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$ids" ] || fail "[$lib] restore 1a: got '$got'"
        got=$(complete_words $lib qgc restore 9 | tr '\n' ' ' | sed 's/ $//')
        [ -z "$got" ] || fail "[$lib] restore 9: got '$got', expected nothing"
        got=$(complete_words $lib qgc -r "$other" restore '' | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "2b000000-0000-4000-8000-000000000000" ] || fail "[$lib] restore with -r: got '$got'"
        got=$(complete_words $lib qgc restore "$ids" '' | tr '\n' ' ' | sed 's/ $//')
        [ -z "$got" ] || fail "[$lib] after restore ID: got '$got', expected nothing"
        got=$(complete_words $lib qgc status '' | tr '\n' ' ' | sed 's/ $//')
        [ -z "$got" ] || fail "[$lib] after status: got '$got', expected nothing"
        expect $lib "qgc check-config --ex" "--explain"
done
pass "bash completion ($libs): commands, options, files, directories, archived ids"

# root (issue 24.7): restore offers the archived ids of every user whose home holds a tree (of
# the --user NAMEs only, when given), and --user only those users, not every account
if [ "$(id -u)" != 0 ]; then
        part_skipped "root's completion (not root)"
else
        mkdir -p "$T/h1/.qwen/projects/-a/chats/archive" "$T/h2" "$T/h3/.qwen/projects/-b/chats/archive"
        echo '{}' > "$T/h1/.qwen/projects/-a/chats/archive/5a000000-0000-4000-8000-000000000001.jsonl"
        echo '{}' > "$T/h3/.qwen/projects/-b/chats/archive/5a000000-0000-4000-8000-000000000003.jsonl"
        {
                echo "root:x:0:0:root:$T/home:/bin/bash"
                echo "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin"
                echo "uone:x:1001:1001::$T/h1:/bin/sh"
                echo "utwo:x:1002:1002:no tree:$T/h2:/bin/sh"
                echo "uthree:x:1003:1003::$T/h3:/bin/sh"
        } > "$T/passwd"
        export PASSWD_FILE="$T/passwd"
        for lib in $libs; do
                expect0 $lib "qgc --user" "root uone uthree"
                expect $lib "qgc --user u" "uone uthree"
                expect0 $lib "qgc restore" \
                        "$ids 5a000000-0000-4000-8000-000000000001 5a000000-0000-4000-8000-000000000003"
                expect0 $lib "qgc --all-users restore" \
                        "$ids 5a000000-0000-4000-8000-000000000001 5a000000-0000-4000-8000-000000000003"
                expect0 $lib "qgc --user uthree restore" "5a000000-0000-4000-8000-000000000003"
                expect0 $lib "qgc --user utwo restore" ""
        done
        PASSWD_FILE="$T/passwd.empty"
        pass "bash completion as root: every tree user's archived ids, --user lists users with trees"
fi

# zsh: the file parses and names the same options
if command -v zsh >/dev/null 2>&1; then
        zsh -n "$Z" || fail "_qgc does not parse"
        for o in $helpopts; do
                grep -q -- "$o" "$Z" || fail "_qgc does not offer $o"
        done
        head -1 "$Z" | grep -qx '#compdef qgc' || fail "_qgc has no #compdef line"
        # the states, with _arguments and _describe stubbed: what _qgc offers in each
        zstate() { # STATE LINE1 OPT_R: the candidates _qgc hands to _describe
                (cd "$T/cwd" && HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= zsh -f -c '
                        st=$1 l1=$2 r=$3 z=$4
                        # _arguments fills _qgc'"'"'s own opt_args, as the real one does
                        _arguments() { state=$st; line=($l1); [[ -n $r ]] && opt_args[-r]=$r; return 1 }
                        _describe() { print -l -- ${(P)${@[-1]}} }
                        getent() { cat $PASSWD_FILE }
                        words=($l1 ""); CURRENT=2
                        source $z' zsh "$1" "$2" "$3" "$Z" | sed 's/:.*//' | sort | tr '\n' ' ' | sed 's/ $//')
        }
        got=$(zstate command qgc "")
        [ "$got" = "check-config restore run status" ] || fail "zsh commands: got '$got'"
        got=$(zstate args restore "")
        [ "$got" = "$ids" ] || fail "zsh restore ids: got '$got'"
        got=$(zstate args restore "$other")
        [ "$got" = "2b000000-0000-4000-8000-000000000000" ] || fail "zsh restore ids with -r: got '$got'"
        if [ "$(id -u)" = 0 ]; then # root: every tree user's archived ids (issue 24.7)
                got=$(PASSWD_FILE="$T/passwd" zstate args restore "")
                [ "$got" = "$ids 5a000000-0000-4000-8000-000000000001 5a000000-0000-4000-8000-000000000003" ] ||
                        fail "zsh restore ids as root: got '$got'"
        fi
        pass "zsh completion parses, offers every option of qgc --help, the commands and archived ids"
fi
finish
