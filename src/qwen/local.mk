# src/qwen/: Qwen Code's store: its files and rules: roots, settings, records, the usage file, claims, liveness, the ownership proof, shared-file edits, the walk of its trees and their hygiene, the recovery pass, the restore; qwen_store (store.h).
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/qwen/archive.c src/qwen/archive.h src/qwen/claims.c src/qwen/claims.h \
	src/qwen/cold-step.c src/qwen/cold-step.h src/qwen/enrich.c src/qwen/enrich.h \
	src/qwen/erase-edit.c src/qwen/erase-edit.h src/qwen/erase-splice.c src/qwen/erase-splice.h \
	src/qwen/erase.c src/qwen/erase.h src/qwen/hygiene-reclaim.c src/qwen/hygiene-reclaim.h \
	src/qwen/hygiene-scan.c src/qwen/hygiene-stale.c \
	src/qwen/hygiene.c src/qwen/hygiene.h src/qwen/json-input.c src/qwen/json-input.h \
	src/qwen/live.c src/qwen/live.h src/qwen/orphans.c src/qwen/orphans.h src/qwen/owner.c \
	src/qwen/owner.h src/qwen/qwen.c src/qwen/qwen.h src/qwen/qwen-batch.h src/qwen/qwen-commit.c \
	src/qwen/qwen-commit.h src/qwen/qwen-restore.c src/qwen/qwen-restore.h src/qwen/qwen-run.c src/qwen/qwen-run.h src/qwen/qwen-session.c \
	src/qwen/qwen-session.h src/qwen/qwen-steps.c src/qwen/qwen-steps.h \
	src/qwen/qwen-scan.c src/qwen/qwen-scan.h \
	src/qwen/qwen-store.c src/qwen/qwen-store.h src/qwen/qwen-times.c src/qwen/qwen-times.h \
	src/qwen/record.c src/qwen/record.h src/qwen/recover.c src/qwen/recover.h \
	src/qwen/recover-marker.c src/qwen/recover-marker.h \
	src/qwen/roots.c src/qwen/roots.h src/qwen/scan-aggs.c src/qwen/scan-aggs.h \
	src/qwen/settings.c src/qwen/settings.h \
	src/qwen/tree-size.c src/qwen/tree-size.h src/qwen/usage-append.c src/qwen/usage-append.h \
	src/qwen/usage-ahead.c src/qwen/usage-ahead.h src/qwen/usage-index.c src/qwen/usage-index.h src/qwen/usage.c src/qwen/usage.h
