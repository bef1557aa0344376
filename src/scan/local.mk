# src/scan/: read-only: the walk into the inventory and the passes over it.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/scan/enrich.c src/scan/enrich.h src/scan/hygiene-scan.c \
	src/scan/hygiene-stale.c src/scan/hygiene.c src/scan/hygiene.h src/scan/orphans.c \
	src/scan/orphans.h src/scan/scan-aggs.c src/scan/scan-aggs.h src/scan/scan.c src/scan/scan.h \
	src/scan/session-times.c src/scan/session-times.h src/scan/tree-size.c src/scan/tree-size.h
