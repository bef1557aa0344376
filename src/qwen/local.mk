# src/qwen/: Qwen Code's files and rules: roots, settings, records, the usage file, claims, liveness, the ownership proof, shared-file edits.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/qwen/qwen.c src/qwen/qwen.h src/qwen/jsonfile.c src/qwen/record.c \
	src/qwen/record.h src/qwen/record-int.h src/qwen/recordhead.c src/qwen/recordtail.c \
	src/qwen/roots.c src/qwen/roots.h src/qwen/roots-int.h src/qwen/roots-workspace.c \
	src/qwen/settings.c src/qwen/settings.h src/qwen/owner.c src/qwen/owner.h \
	src/qwen/live.c src/qwen/live.h \
	src/qwen/claims.c src/qwen/claims.h src/qwen/usage.c src/qwen/usage.h src/qwen/usage-int.h \
	src/qwen/usagerecord.c src/qwen/usageidx.c src/qwen/usageidx.h src/qwen/usageidx-int.h \
	src/qwen/usageappend.c src/qwen/usagehistory.c src/qwen/erase.c src/qwen/erase.h \
	src/qwen/erase-edit.c src/qwen/erase-edit.h src/qwen/erase-splice.c src/qwen/erase-splice.h
