# runtime-lib.sh: what the runtime-root tests share (sourced after lib.sh): a delete policy that
# reclaims old orphans, and q, qgc run on the tree in $T/home with no runtime settings from this
# environment (no QWEN_HOME, no QWEN_RUNTIME_DIR, no system settings or defaults).
cat > "$T/delete.conf" <<'CONF'
defaults = { action = "delete"; max-age = "2h"; min-age = "1h"; keep-latest = 0; min-idle = "1h";
             max-deletions = "off"; };
CONF

q() {
        HOME="$T/home" QWEN_HOME= QWEN_RUNTIME_DIR= QWEN_CODE_SYSTEM_DEFAULTS_PATH= \
                QWEN_CODE_SYSTEM_SETTINGS_PATH="$T/no-system.json" \
                run_qgc -c "$T/delete.conf" --now 2040-01-01T00:00:00Z "$@"
}
