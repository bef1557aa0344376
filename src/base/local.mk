# src/base/: libc plus one wrapper per external library; no Qwen words, no pipeline types.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/base/cold.c src/base/cold.h src/base/cold-restore.c src/base/cold-restore.h src/base/du.c src/base/du.h src/base/fs.c src/base/fs.h \
	src/base/hashmap.c src/base/hashmap.h src/base/journal.c src/base/journal.h src/base/js.c src/base/js.h src/base/json.c src/base/json.h \
	src/base/lock.c src/base/lock.h src/base/log.c src/base/log.h src/base/macro.h src/base/rm-rf.c \
	src/base/rm-rf.h src/base/session-times.c src/base/session-times.h src/base/sha256.c src/base/sha256.h src/base/strbuf.c src/base/strbuf.h src/base/strtable.h src/base/syncq.c \
	src/base/syncq.h src/base/text.c src/base/text.h src/base/utf8.c src/base/utf8.h src/base/util.c \
	src/base/util.h src/base/vec.h src/base/colddict/dict-1.inc
