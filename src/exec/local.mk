# src/exec/: the executor: a plan carried out through each store's run operations, journalled.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/exec/actions-int.h \
	src/exec/actions-orphan.c src/exec/actions-report.c src/exec/actions-store.c src/exec/actions.c \
	src/exec/actions.h
