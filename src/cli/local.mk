# src/cli/: the command line, root mode, metrics, show.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/cli/metrics.c src/cli/metrics.h src/cli/show.c src/cli/show.h \
	src/cli/users-path.c src/cli/users-path.h src/cli/users.c src/cli/users.h
