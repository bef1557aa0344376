# src/deepcode/: Deep Code's store: the project code, the index, the transcripts' ownership proof
# and checkpoints, its processes, the scan of a ~/.deepcode, the checkpoint repository's compaction.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/deepcode/dc-git.c src/deepcode/dc-git.h src/deepcode/dc-gitobj.c \
	src/deepcode/dc-gitobj.h src/deepcode/dc-index.c \
	src/deepcode/dc-archive.c src/deepcode/dc-archive.h \
	src/deepcode/dc-index.h src/deepcode/dc-messages.c src/deepcode/dc-messages.h \
	src/deepcode/dc-proc.c src/deepcode/dc-proc.h src/deepcode/dc-project.c src/deepcode/dc-project.h \
	src/deepcode/dc-reclaim.c src/deepcode/dc-reclaim.h \
	src/deepcode/dc-restore.c src/deepcode/dc-restore.h \
	src/deepcode/dc-delete.c src/deepcode/dc-delete.h src/deepcode/dc-run.c src/deepcode/dc-run.h \
	src/deepcode/dc-store.c src/deepcode/dc-store.h src/deepcode/deepcode-store.c \
	src/deepcode/deepcode-store.h
